"""A local stand-in for the arXiv API, serving the real responses recorded under tests/data/arxiv/.

``id_list=ID`` is answered with the recorded feed for that id when there is one, else with the
recorded entry of that id from a recorded search feed (put in the recorded empty feed's
envelope, totalResults 1), else with arXiv's recorded answer to an unknown id (an empty feed);
an id arXiv would not parse gets its recorded 400. ``search_query`` is answered with the
recorded search feed (its total cut to the 100 recorded results). Tests
can take it down (connections reset), make it slow, or add an entry
of their own (a variant of a real one: a 5 MB abstract, markup in a title).
"""

from __future__ import annotations

import re
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from support.localserver import LocalServer

DATA = Path(__file__).resolve().parent.parent / "data" / "arxiv"
_ENTRY = re.compile(r"  <entry>.*?</entry>\n", re.S)
_ID = re.compile(r"<id>https?://arxiv\.org/abs/([^<]+?)(v\d+)?</id>")
NEW_ID = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")


def recorded(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def entries(feed: str) -> dict[str, str]:
    """The entries of a recorded feed by arXiv id (no version)."""
    out = {}
    for block in _ENTRY.findall(feed):
        found = _ID.search(block)
        if found:
            out[found.group(1)] = block
    return out


class ArxivStandIn(LocalServer):
    def __init__(self) -> None:
        self.search_feed = recorded("query_testing.xml")
        self.known = entries(self.search_feed)
        self.known.update(entries(recorded("id_1707.08567.xml")))
        self.known.update(entries(recorded("id_1605.08386.xml")))
        self.extra: dict[str, str] = {}
        self.down = False
        self.slow = 0.0
        self.requests: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    def start(self) -> ArxivStandIn:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                query = dict(
                    urllib.parse.parse_qsl(
                        urllib.parse.urlsplit(self.path).query, keep_blank_values=True
                    )
                )
                with standin._lock:
                    standin.requests.append(query)
                    standin._changed.notify_all()
                if standin.down:
                    self.close_connection = True
                    self.connection.shutdown(
                        2
                    )  # no answer at all: a reset, as an unreachable host gives
                    return
                if standin.slow:
                    time.sleep(standin.slow)
                status, body = standin.answer(query)
                data = body.encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/atom+xml; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a time-out test)

        self.serve(Handler)
        return self

    @property
    def url(self) -> str:
        return self.origin + "/api/query"

    def answer(self, query: dict[str, str]) -> tuple[int, str]:
        ids = [i for i in query.get("id_list", "").split(",") if i]
        if not ids:  # a search: the recorded 100 results are all this stand-in has, so it says so
            return 200, re.sub(
                r"<opensearch:totalResults>\d+",
                f"<opensearch:totalResults>{len(entries(self.search_feed))}",
                self.search_feed,
            )
        wanted = ids[0]
        if not NEW_ID.match(wanted) and "/" not in wanted:
            return 400, recorded("malformed_abc.xml").replace("abc", wanted)
        plain = wanted.split("v")[0]
        exact = DATA / f"id_{plain}.xml"
        if exact.exists():
            return 200, exact.read_text(encoding="utf-8")
        block = self.extra.get(plain) or self.known.get(plain)
        empty = recorded("unknown_0000.0000.xml").replace("0000.0000", plain)
        if block is None:
            return 200, empty
        return 200, empty.replace(
            "<opensearch:totalResults>0", "<opensearch:totalResults>1"
        ).replace("</feed>", block + "</feed>")

    def variant(
        self, source_id: str, new_id: str, title: str | None = None, abstract: str | None = None
    ) -> None:
        """A test's own entry: a real recorded one under
        a new id, with its title or abstract replaced.
        """
        block = self.known[source_id].replace(source_id, new_id)
        if title is not None:
            block = re.sub(
                r"<title>.*?</title>",
                lambda _: f"<title>{_xml(title)}</title>",
                block,
                count=1,
                flags=re.S,
            )
        if abstract is not None:
            block = re.sub(
                r"<summary>.*?</summary>",
                lambda _: f"<summary>{_xml(abstract)}</summary>",
                block,
                count=1,
                flags=re.S,
            )
        self.extra[new_id] = block

    def id_requests(self, arxiv_id: str) -> int:
        with self._lock:
            return sum(1 for q in self.requests if arxiv_id in q.get("id_list", ""))

    def wait_for_request(self, arxiv_id: str, count: int = 1, timeout: float = 15.0) -> None:
        deadline = time.time() + timeout
        with self._lock:
            while sum(1 for q in self.requests if arxiv_id in q.get("id_list", "")) < count:
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError(
                        f"arXiv was not asked for {arxiv_id} {count} time(s) within {timeout}s"
                    )
                self._changed.wait(left)


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
