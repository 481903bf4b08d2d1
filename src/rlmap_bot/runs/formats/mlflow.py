"""MLflow stores without the mlflow package: the SQLite
``mlflow.db`` and the legacy ``mlruns/`` files.

SQLite: ``metrics(key, value, timestamp, step, is_nan, run_uuid)`` with
``runs`` and ``experiments`` for names.  MLflow's SQL store writes NaN as
value 0 with ``is_nan`` set, and clamps infinities to the largest double; both
are read back as NaN and inf.  File store: ``<exp>/<run>/metrics/<key>`` with
lines ``timestamp value step``; a key with ``/`` is a sub-folder.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import yaml

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import Collector

_MAX = 1.7976931348623157e308  # the clamp MLflow applies to inf


@dataclass(frozen=True)
class MlflowRun:
    uuid: str
    name: str
    experiment: str

    @property
    def ids(self) -> list[str]:
        return [f"{self.experiment}/{self.name}", self.name, self.uuid]


def _connect(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        conn.execute("select 1 from sqlite_master limit 1")
        return conn
    except sqlite3.Error as exc:
        raise RunReadError(f"{path}: cannot open the SQLite file: {exc}") from None


def is_mlflow_db(path: Path) -> bool:
    conn = _connect(path)
    try:
        cols = {row[1] for row in conn.execute("pragma table_info(metrics)")}
        return {"key", "value", "step", "run_uuid"} <= cols
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def db_runs(path: Path) -> list[MlflowRun]:
    conn = _connect(path)
    try:
        try:
            rows = conn.execute(
                "select r.run_uuid, coalesce(r.name, r.run_uuid), coalesce(e.name, "
                "r.experiment_id) from runs r left join experiments e on e.experiment_id = "
                "r.experiment_id where coalesce(r.lifecycle_stage, 'active') != 'deleted' order by "
                "r.start_time, r.run_uuid"
            ).fetchall()
        except sqlite3.Error:  # a store without the runs table: name runs by their uuid
            rows = [
                (u, u, "0")
                for (u,) in conn.execute("select distinct run_uuid from metrics order by 1")
            ]
    finally:
        conn.close()
    return [MlflowRun(uuid, str(name), str(exp)) for uuid, name, exp in rows]


def read_db_run(path: Path, run: MlflowRun, c: Collector) -> int:
    conn = _connect(path)
    try:
        cols = {row[1] for row in conn.execute("pragma table_info(metrics)")}
        nan_col = "is_nan" if "is_nan" in cols else "0"
        order = "key, timestamp, step" if "timestamp" in cols else "key, rowid"
        cursor = conn.execute(
            f"select key, step, value, {nan_col} from metrics where run_uuid = ? order by {order}",
            (run.uuid,),
        )
        n = 0
        for key, step, value, is_nan in cursor:
            n += 1
            if not c.wants(key):
                continue
            if is_nan:
                value = math.nan
            elif value is not None and abs(value) >= _MAX:
                value = math.copysign(math.inf, value)
            if value is not None and step is not None:
                c.add(key, int(step), float(value))
        c.records += n
    except sqlite3.Error as exc:
        raise RunReadError(f"{path}: cannot read metrics: {exc}") from None
    finally:
        conn.close()
    return path.stat().st_size


def _meta(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}


def file_runs(root: Path) -> list[tuple[MlflowRun, Path]]:
    """Runs of a file store: any ``<run>/metrics`` folder
    beside a ``meta.yaml``, up to three levels down.
    """
    found: list[tuple[MlflowRun, Path]] = []
    for depth in range(3):
        pattern = "/".join(["*"] * depth + ["metrics"]) if depth else "metrics"
        for metrics in sorted(root.glob(pattern)):
            run_dir = metrics.parent
            if not metrics.is_dir() or not (run_dir / "meta.yaml").is_file():
                continue
            meta = _meta(run_dir / "meta.yaml")
            tag = run_dir / "tags" / "mlflow.runName"
            name = meta.get("run_name") or (
                tag.read_text(encoding="utf-8").strip() if tag.is_file() else None
            )
            exp_meta = _meta(run_dir.parent / "meta.yaml")
            experiment = str(exp_meta.get("name") or run_dir.parent.name)
            uuid = str(meta.get("run_id") or meta.get("run_uuid") or run_dir.name)
            found.append((MlflowRun(uuid, str(name or uuid), experiment), run_dir))
    return found


def read_file_run(run_dir: Path, c: Collector) -> int:
    total = 0
    metrics = run_dir / "metrics"
    for path in sorted(p for p in metrics.rglob("*") if p.is_file()):
        key = path.relative_to(metrics).as_posix()
        keep = c.wants(key)
        total += path.stat().st_size
        if not keep:
            continue
        with open(path, "rb") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 2:
                    continue
                c.records += 1
                try:
                    value = float(parts[1])
                    step = int(parts[2]) if len(parts) > 2 else 0
                except ValueError:
                    continue
                c.add(key, step, value)
    return total
