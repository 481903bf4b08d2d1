"""Which format a file is, from its content, and which runs a path holds.

A file name is only a hint: a ``.log`` can hold W&B CSV and a ``.txt`` verl
JSONL.  Two formats claiming the same file is reported as ambiguous, and the
caller names one with ``format=``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.formats import mlflow, tensorboard, trl
from rlmap_bot.runs.formats.lines import ANSI_ESCAPE, RUN_COLUMNS, STEP_KEYS, VERL_STEP, ui_runs
from rlmap_bot.runs.helptext import FORMATS, LOOKED_FOR
from rlmap_bot.runs.textio import GZIP_MAGIC, HEAD, SQLITE_MAGIC, open_binary, read_head

#: Where else a run can be, said after the log formats when nothing at a path could be read: a
#: person who pointed at the wrong place learns what to point at.
ELSEWHERE = (
    "a W&B run folder (any folder holding run-<id>.wandb, or the wandb/ folder above it), or a "
    "tracker's run: wandb:ENTITY/PROJECT/RUN_ID, mlflow:RUN_ID, trackio:PROJECT/RUN_NAME"
)
LOOKED_EVERYWHERE = f"looked for {LOOKED_FOR}; or give {ELSEWHERE}"

#: How far into a text file to look for verl console lines.  Judgement: a verl log opens
#: with the config and model printout, often a few hundred KB before the first step line.
VERL_SCAN = 8 << 20
#: Files larger than this are not sniffed as one JSON document (trainer_state.json is small).
JSON_DOC_MAX = 256 << 20
#: Text whose sniffed head has more than this share of NUL, other control or undecodable bytes
#: is binary.  Judgement: real text logs carry a few stray control bytes (NCCL prints NULs in a
#: device name; terminals leave escapes), a handful in 64 KB; binary files have them in most lines.
BINARY_SHARE = 0.01
#: Control characters that do not occur in text (tab, newline, carriage return, form feed and the
#: ANSI escape do).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")


@dataclass
class Candidate:
    """One run found at a path: how to read it and the names it answers to."""

    format: str
    location: Path
    ids: list[str]
    extra: object = None  # the MlflowRun for MLflow stores
    files: list[Path] = field(default_factory=list)  # TensorBoard event files

    @property
    def run_id(self) -> str:
        return self.ids[0]


def _step_key(keys) -> bool:
    return any(k in keys for k in STEP_KEYS)


def _claims_text(path: Path, head: bytes) -> list[str]:
    text = head.decode("utf-8", "replace")
    odd = text.count("\ufffd") + len(_CONTROL.findall(text))
    if odd > BINARY_SHARE * max(len(text), 1):
        raise RunReadError(
            f"{path}: binary content ({odd} control or non-UTF-8 bytes in the first "
            f"{len(head):,}), not a text log; {LOOKED_EVERYWHERE}"
        )
    claims: list[str] = []
    lines = text.splitlines()
    if len(head) >= HEAD and lines:
        lines = lines[:-1]  # the head may cut the last line
    body = [ln for ln in lines if ln.strip()]
    first = body[0].strip() if body else text.strip()
    if first.startswith("{"):
        if '"log_history"' in text:
            claims.append("trl-state")
        else:
            for ln in body[:20]:
                try:
                    obj = json.loads(ln)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    if "step" in obj and isinstance(obj.get("data"), dict):
                        claims.append("verl-jsonl")
                    elif "_step" in obj:
                        claims.append("wandb-json")
                    elif _step_key(obj):
                        claims.append("jsonl")
                    break
    elif first.startswith("["):
        m = re.search(r"\{[^{}]*\}", text)
        if m:
            try:
                obj = json.loads(m.group(0))
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                claims.append("wandb-json" if "_step" in obj else "jsonl" if _step_key(obj) else "")
        claims = [c for c in claims if c]
    elif "," in first:
        header = _header(first)
        if "_step" in header or (_step_key(header) and ui_runs(header)):
            claims.append("wandb-csv")
        elif _step_key(header):
            claims.append("csv")
    if _has_verl_lines(path, text, len(head) >= HEAD):
        claims.append("verl-console")
    return claims


def _header(line: str) -> list[str]:
    try:
        return [h.strip() for h in next(csv.reader([line]))]
    except (csv.Error, StopIteration):
        return []


def _csv_runs(path: Path) -> list[str]:
    """The runs a CSV holds: the run names of a W&B web-UI export's header, or the values of a run
    column (read through once, in order of appearance); empty for a one-run CSV."""
    header: list[str] = []
    for line in read_head(path).decode("utf-8", "replace").splitlines():
        if line.strip():
            header = _header(line)
            break
    col = next((header.index(k) for k in RUN_COLUMNS if k in header), -1)
    if col < 0:
        return ui_runs(header)
    stream, _ = open_binary(path)
    seen: dict[str, None] = {}
    try:
        rows = csv.reader(io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline=""))
        next(rows, None)
        for row in rows:
            if len(row) > col and row[col].strip():
                seen.setdefault(row[col].strip(), None)
    except (OSError, EOFError, csv.Error) as exc:
        raise RunReadError(f"{path}: cannot read the run column: {exc}") from None
    finally:
        stream.close()
    return list(seen)


def _has_verl_lines(path: Path, text: str, more: bool) -> bool:
    def hit(chunk: str) -> bool:
        if "step:" not in chunk:
            return False
        return any(
            VERL_STEP.search(ANSI_ESCAPE.sub("", ln)) for ln in chunk.splitlines() if "step:" in ln
        )

    if hit(text):
        return True
    if not more:
        return False
    return hit(read_head(path, VERL_SCAN).decode("utf-8", "replace"))


def detect_file(path: Path) -> str:
    """The format of one file, from its content; RunReadError if none or several fit."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise RunReadError(f"{path}: cannot open: {exc.strerror or exc}") from None
    if size == 0:
        raise RunReadError(f"{path}: empty file; nothing was logged yet")
    with open(path, "rb") as f:
        magic = f.read(16)
    if magic.startswith(SQLITE_MAGIC):
        if mlflow.is_mlflow_db(path):
            return "mlflow-db"
        raise RunReadError(
            f"{path}: an SQLite file without an MLflow metrics table; looked for {LOOKED_FOR}"
        )
    if tensorboard.EVENT_MARK in path.name or b"brain.Event" in _raw(path, 64):
        return "tensorboard"
    head = read_head(path)
    if not head.strip():
        raise RunReadError(f"{path}: empty file; nothing was logged yet")
    claims = _claims_text(path, head)
    if not claims:
        raise RunReadError(f"{path}: not a training log this reader knows; {LOOKED_EVERYWHERE}")
    if len(claims) > 1:
        raise RunReadError(
            f"{path}: ambiguous format, it reads as {' and as '.join(claims)}; pass --format, one "
            f"of {', '.join(claims)}"
        )
    return claims[0]


def _raw(path: Path, n: int) -> bytes:
    with open(path, "rb") as f:
        data = f.read(n)
    return b"" if data[:2] == GZIP_MAGIC else data


def _rel(path: Path, root: Path) -> str:
    rel = path.relative_to(root).as_posix()
    return rel if rel != "." else root.name


def discover(path: Path, format: str | None = None) -> list[Candidate]:
    """Every run at ``path`` (a file or a folder), optionally only of one format."""
    path = Path(path)
    if not path.exists():
        raise RunReadError(f"{path}: no such file or folder")
    if format is not None and format not in FORMATS:
        raise RunReadError(f"unknown format '{format}'; one of {', '.join(FORMATS)}")
    if path.is_file():
        fmt = format or detect_file(path)
        return _file_candidates(path, fmt, path.parent)
    if not path.is_dir():
        raise RunReadError(
            f"{path}: neither a file nor a folder (a device or a pipe); give a log file or a folder"
        )
    found: list[Candidate] = []
    # MLflow file store and TensorBoard logdirs: structure decides.
    if format in (None, "mlflow-files"):
        for run, run_dir in mlflow.file_runs(path):
            found.append(Candidate("mlflow-files", run_dir, run.ids, extra=run))
    if format in (None, "tensorboard"):
        dirs = sorted({p.parent for p in path.rglob(f"*{tensorboard.EVENT_MARK}*") if p.is_file()})
        for d in dirs:
            found.append(
                Candidate("tensorboard", d, [_rel(d, path)], files=tensorboard.event_files(d))
            )
    if format in (None, "trl-state"):
        outputs = sorted(
            {
                p.parent.parent
                if p.parent.name.startswith("checkpoint-") and p.parent != path
                else p.parent
                for p in path.rglob(trl.STATE_FILE)
            }
        )
        for out in outputs:
            state = trl.newest_state(out)
            if state is not None:
                found.append(Candidate("trl-state", state, [_rel(out, path)]))
    claimed = {c.location for c in found} | {f for c in found for f in c.files}
    skip_dirs = [c.location for c in found if c.format in ("mlflow-files", "trl-state")]
    for child in sorted(p for p in path.rglob("*") if p.is_file()):
        if child in claimed or child.name == trl.STATE_FILE or tensorboard.EVENT_MARK in child.name:
            continue
        if any(d in child.parents for d in skip_dirs) or "meta.yaml" == child.name:
            continue
        if any(part.startswith(".") for part in child.relative_to(path).parts):
            continue
        try:
            fmt = detect_file(child)
        except RunReadError:
            continue  # a folder holds other files too: only logs count
        if format and fmt != format:
            continue
        found.extend(_file_candidates(child, fmt, path))
    if not found:
        what = f"no {format} run" if format else "no training log"
        raise RunReadError(f"{path}: {what} found in this folder; {LOOKED_EVERYWHERE}")
    return found


def _file_candidates(path: Path, fmt: str, root: Path) -> list[Candidate]:
    rel = _rel(path, root) if path != root else path.name
    if fmt == "mlflow-db":
        runs = mlflow.db_runs(path)
        if not runs:
            raise RunReadError(f"{path}: an MLflow store with no runs")
        return [Candidate("mlflow-db", path, run.ids, extra=run) for run in runs]
    if fmt == "tensorboard":
        return [Candidate("tensorboard", path, [rel], files=[path])]
    if fmt in ("wandb-csv", "csv"):
        names = _csv_runs(path)
        if len(names) > 1:  # one web-UI export holding several runs' columns
            return [Candidate(fmt, path, [f"{rel}:{name}", name], extra=name) for name in names]
        if names:
            return [Candidate(fmt, path, [rel, names[0]], extra=names[0])]
    return [Candidate(fmt, path, [rel])]


def choose(candidates: list[Candidate], run_id: str | None, where: Path) -> Candidate:
    """The run named ``run_id``, or the only one; else a one-line error listing the runs."""
    if run_id is not None:
        hits = [c for c in candidates if run_id in c.ids]
        if len(hits) == 1:
            return hits[0]
        listed = _listing(candidates)
        if not hits:
            raise RunReadError(f"{where}: no run '{run_id}'; runs here: {listed}")
        raise RunReadError(
            f"{where}: '{run_id}' names {len(hits)} runs; use one of: "
            + ", ".join(h.ids[-1] for h in hits)
        )
    if len(candidates) == 1:
        return candidates[0]
    if where.is_file() and candidates[0].format.endswith("csv"):
        # A CSV of several runs (a W&B chart export comparing them): the first is read and the
        # reading says so (several_runs_note). A folder or a tracker's store of several runs is a
        # project, and refused.
        return candidates[0]
    raise RunReadError(
        f"{where} holds {len(candidates)} runs; pick one with --run-id: {_listing(candidates)}"
    )


def several_runs_note(
    candidates: list[Candidate], chosen: Candidate, run_id: str | None
) -> list[str]:
    """The warning a reading of one run out of a file
    of several carries (none when it was picked).
    """
    if run_id is not None or len(candidates) < 2:
        return []
    return [
        (
            f"this file holds {len(candidates)} runs ({_listing(candidates)}); read the first, "
            f"{chosen.run_id}: pick another with --run-id"
        )
    ]


def _listing(candidates: list[Candidate], limit: int = 20) -> str:
    names = [f"{c.run_id} ({c.format})" for c in candidates[:limit]]
    more = len(candidates) - limit
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")
