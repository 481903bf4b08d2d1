"""``trackio:PROJECT/RUN_NAME``: a run in Trackio's local store, read directly with sqlite3.

Trackio keeps one SQLite database a project, ``$TRACKIO_DIR/<project>.db`` (the project name kept
to ``[A-Za-z0-9_-]``, as trackio's ``canonical_project_name`` does; ``TRACKIO_DIR`` defaults to
``$HF_HOME/trackio``), in WAL mode. Each ``trackio.log`` call is one row of
``metrics(id INTEGER PRIMARY KEY AUTOINCREMENT, run_id, timestamp, run_name, step, metrics)``
with the logged dict as JSON text (NaN and infinities as the strings ``"NaN"``, ``"Infinity"``).

The database is opened ``mode=ro`` (never ``immutable``: the writer's WAL holds the newest rows,
and a read-only connection sees them as long as the ``-wal`` and ``-shm`` files are there). The
cursor is the last row id read; a check reads ``WHERE id > ?`` over the table's primary key (the
rowid), so it costs the rows logged since the last check in the whole project, not the run's
length. A run resumed under the same name is one run; a step logged twice keeps the last row.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any, Callable

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
from rlmap_bot.runs.sources.access import Access, check_store
from rlmap_bot.runs.sources.remote import open_store, tracker_value

Keep = Callable[[str], bool]


def trackio_dir(environ: dict[str, str]) -> Path:
    if environ.get("TRACKIO_DIR"):
        return Path(environ["TRACKIO_DIR"]).expanduser()
    hf_home = environ.get("HF_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache", "huggingface"
    )
    return Path(hf_home) / "trackio"


def db_name(project: str) -> str:
    safe = "".join(c for c in project if c.isalnum() or c in ("-", "_")).rstrip()
    return f"{safe or 'default'}.db"


@register("trackio")
def open_trackio(ref: SourceRef, access: Access) -> RunSource:
    project, _, name = ref.target.partition("/")
    if not project.strip() or not name.strip():
        raise RunReadError(f"{ref.text}: say the project and the run, trackio:PROJECT/RUN_NAME")
    folder = trackio_dir(access.environ)
    check_store(folder, access, "TRACKIO_DIR", ref.text)
    return TrackioRun(ref, project.strip(), name.strip(), folder / db_name(project.strip()))


@register_lister("trackio")
def list_trackio(ref: SourceRef, access: Access, limit: int) -> RunList:
    """The runs of a Trackio project, the most recently logged first. Trackio's store keeps no
    run state (finished, failed), so every run that logged a row is listed."""
    project = ref.target.strip()
    folder = trackio_dir(access.environ)
    check_store(folder, access, "TRACKIO_DIR", ref.text)
    store = TrackioRun(ref, project, "", folder / db_name(project))
    conn = store.connect()
    try:
        names = [
            name
            for (name,) in conn.execute(
                "select run_name from metrics group by run_name order by max(id) desc"
            )
        ]
    except sqlite3.Error as exc:
        raise RunReadError(
            f"{ref.text}: cannot read the Trackio store {store.path} ({exc}); the read can be "
            f"retried"
        ) from None
    finally:
        conn.close()
    listed = [ListedRun(source=f"trackio:{project}/{name}", name=name) for name in names]
    return RunList(
        source=ref.text, what=describe(ref), runs=listed[:limit], total=len(listed), which=""
    )


def _flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flat(f"{prefix}/{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


class TrackioRun:
    def __init__(self, ref: SourceRef, project: str, name: str, path: Path):
        self.ref, self.project, self.name, self.path = ref, project, name, path

    def connect(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise RunReadError(
                f"{self.ref.text}: no Trackio project {self.project!r} in {self.path.parent} "
                "(TRACKIO_DIR)"
            )
        return open_store(self.path, self.ref.text, "Trackio")

    def read_all(self, keep: Keep) -> RunData:
        return self.read_new(None, keep)[0]

    def read_new(self, cursor: Cursor | None, keep: Keep) -> tuple[RunData, Cursor]:
        last_id = int(cursor.data.get("row", 0)) if cursor else 0
        names: set[str] = set(cursor.data.get("names", [])) if cursor else set()
        c = Collector(keep)
        conn = self.connect()
        try:
            if (
                not last_id
                and not conn.execute(
                    "select 1 from metrics where run_name = ? limit 1", (self.name,)
                ).fetchone()
            ):
                raise RunReadError(
                    f"{self.ref.text}: no run {self.name!r} in the Trackio project {self.project!r}"
                )
            # "+run_name": no index on it, so SQLite walks the rowid range past the cursor.
            rows = conn.execute(
                "select id, step, metrics from metrics where id > ? and +run_name = ? order by id",
                (last_id, self.name),
            )
            for row_id, step, text in rows:
                last_id = row_id
                try:
                    logged = json.loads(text)
                except ValueError:
                    c.skipped += 1
                    continue
                flat: dict[str, Any] = {}
                _flat("", logged, flat)
                c.records += 1
                for key, raw in flat.items():
                    value = tracker_value(raw)
                    names.add(key)
                    if value is not None and step is not None and c.wants(key):
                        c.add(key, int(step), value)
        except sqlite3.Error as exc:
            raise RunReadError(
                f"{self.ref.text}: cannot read the Trackio store {self.path} ({exc}); the read can "
                f"be retried"
            ) from None
        finally:
            conn.close()
        c.names |= names
        run = c.finish(path=self.ref.text, format="trackio", run_id=self.name, runs=[self.name])
        return run, Cursor(kind="trackio", data={"row": last_id, "names": sorted(names)})
