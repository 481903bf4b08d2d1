"""``mlflow:RUN_ID`` against ``MLFLOW_TRACKING_URI``: a
tracking server's REST API, or a ``sqlite:///`` store.

Neither path imports mlflow: the server is plain JSON over HTTP (urllib), the store is read with
sqlite3, read-only. A check reads only the steps past the cursor, metric by metric:

- **server**: ``runs/get`` lists every metric with its latest step (one request when nothing is
  new); each kept metric with newer steps is read with ``metrics/get-history-bulk-interval``
  over ``[last + 1, latest]`` in windows. That endpoint samples a range holding more rows than
  ``max_results`` (2,500, the server's per-run cap in mlflow/server/handlers.py), so a window
  that comes back full is halved and read again: every row is read, none sampled. A server
  without it (404) is read with ``metrics/get-history`` and filtered by step.
- **store**: ``latest_metrics`` gives each metric's latest step; ``metrics`` is read with
  ``WHERE run_uuid = ? AND key = ? AND step > ?``, a range scan of MLflow's own index
  ``index_metrics_run_uuid_key_step (run_uuid, key, step)``: a check costs one index seek per
  kept metric plus the new rows, whatever the run's length.

MLflow's SQL store writes NaN as 0 with ``is_nan`` set and clamps +-inf to the largest double;
the REST API sends NaN as the string ``"NaN"`` and infinities clamped. Both are read back as
NaN and +-inf. A step logged twice keeps the value logged last (by timestamp).
"""

from __future__ import annotations

import math
import sqlite3
import urllib.parse
from pathlib import Path
from typing import Callable

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import Collector, RunData
from rlmap_bot.runs.sources import (
    Cursor,
    ListedRun,
    RunList,
    RunSource,
    SourceRef,
    describe,
    register,
    register_lister,
)
from rlmap_bot.runs.sources.access import Access, allowed, check_store
from rlmap_bot.runs.sources.remote import (
    Http,
    bearer_or_basic,
    host_of,
    open_store,
    origin,
    tracker_value,
)

Keep = Callable[[str], bool]
#: The server's largest ``max_results`` per run for get-history-bulk-interval (MAX_RESULTS_PER_RUN).
MAX_RESULTS = 2500
#: get-history's page size (the server's own cap for one page is 25,000).
HISTORY_PAGE = 25000


@register("mlflow")
def open_mlflow(ref: SourceRef, access: Access) -> RunSource:
    run_id = ref.target.strip()
    uri, store = _where(ref, access)
    if store is None:
        return MlflowServer(ref, run_id, uri, access.credentials)
    return MlflowStore(ref, run_id, store)


def _where(ref: SourceRef, access: Access) -> tuple[str, Path | None]:
    """The tracking URI and, for a ``sqlite:///`` store, its file, when ``access`` allows it (an
    allowed host, a store inside the run roots); one line when not."""
    uri = (access.environ.get("MLFLOW_TRACKING_URI") or "").strip()
    if not uri:
        raise RunReadError(
            f"{ref.text}: set MLFLOW_TRACKING_URI to the tracking server (http://HOST:PORT) or the "
            f"store (sqlite:///mlflow.db) the run is in"
        )
    if uri.startswith(("http://", "https://")):
        host, port = host_of(uri)
        if not (
            allowed(host, access.mlflow_hosts) or allowed(f"{host}:{port}", access.mlflow_hosts)
        ):
            raise RunReadError(
                f"{ref.text}: the MLflow host {host} is not one this workspace may read "
                "(RLMAP_MLFLOW_HOSTS); nothing is read"
            )
        if "MLFLOW_TRACKING_TOKEN" in access.unopened:
            raise RunReadError(f"{ref.text}: {access.unopened['MLFLOW_TRACKING_TOKEN']}")
        return uri, None
    if uri.startswith("sqlite:"):
        path = Path(urllib.parse.urlsplit(uri).path[1:] or "mlflow.db")
        check_store(path, access, "MLFLOW_TRACKING_URI", ref.text)
        return uri, path
    raise RunReadError(
        f"{ref.text}: MLFLOW_TRACKING_URI must be an http(s):// tracking server or a sqlite:/// "
        f"store; {urllib.parse.urlsplit(uri).scheme or 'a plain path'} stores are not read here"
    )


#: MLflow's run statuses worth comparing: a failed or killed run's curve stops early.
LISTED_STATUSES = ("FINISHED", "RUNNING")
#: Runs a listing reads to count them, newest first (runs/search allows 50,000 a page). Judgement:
#: one page is enough for a count said beside eight runs; an experiment past a thousand runs is
#: counted as a thousand (a known undercount, said here).
COUNTED = 1000


@register_lister("mlflow")
def list_mlflow(ref: SourceRef, access: Access, limit: int) -> RunList:
    """The most recent finished or running runs of an MLflow experiment, named or by id, newest
    first (deleted runs left out), from the server's REST API or the store."""
    uri, store = _where(ref, access)
    if store is None:
        found = _server_runs(ref, uri, access.credentials)
    else:
        found = _store_runs(ref, store)
    listed = [
        ListedRun(source=f"mlflow:{rid}", name=name or rid, state=status.lower())
        for rid, name, status in found
        if status in LISTED_STATUSES
    ]
    return RunList(
        source=ref.text,
        what=describe(ref),
        runs=listed[:limit],
        total=len(listed),
        which="finished or running",
    )


def _server_runs(
    ref: SourceRef, uri: str, credentials: dict[str, str]
) -> list[tuple[str, str, str]]:
    """(run id, run name, status) of the experiment's active runs, newest first."""
    http = MlflowServer(ref, "", uri, credentials).http
    name = ref.target
    try:
        found = http.get("/api/2.0/mlflow/experiments/get-by-name", {"experiment_name": name})
    except RunReadError as exc:
        if exc.status != 404:
            raise
        if not name.isdigit():
            raise RunReadError(f"{ref.text}: {http.what} has no experiment {name!r}") from None
        found = http.get("/api/2.0/mlflow/experiments/get", {"experiment_id": name})
    experiment = found.get("experiment", {}).get("experiment_id")
    page = http.post(
        "/api/2.0/mlflow/runs/search",
        {
            "experiment_ids": [experiment],
            "run_view_type": "ACTIVE_ONLY",
            "order_by": ["attributes.start_time DESC"],
            "max_results": COUNTED,
        },
    )
    return [
        (
            r["info"]["run_id"],
            r["info"].get("run_name") or "",
            r["info"].get("status") or "",
        )
        for r in page.get("runs", [])
    ]


def _store_runs(ref: SourceRef, path: Path) -> list[tuple[str, str, str]]:
    """(run id, run name, status) of the experiment's active runs in the store, newest first."""
    conn = MlflowStore(ref, "", path).connect()
    try:
        # By name first; an id (digits) when no experiment has that name.
        query = "select experiment_id from experiments where name = ? or experiment_id = ?"
        row = conn.execute(
            f"{query} order by name = ? desc limit 1", (ref.target, ref.target, ref.target)
        ).fetchone()
        if row is None:
            raise RunReadError(
                f"{ref.text}: no experiment {ref.target!r} in the MLflow store {path}"
            )
        rows = conn.execute(
            "select run_uuid, name, status from runs where experiment_id = ? and lifecycle_stage = "
            "'active' order by start_time desc limit ?",
            (row[0], COUNTED),
        )
        return [(rid, name or "", status or "") for rid, name, status in rows]
    except sqlite3.Error as exc:
        raise RunReadError(
            f"{ref.text}: cannot read the MLflow store {path} ({exc}); the read can be retried"
        ) from None
    finally:
        conn.close()


def _finish(
    c: Collector, ref: SourceRef, fmt: str, run_id: str, names: set[str], **fields
) -> RunData:
    c.names |= names
    return c.finish(path=ref.text, format=fmt, run_id=run_id, runs=[run_id], **fields)


class MlflowServer:
    """A run on an MLflow tracking server, through its REST API."""

    def __init__(self, ref: SourceRef, run_id: str, uri: str, credentials: dict[str, str]):
        self.ref, self.run_id = ref, run_id
        token = credentials.get("MLFLOW_TRACKING_TOKEN")
        user, password = (
            credentials.get("MLFLOW_TRACKING_USERNAME"),
            credentials.get("MLFLOW_TRACKING_PASSWORD"),
        )
        self.http = Http(
            uri,
            f"the MLflow tracking server at {origin(uri)}",
            bearer_or_basic(token, user, password),
            [v for v in (token, user, password) if v],
        )
        self.bulk_interval = True

    def read_all(self, keep: Keep) -> RunData:
        return self.read_new(None, keep)[0]

    def read_new(self, cursor: Cursor | None, keep: Keep) -> tuple[RunData, Cursor]:
        done: dict[str, int] = dict(cursor.data.get("steps", {})) if cursor else {}
        answer = self.http.get("/api/2.0/mlflow/runs/get", {"run_id": self.run_id})
        latest = {
            m["key"]: int(m.get("step", 0))
            for m in answer.get("run", {}).get("data", {}).get("metrics", [])
        }
        c = Collector(keep)
        for key, last in sorted(latest.items()):
            if not c.wants(key) or last <= done.get(key, -1):
                continue
            start = done.get(key, -1) + 1
            rows = self._rows(key, start, last)
            rows.sort(key=lambda m: (int(m.get("step", 0)), int(m.get("timestamp", 0))))
            for m in rows:
                value = tracker_value(m.get("value"))
                if value is not None:
                    c.add(key, int(m.get("step", 0)), value)
                    c.records += 1
            done[key] = last
        run = _finish(c, self.ref, "mlflow-server", self.run_id, set(latest))
        return run, Cursor(kind="mlflow", data={"steps": done})

    def _rows(self, key: str, start: int, end: int) -> list[dict]:
        if self.bulk_interval:
            try:
                return self._interval(key, start, end)
            except RunReadError as exc:
                if "HTTP 404" not in str(exc) and "ENDPOINT_NOT_FOUND" not in str(exc):
                    raise
                self.bulk_interval = False  # an older server: the whole history, filtered below
        rows: list[dict] = []
        token = None
        while True:
            params = {"run_id": self.run_id, "metric_key": key, "max_results": HISTORY_PAGE}
            if token:
                params["page_token"] = token
            page = self.http.get("/api/2.0/mlflow/metrics/get-history", params)
            rows += [m for m in page.get("metrics", []) if start <= int(m.get("step", 0)) <= end]
            token = page.get("next_page_token")
            if not token:
                return rows

    def _interval(self, key: str, start: int, end: int) -> list[dict]:
        rows: list[dict] = []
        width = MAX_RESULTS
        while start <= end:
            stop = min(end, start + width - 1)
            page = self.http.get(
                "/api/2.0/mlflow/metrics/get-history-bulk-interval",
                {
                    "run_ids": self.run_id,
                    "metric_key": key,
                    "start_step": start,
                    "end_step": stop,
                    "max_results": MAX_RESULTS,
                },
            )
            got = page.get("metrics", [])
            if len(got) >= MAX_RESULTS and stop > start:
                width = max(
                    1, (stop - start + 1) // 2
                )  # full: the server may have sampled; read halves
                continue
            rows += got
            start = stop + 1
            if len(got) < MAX_RESULTS // 4:
                width *= 2  # sparse steps (logged every N): fewer, wider requests
        return rows


class MlflowStore:
    """A run in MLflow's SQLite store, read directly and read-only."""

    def __init__(self, ref: SourceRef, run_id: str, path: Path):
        self.ref, self.run_id, self.path = ref, run_id, path

    def connect(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise RunReadError(
                f"{self.ref.text}: MLFLOW_TRACKING_URI names {self.path}, which does not exist"
            )
        return open_store(self.path, self.ref.text, "MLflow")

    def read_all(self, keep: Keep) -> RunData:
        return self.read_new(None, keep)[0]

    def read_new(self, cursor: Cursor | None, keep: Keep) -> tuple[RunData, Cursor]:
        done: dict[str, int] = dict(cursor.data.get("steps", {})) if cursor else {}
        conn = self.connect()
        c = Collector(keep)
        try:
            latest = self._latest(conn)
            for key, last in sorted(latest.items()):
                if not c.wants(key) or last <= done.get(key, -math.inf):
                    continue
                rows = conn.execute(
                    "select step, value, is_nan from metrics where run_uuid = ? and key = ? and "
                    "step > ? order by step, timestamp",
                    (self.run_id, key, done.get(key, -(2**63))),
                )
                for step, value, is_nan in rows:
                    c.records += 1
                    number = math.nan if is_nan else tracker_value(value)
                    if number is not None:
                        c.add(key, int(step), number)
                    done[key] = max(done.get(key, int(step)), int(step))
        except sqlite3.Error as exc:
            raise RunReadError(
                f"{self.ref.text}: cannot read the MLflow store {self.path} ({exc}); the read can "
                f"be retried"
            ) from None
        finally:
            conn.close()
        run = _finish(c, self.ref, "mlflow-db", self.run_id, set(latest))
        return run, Cursor(kind="mlflow", data={"steps": done})

    def _latest(self, conn: sqlite3.Connection) -> dict[str, int]:
        """Each metric's latest step (MLflow keeps them
        in ``latest_metrics``); the run must exist.
        """
        if not conn.execute("select 1 from runs where run_uuid = ?", (self.run_id,)).fetchone():
            raise RunReadError(
                f"{self.ref.text}: no run {self.run_id} in the MLflow store {self.path}"
            )
        rows = conn.execute(
            "select key, step from latest_metrics where run_uuid = ?", (self.run_id,)
        )
        return {key: int(step) for key, step in rows}
