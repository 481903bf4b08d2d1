"""W&B's server, as far as ``wandb.Api().run(PATH).scan_history(min_step=...)`` uses it.

Found by pointing wandb 0.31's public API at a recording server: the client (through its
wandb-core service) sends the GraphQL queries ``Viewer`` and ``GetDefaultEntity`` (logging in),
``Run`` and ``RunHistoryKeys`` (the run and its last step), ``Runs`` (a project's runs, filtered
and ordered, for a project or group compared), ``RunParquetHistory`` (exported
history files and the live steps) and ``HistoryPage`` (rows between two steps), and posts its own
telemetry to ``/sdk/otel/...``. This answers those from runs held in memory; anything else is a
GraphQL error, so a new query the client starts sending fails the tests instead of passing unseen.

``history`` is a list of row dicts (``_step`` and metrics) that a test appends to while a reader
polls; ``rate_limited`` answers that many requests with HTTP 429 first; ``api_key`` is the only key
it accepts (HTTP basic auth, user ``api``).
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from support.localserver import LocalServer


class WandbStandIn(LocalServer):
    def __init__(self, api_key: str, entity: str = "team"):
        self.api_key = api_key
        self.entity = entity
        self.runs: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (project, run id) -> rows
        self.about: dict[tuple[str, str], dict[str, Any]] = {}  # state, group, name, created
        self.queries: list[str] = []  # the operation names received, in order
        self.history_pages: list[tuple[int, int]] = []  # (minStep, maxStep) of each HistoryPage
        self.rate_limited = 0
        self.lock = threading.Lock()

    def start(self) -> WandbStandIn:
        self.serve(_handler(self))
        return self

    def add_run(
        self,
        project: str,
        run_id: str,
        rows: list[dict[str, Any]],
        state: str = "running",
        group: str | None = None,
        name: str | None = None,
        created: str = "2026-01-01T00:00:00",
    ) -> list[dict[str, Any]]:
        """A run; ``state``, ``group``, ``name`` (its display name) and ``created`` (ISO time) are
        what a project's run list shows and filters on."""
        self.runs[(project, run_id)] = rows
        self.about[(project, run_id)] = {
            "state": state,
            "group": group,
            "name": name or run_id,
            "created": created,
        }
        return rows

    def _node(self, project: str, run_id: str) -> dict[str, Any]:
        """A run as the LightweightRunFragment of ``Runs`` asks for it."""
        about = self.about[(project, run_id)]
        return {
            "projectId": 1,
            "id": "UnVuOjE=",
            "tags": [],
            "name": run_id,
            "displayName": about["name"],
            "sweepName": None,
            "state": about["state"],
            "group": about["group"],
            "jobType": None,
            "commit": None,
            "readOnly": False,
            "createdAt": about["created"],
            "heartbeatAt": about["created"],
            "description": None,
            "notes": None,
            "historyLineCount": len(self.runs[(project, run_id)]),
            "user": {"name": "tester", "username": "tester"},
        }

    def _listed(self, variables: dict[str, Any]) -> dict[str, Any]:
        """``Runs``: a project's runs filtered (by state ``$in`` and group, the filters the bot
        sends; any other filter is an error, so a new one fails the tests), ordered by creation
        time, one page of ``perPage`` after ``cursor`` (a run's index as text)."""
        project = str(variables["project"])
        filters = json.loads(variables.get("filters") or "{}")
        unknown = set(filters) - {"state", "group"}
        if unknown:
            raise KeyError(f"Runs filters {sorted(unknown)}")
        ids = [rid for (p, rid) in self.runs if p == project]
        if not ids:
            return {"project": None}
        states = (filters.get("state") or {}).get("$in")
        chosen = [
            rid
            for rid in ids
            if (states is None or self.about[(project, rid)]["state"] in states)
            and ("group" not in filters or self.about[(project, rid)]["group"] == filters["group"])
        ]
        order = str(variables.get("order") or "+created_at")
        chosen.sort(key=lambda rid: self.about[(project, rid)]["created"])
        if order.startswith("-"):
            chosen.reverse()
        start = int(variables.get("cursor") or 0)
        size = int(variables.get("perPage") or 50)
        page = chosen[start : start + size]
        edges = [
            {"node": self._node(project, rid), "cursor": str(start + i + 1)}
            for i, rid in enumerate(page)
        ]
        return {
            "project": {
                "internalId": "UHJvamVjdDox",
                "runCount": len(chosen),
                "readOnly": False,
                "runs": {
                    "edges": edges,
                    "pageInfo": {
                        "endCursor": str(start + len(page)),
                        "hasNextPage": start + len(page) < len(chosen),
                    },
                },
            }
        }

    # -- answers -------------------------------------------------------------------------------
    def answer(self, name: str, variables: dict[str, Any]) -> dict[str, Any]:
        if name == "Viewer":
            return {
                "viewer": {
                    "id": "VXNlcjox",
                    "entity": self.entity,
                    "username": "tester",
                    "email": "tester@example.com",
                    "flags": "{}",
                    "teams": {"edges": []},
                }
            }
        if name == "GetDefaultEntity":
            return {"viewer": {"id": "VXNlcjox", "entity": self.entity}}
        if name == "Runs":
            return self._listed(variables)
        project = variables.get("project")
        run_id = variables.get("name") or variables.get("runName") or variables.get("run")
        rows = self.runs.get((str(project), str(run_id)))
        if rows is None:
            return {"project": {"run": None}}
        last = max((int(r["_step"]) for r in rows), default=-1)
        keys = {"lastStep": last, "keys": {}}
        if name == "Run":
            return {
                "project": {
                    "run": {
                        "id": "UnVuOjE=",
                        "projectId": 1,
                        "tags": [],
                        "name": run_id,
                        "displayName": self.about[(str(project), str(run_id))]["name"],
                        "sweepName": None,
                        "state": self.about[(str(project), str(run_id))]["state"],
                        "config": "{}",
                        "group": self.about[(str(project), str(run_id))]["group"],
                        "jobType": None,
                        "commit": None,
                        "readOnly": False,
                        "createdAt": "2026-01-01T00:00:00",
                        "heartbeatAt": "2026-01-01T00:00:00",
                        "description": None,
                        "notes": None,
                        "systemMetrics": "{}",
                        "summaryMetrics": "{}",
                        "historyLineCount": len(rows),
                        "user": {"name": "tester", "username": "tester"},
                        "historyKeys": keys,
                    }
                }
            }
        if name == "RunHistoryKeys":
            return {"project": {"run": {"historyKeys": keys}}}
        if name == "RunParquetHistory":  # nothing exported to files: every row is live
            live = [{"_step": int(r["_step"])} for r in rows]
            return {"project": {"run": {"parquetHistory": {"parquetUrls": [], "liveData": live}}}}
        if name == "HistoryPage":
            low, high = int(variables["minStep"]), int(variables["maxStep"])
            self.history_pages.append((low, high))
            page = [r for r in rows if low <= int(r["_step"]) < high][: int(variables["pageSize"])]
            return {"project": {"run": {"history": [json.dumps(r) for r in page]}}}
        raise KeyError(name)


def _operation(query: str) -> str:
    head = query.replace("#graphql", "").strip()
    for word in ("query", "mutation"):
        if head.startswith(word):
            return head[len(word) :].strip().split("(")[0].split("{")[0].strip()
    return ""


def _handler(standin: WandbStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(
            self, code: int, body: dict | None = None, headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(body or {}).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.startswith("/sdk/otel/"):
                self._send(200)  # the client's own telemetry
                return
            if self.headers.get("Content-Encoding") == "gzip":
                raw = gzip.decompress(raw)
            with standin.lock:
                if standin.rate_limited > 0:
                    standin.rate_limited -= 1
                    self._send(
                        429, {"errors": [{"message": "rate limit exceeded"}]}, {"Retry-After": "1"}
                    )
                    return
            expected = "Basic " + base64.b64encode(f"api:{standin.api_key}".encode()).decode()
            if self.headers.get("Authorization") != expected:
                self._send(401, {"errors": [{"message": "user is not logged in"}]})
                return
            body = json.loads(raw or b"{}")
            name = _operation(body.get("query", ""))
            standin.queries.append(name)
            try:
                data = standin.answer(name, body.get("variables") or {})
            except KeyError:
                self._send(200, {"errors": [{"message": f"the stand-in does not answer {name!r}"}]})
                return
            self._send(200, {"data": data})

    return Handler
