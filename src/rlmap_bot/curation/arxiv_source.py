"""arXiv look-ups through the ``arxiv`` package, at the URL and pace the settings give.

One :class:`ArxivSource` per process: its client keeps arXiv's pace (a request at most
every ``delay`` seconds, 3 by arXiv's API terms of use) across every look-up the process
makes. Records come back as :class:`ArxivRecord`, whitespace collapsed and capped.
A connection failure, a time-out or a 5xx is :class:`ArxivUnavailable` (the caller keeps
the suggestion and tries again later); a paper arXiv does not have is ``None``.
"""

from __future__ import annotations

import threading
from typing import Any

import arxiv
import requests

from rlmap_bot.curation.ids import shown
from rlmap_bot.errors import UnavailableError, UsageError
from rlmap_bot.results.curation import (
    ABSTRACT_CAP,
    AUTHOR_CAP,
    AUTHOR_NAME_CAP,
    CATEGORY_CAP,
    TITLE_CAP,
    ArxivRecord,
)

DEFAULT_URL = "https://export.arxiv.org/api/query"


class ArxivUnavailable(UnavailableError):
    """arXiv did not answer (down, slow, or a server error): try again later."""


class _TimedSession(requests.Session):
    """The arxiv client's session with a time-out on every request (the package sets none)."""

    def __init__(self, timeout: float):
        super().__init__()
        self.timeout = timeout

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        kwargs.setdefault("timeout", self.timeout)
        return super().request(method, url, *args, **kwargs)


def _clip(text: str, cap: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= cap else text[: cap - 1].rstrip() + "…"


def to_record(result: arxiv.Result) -> ArxivRecord:
    short = result.get_short_id()
    arxiv_id = short.rsplit("v", 1)[0] if "v" in short else short
    names = [_clip(a.name, AUTHOR_NAME_CAP) for a in result.authors]
    published = result.published if result.published and result.published.year > 1 else None
    return ArxivRecord(
        arxiv_id=arxiv_id, title=_clip(result.title, TITLE_CAP) or arxiv_id, authors=names[:AUTHOR_CAP],
        more_authors=max(0, len(names) - AUTHOR_CAP), year=published.year if published else None,
        published=published, abstract=_clip(result.summary, ABSTRACT_CAP),
        categories=[_clip(c, 40) for c in result.categories[:CATEGORY_CAP]],
        primary_category=_clip(result.primary_category, 40) or None,
    )


class ArxivSource:
    """Look papers up by id, or search, at arXiv's pace; thread-safe (one request at a time)."""

    def __init__(self, url: str = DEFAULT_URL, delay: float = 3.0, timeout: float = 10.0, retries: int = 1):
        self.client = arxiv.Client(page_size=100, delay_seconds=delay, num_retries=retries)
        # The package reads its endpoint from this attribute; a stand-in (tests) or a mirror replaces it.
        self.client.query_url_format = url.rstrip("?") + "?{}"
        self.client._session = _TimedSession(timeout)  # noqa: SLF001 - the only way to give its requests a time-out
        self._lock = threading.Lock()

    def fetch(self, arxiv_id: str) -> ArxivRecord | None:
        """The paper with this id, None when arXiv has none."""
        found = self._run(arxiv.Search(id_list=[arxiv_id], max_results=1), arxiv_id)
        return found[0] if found else None

    def search(self, query: str, max_results: int) -> list[ArxivRecord]:
        """The newest papers matching an arXiv query (``cat:cs.LG AND abs:reward``), newest first."""
        search = arxiv.Search(query=query, max_results=max_results, sort_by=arxiv.SortCriterion.SubmittedDate)
        return self._run(search, query)

    def _run(self, search: arxiv.Search, what: str) -> list[ArxivRecord]:
        with self._lock:
            try:
                results = list(self.client.results(search))
            except arxiv.HTTPError as exc:
                if exc.status == 400:
                    raise UsageError(f"arXiv says {shown(what)!r} is not an id or query it understands") from None
                raise ArxivUnavailable(f"arXiv answered HTTP {exc.status}") from None
            except (requests.RequestException, arxiv.UnexpectedEmptyPageError) as exc:
                raise ArxivUnavailable(f"arXiv is not answering ({type(exc).__name__})") from None
        return [to_record(r) for r in results if "/api/errors" not in r.entry_id]
