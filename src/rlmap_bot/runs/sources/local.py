"""The ``path`` kind: a log file or folder on this machine, read by the file readers of ``runs``.

``read_all`` is :func:`rlmap_bot.runs.read.read_candidate` on the run the path holds (the
format told from the content, several runs picked with ``run_id``).  ``read_new`` depends on
the format:

- line formats (verl console and JSONL, W&B and plain CSV/JSONL): only the bytes appended since
  the cursor are read (:class:`~rlmap_bot.runs.incremental.RunReader`); a file that shrank or
  was replaced (verl's file logger truncates its JSONL when a run restarts) is read again from
  the start and the result says so (``reset`` and a warning);
- TensorBoard: each event file from its own byte offset, so a check reads the new event files
  of a restarted run and the growth of the last one, nothing else;
- TRL ``trainer_state.json`` and MLflow stores are not appended to line by line (the JSON is
  rewritten at each checkpoint, the SQLite pages move): a check whose file size and modification
  time are unchanged reads nothing; otherwise it reads the run whole (cost: the size of that file
  or store) and returns only the steps past each metric's last step seen.

A path that is a W&B run folder (or the ``wandb/`` folder, or a ``.wandb`` file) is handed to
:mod:`rlmap_bot.runs.sources.wandb_file`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from rlmap_bot import wording
from rlmap_bot.runs.detect import Candidate, choose, discover, several_runs_note
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.formats.lines import LINE_FORMATS
from rlmap_bot.runs.model import Collector, RunData, Series
from rlmap_bot.runs.sources import Cursor, RunSource, SourceRef, register
from rlmap_bot.runs.sources.access import Access, check_path
from rlmap_bot.runs.textio import is_gzip, is_json_array

Keep = Callable[[str], bool]


class LocalSource:
    """One run at a local path, in any format :func:`~rlmap_bot.runs.detect.discover` finds."""

    def __init__(self, ref: SourceRef, path: Path):
        self.ref = ref
        self.path = path

    def _candidate(self) -> tuple[Candidate, list[Candidate]]:
        candidates = discover(self.path, self.ref.format)
        return choose(candidates, self.ref.run_id, self.path), candidates

    def read_all(self, keep: Keep) -> RunData:
        from rlmap_bot.runs.read import read_candidate

        cand, candidates = self._candidate()
        c = Collector(keep)
        nbytes, warnings = read_candidate(cand, c)
        c.warnings.extend(several_runs_note(candidates, cand, self.ref.run_id) + warnings)
        return c.finish(
            path=str(cand.location),
            format=cand.format,
            run_id=cand.run_id,
            runs=[x.run_id for x in candidates],
            bytes_read=nbytes,
        )

    def read_new(self, cursor: Cursor | None, keep: Keep) -> tuple[RunData, Cursor]:
        return next(self.read_pieces(cursor, keep))

    def read_pieces(
        self, cursor: Cursor | None, keep: Keep, max_bytes: int | None = None
    ) -> Iterator[tuple[RunData, Cursor]]:
        """``read_new`` in pieces: a line log in reads of about ``max_bytes`` each (whole lines,
        one reader across them, the last piece shorter), any other format in one piece.  Each
        piece comes with the cursor after it, so the last cursor is the one to keep."""
        data = dict(cursor.data) if cursor is not None and cursor.kind == "path" else {}
        if data.get("mode") == "lines" and Path(data.get("file", "")).is_file():
            yield from self._lines(Path(data["file"]), data, keep, max_bytes)
            return
        if data.get("mode") == "tensorboard":
            yield self._tensorboard(data, keep)
            return
        cand, _ = self._candidate()
        if (
            cand.format in LINE_FORMATS
            and cand.location.is_file()
            and not is_gzip(cand.location)
            and not is_json_array(cand.location)  # a W&B history export: one JSON document
            and cand.extra is None
        ):
            start = {"mode": "lines", "file": str(cand.location), "format": cand.format}
            yield from self._lines(cand.location, start, keep, max_bytes)
            return
        if cand.format == "tensorboard":
            yield self._tensorboard(
                {"mode": "tensorboard", "dir": str(cand.location), "files": {}}, keep
            )
            return
        yield self._whole(cand, data, keep)

    def _lines(
        self, file: Path, data: dict, keep: Keep, max_bytes: int | None
    ) -> Iterator[tuple[RunData, Cursor]]:
        from rlmap_bot.runs.incremental import RunReader

        reader = RunReader(file, format=data.get("format"), keep=keep, state=data.get("reader"))
        while True:
            before = reader.state.offset
            run = reader.read_new(max_bytes=max_bytes)
            state = reader.state
            yield (
                run,
                Cursor(
                    kind="path",
                    data={
                        "mode": "lines",
                        "file": str(file),
                        "format": state.format,
                        "reader": state.model_dump(),
                    },
                ),
            )
            if max_bytes is None or state.offset - before < max_bytes:
                return

    def _tensorboard(self, data: dict, keep: Keep) -> tuple[RunData, Cursor]:
        from rlmap_bot.runs.formats import tensorboard

        folder = Path(data["dir"])
        offsets: dict[str, int] = dict(data.get("files", {}))
        c = Collector(keep)
        c._last.update(
            data.get("last_steps", {})
        )  # a step logged again after a restart is still a restart
        total = 0
        files = tensorboard.event_files(folder) if folder.is_dir() else []
        if not files:
            raise RunReadError(f"{folder}: no TensorBoard event files any more")
        fresh = [p.name for p in files if p.name not in offsets]
        for path in files:
            start = offsets.get(path.name, 0)
            if path.stat().st_size < start:
                c.warnings.append(
                    f"{path.name} shrank below what was read; read again from its start"
                )
                start = 0
            offsets[path.name], n = tensorboard.read_event_file_from(path, start, c)
            total += n
        if data.get("files") and fresh:
            c.warnings.append(
                f"new {wording.plural('event file') if len(fresh) > 1 else 'event file'} since the "
                f"last check: {', '.join(fresh)} (a restarted run)"
            )
        run = c.finish(path=str(folder), format="tensorboard", run_id=folder.name, bytes_read=total)
        cursor = {
            "mode": "tensorboard",
            "dir": str(folder),
            "files": offsets,
            "last_steps": {**data.get("last_steps", {}), **c._last},
        }
        return run, Cursor(kind="path", data=cursor)

    def _whole(self, cand: Candidate, data: dict, keep: Keep) -> tuple[RunData, Cursor]:
        stamp = _stamp(cand.location)
        last: dict[str, int] = dict(data.get("last_steps", {}))
        if (
            data.get("mode") == "whole"
            and data.get("stamp") == stamp
            and data.get("file") == str(cand.location)
        ):
            run = Collector(keep).finish(
                path=str(cand.location), format=cand.format, run_id=cand.run_id
            )
            return run, Cursor(kind="path", data=data)
        run = self.read_all(keep)
        if last and (run.last_step is None or run.last_step < max(last.values())):
            # Rewritten from scratch (its steps end before the last one read): a new run.
            last = {}
            run = run.model_copy(update={"reset": True})
            run.warnings.insert(0, f"{cand.location.name} starts again: read as a new run")
        run = _after(run, last)
        for name, series in run.series.items():
            if len(series):
                last[name] = int(series.steps[-1])
        return run, Cursor(
            kind="path",
            data={"mode": "whole", "file": str(cand.location), "stamp": stamp, "last_steps": last},
        )


def _stamp(path: Path) -> list[float]:
    """Size and modification time of a file, or of the newest file in a folder (a changed store)."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    if not files:
        return [0.0, 0.0]
    info = [p.stat() for p in files]
    return [float(sum(i.st_size for i in info)), max(i.st_mtime for i in info)]


def _after(run: RunData, last: dict[str, int]) -> RunData:
    """``run`` with each series cut to the steps past ``last[name]``."""
    series: dict[str, Series] = {}
    for name, s in run.series.items():
        cut = last.get(name)
        if cut is None:
            series[name] = s
            continue
        keep = s.steps > cut
        if keep.any():
            series[name] = Series(name=name, steps=s.steps[keep], values=s.values[keep])
    nonfinite = {
        n: [int(x) for x in steps if x > last.get(n, -np.inf)] for n, steps in run.nonfinite.items()
    }
    return run.model_copy(
        update={"series": series, "nonfinite": {n: v for n, v in nonfinite.items() if v}}
    )


@register("path")
def open_path(ref: SourceRef, access: Access) -> RunSource:
    """The reader for a local path: a W&B run folder's transaction log, else the file readers."""
    path = Path(ref.target).expanduser()
    check_path(path, access)
    from rlmap_bot.runs.sources import wandb_file

    found = wandb_file.locate(path)
    if found is not None:
        return wandb_file.WandbFileSource(ref, found)
    if not path.exists():
        raise RunReadError(f"{ref.text}: no such file or folder")
    return LocalSource(ref, path)
