"""arXiv look-ups through the ``arxiv`` package, at the URL and pace the settings give.

One :class:`ArxivSource` per process: its client keeps arXiv's pace (a request at most
every ``delay`` seconds, 3 by arXiv's API terms of use) across every look-up the process
makes. Records come back as :class:`ArxivRecord`, whitespace collapsed and capped.
A connection failure, a time-out or a 5xx is :class:`ArxivUnavailable` (the caller keeps
the suggestion and tries again later); a paper arXiv does not have is ``None``.

Only the ``arxiv`` package's public API is used (tested with arxiv 4.0): ``Client``'s
documented options (``page_size``, ``delay_seconds``, ``num_retries``, and the
``query_url_format`` attribute it documents as the endpoint), ``Client.results``,
``Search``, ``SortCriterion``, ``Result`` and its errors. The client has no time-out
option (its requests session is private), so a look-up runs on a daemon thread and the
caller waits for it at most ``timeout`` seconds: past that, arXiv counts as not answering.
A look-up still waiting holds the source (one look-up in flight per process, as arXiv's
pace wants) until it ends, and never keeps the process from exiting.
"""

from __future__ import annotations

import threading
import time
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


def _clip(text: str, cap: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= cap else text[: cap - 1].rstrip() + "…"


def to_record(result: arxiv.Result) -> ArxivRecord:
    short = result.get_short_id()
    arxiv_id = short.rsplit("v", 1)[0] if "v" in short else short
    names = [_clip(a.name, AUTHOR_NAME_CAP) for a in result.authors]
    published = result.published if result.published and result.published.year > 1 else None
    return ArxivRecord(
        arxiv_id=arxiv_id,
        title=_clip(result.title, TITLE_CAP) or arxiv_id,
        authors=names[:AUTHOR_CAP],
        more_authors=max(0, len(names) - AUTHOR_CAP),
        year=published.year if published else None,
        published=published,
        abstract=_clip(result.summary, ABSTRACT_CAP),
        categories=[_clip(c, 40) for c in result.categories[:CATEGORY_CAP]],
        primary_category=_clip(result.primary_category, 40) or None,
    )


class ArxivSource:
    """Look papers up by id, or search, at arXiv's pace; thread-safe (one request at a time)."""

    def __init__(
        self, url: str = DEFAULT_URL, delay: float = 3.0, timeout: float = 10.0, retries: int = 1
    ):
        self.client = arxiv.Client(page_size=100, delay_seconds=delay, num_retries=retries)
        # The package documents this attribute as its endpoint; a stand-in (tests) or a mirror
        # replaces it.
        self.client.query_url_format = url.rstrip("?") + "?{}"
        self.timeout = timeout
        self._busy = threading.Lock()  # held by the look-up in flight, released when it ends

    def fetch(self, arxiv_id: str) -> ArxivRecord | None:
        """The paper with this id, None when arXiv has none."""
        found = self._run(arxiv.Search(id_list=[arxiv_id], max_results=1), arxiv_id)
        return found[0] if found else None

    def search(self, query: str, max_results: int) -> list[ArxivRecord]:
        """The newest papers matching an arXiv query
        (``cat:cs.LG AND abs:reward``), newest first.
        """
        search = arxiv.Search(
            query=query, max_results=max_results, sort_by=arxiv.SortCriterion.SubmittedDate
        )
        return self._run(search, query)

    def _run(self, search: arxiv.Search, what: str) -> list[ArxivRecord]:
        deadline = time.monotonic() + self.timeout
        if not self._busy.acquire(timeout=self.timeout):
            raise ArxivUnavailable(
                f"arXiv is not answering (an earlier look-up has waited over {self.timeout:g} s)"
            )
        done = threading.Event()
        outcome: dict[str, Any] = {}

        def look_up() -> None:
            try:
                outcome["results"] = list(self.client.results(search))
            except Exception as exc:  # noqa: BLE001 - handed to the caller, to say what it means
                outcome["error"] = exc
            finally:
                self._busy.release()
                done.set()

        threading.Thread(target=look_up, name="rlmap-arxiv", daemon=True).start()
        if not done.wait(max(deadline - time.monotonic(), 0.0)):
            raise ArxivUnavailable(f"arXiv is not answering (no answer within {self.timeout:g} s)")
        error = outcome.get("error")
        if isinstance(error, arxiv.HTTPError):
            if error.status == 400:
                raise UsageError(f"arXiv says {shown(what)!r} is not an id or query it understands")
            raise ArxivUnavailable(f"arXiv answered HTTP {error.status}")
        if isinstance(error, (requests.RequestException, arxiv.UnexpectedEmptyPageError)):
            raise ArxivUnavailable(f"arXiv is not answering ({type(error).__name__})")
        if error is not None:
            raise error
        return [to_record(r) for r in outcome["results"] if "/api/errors" not in r.entry_id]
