"""One check of one watched run: read what is new, update the kept series, judge the whole run.

A line-based log (verl console and JSONL, CSV, JSONL, W&B exports) is read
incrementally with :class:`~rlmap_bot.runs.RunReader`: only the bytes appended
since the last check, in pieces of at most :data:`PIECE` bytes, so even the
first read of a multi-GB log holds only one piece's values at a time.  A
rotated or truncated file is noticed by the reader and read afresh.  Other
formats (TensorBoard, MLflow, TRL checkpoints, gzip, JSON arrays) are read
whole, and only when their size or modification time changed.

The verdict is the engine's on signals derived from the kept sample
(:mod:`rlmap_bot.watch.series`), except two the scan sees better at full
resolution (:mod:`rlmap_bot.watch.faults`): ``loss_divergence`` (a NaN/inf or
divergence still going on) and ``grad_norm_spikes`` (any spike in the run).
Nothing here posts; :mod:`rlmap_bot.watch.service` decides what to announce.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from rlmap_bot.errors import RlmapError
from rlmap_bot.runs.derive import Derivation
from rlmap_bot.runs.detect import choose, discover
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.formats.lines import LINE_FORMATS
from rlmap_bot.runs.incremental import RunReader
from rlmap_bot.runs.model import RunData, Series
from rlmap_bot.runs.sources import Access
from rlmap_bot.runs.textio import is_gzip, is_json_array
from rlmap_bot.watch import faults as fault_scan
from rlmap_bot.watch import sources
from rlmap_bot.watch.conditions import Evaluation, evaluate
from rlmap_bot.watch.faults import FaultState
from rlmap_bot.watch.judge import SHIFT_KINDS, headline, judge
from rlmap_bot.watch.model import Tracking, VerdictSummary, Watch
from rlmap_bot.watch.roots import PathRefused, check_folder, within
from rlmap_bot.watch.series import KeptRun

if TYPE_CHECKING:
    from rlmap_bot.diagnosis.engine import Engine
    from rlmap_bot.results.runs import RunDiagnosis
    from rlmap_bot.runs.aliases import AliasTable

#: Bytes read in one piece.  Judgement: 64 MB of a verl log is about 60,000 steps, whose kept
#: metrics take a few tens of MB as arrays before they are sampled down; reading a 2 GB log
#: for the first time then never holds more than that.
PIECE = 64 << 20


class Judgement(NamedTuple):
    verdict: RunDiagnosis
    derivation: Derivation
    evaluation: Evaluation


@dataclass
class Outcome:
    """What one check found; the service turns it into
    posts and stores ``tracking`` and ``kept``.
    """

    status: str  # checked | unchanged | paused | problem
    tracking: Tracking
    kept: KeptRun
    pause: str | None = None  # stalled | gone | outside
    message: str | None = None
    format: str | None = None
    new_points: int = 0
    bytes_read: int = 0
    verdict: RunDiagnosis | None = None
    derivation: Derivation | None = None
    evaluation: Evaluation | None = None
    opened_faults: set[str] = field(default_factory=set)
    pieces: int = 0

    @property
    def run(self) -> RunData:
        return self.kept.to_run()

    def judgement(self) -> Judgement:
        """The verdict and what it rests on, which every "checked" outcome has (and only those)."""
        assert (
            self.verdict is not None and self.derivation is not None and self.evaluation is not None
        ), f"a check with status {self.status!r} judged nothing"
        return Judgement(self.verdict, self.derivation, self.evaluation)


class _Format(NamedTuple):
    format: str


class _Source:
    def __init__(
        self, location: Path, format: str, lines: bool, run_id: str | None, files: list[Path]
    ):
        self.location, self.format, self.lines, self.run_id, self.files = (
            location,
            format,
            lines,
            run_id,
            files,
        )


def find_source(path: Path, roots: list[Path]) -> _Source:
    """The one log the watched path stands for, and how to read it (RunReadError, PathRefused)."""
    if path.is_dir():
        check_folder(path, roots)
    candidates = discover(path)
    if len(candidates) > 1:
        names = ", ".join(c.run_id for c in candidates[:10]) + (
            " ..." if len(candidates) > 10 else ""
        )
        raise RunReadError(
            f"{path} holds {len(candidates)} runs ({names}); watch one of them by its path"
        )
    cand = choose(candidates, None, path)
    location = cand.location.resolve(strict=False)
    if not within(location, roots):
        raise PathRefused(f"{path} leads outside RLMAP_RUN_ROOTS; nothing is read")
    # A JSON array (a W&B history export) is one document, not lines: it is read whole.
    lines = (
        cand.format in LINE_FORMATS
        and location.is_file()
        and not is_gzip(location)
        and not is_json_array(location)
    )
    return _Source(location, cand.format, lines, cand.run_id, [Path(f) for f in cand.files])


def _signature(source: _Source) -> str:
    """Size and modification time of everything a whole read would read."""
    paths = source.files or [source.location]
    parts = []
    for p in paths:
        if p.is_dir():
            for dirpath, _, names in os.walk(p):
                for name in sorted(names):
                    st = os.stat(os.path.join(dirpath, name))
                    parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        else:
            st = p.stat()
            parts.append(f"{p.name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def _after(run: RunData, step: int | None) -> RunData:
    """The part of a whole read after ``step`` (what is new since the last check)."""
    if step is None:
        return run
    series = {}
    for name, s in run.series.items():
        keep = s.steps > step
        if keep.any():
            series[name] = Series(name=name, steps=s.steps[keep], values=s.values[keep])
    return RunData(path=run.path, format=run.format, metrics=run.metrics, series=series)


def _chunk_points(chunk: RunData) -> int:
    return max((len(s) for s in chunk.series.values()), default=0)


def check_run(
    watch: Watch,
    tracking: Tracking,
    kept: KeptRun,
    *,
    engine: Engine,
    aliases: AliasTable,
    roots: list[Path],
    now: dt.datetime,
    stall: dt.timedelta,
    piece: int = PIECE,
    access: Access | None = None,
) -> Outcome:
    """Read, scan, derive and judge; see the module
    docstring.  Never raises for the run's own problems.

    ``piece``: the most bytes of a line log read in one go (:data:`PIECE`).  A tracker run or a
    W&B run folder is read through its run source (:mod:`rlmap_bot.watch.sources`) with
    ``access``, from the cursor kept in ``tracking``.
    """
    tracking = tracking.model_copy(deep=True)
    tracking.checks += 1
    tracking.last_check_at = now
    if tracking.last_growth_at is None:
        tracking.last_growth_at = now  # the stall clock starts at the first check
    tracker = sources.is_tracker(watch.path)
    path = Path(watch.path)
    resolved = path.resolve(strict=False)
    if not tracker and not within(resolved, roots):
        return Outcome(
            "paused",
            tracking,
            kept,
            pause="outside",
            message=f"{watch.path} now leads outside RLMAP_RUN_ROOTS, so I stopped reading it",
        )
    if not tracker and not resolved.exists():
        return Outcome(
            "paused",
            tracking,
            kept,
            pause="gone",
            message=f"{watch.path} is gone (moved or deleted)",
        )
    faults = FaultState.model_validate(tracking.faults)
    # What is stored if reading fails half-way: the
    # series and reading position from before the check.
    before_check = kept
    reading = {k: getattr(tracking, k) for k in ("mode", "source", "reader", "signature", "cursor")}
    opened: set[str] = set()
    new_points = 0
    bytes_read = 0
    pieces = 0  # reads of at most ``piece`` bytes (line logs)
    try:
        if tracker or sources.is_wandb_folder(resolved):
            access = access or Access(run_roots=tuple(roots))
            chunk, cursor = sources.read_new(watch.path, tracking, aliases, access)
            if tracking.mode != "source" or chunk.reset:  # a first read, or the run started over
                kept = KeptRun()
                tracking.mode, tracking.source, tracking.reader = "source", watch.path, None
            faults, found = fault_scan.scan(
                faults,
                kept.tails_run(),
                chunk,
                aliases,
                kept.points + _chunk_points(chunk),
                kept.empty,
            )
            opened |= found
            new_points = kept.absorb(chunk)
            tracking.cursor, bytes_read, pieces = cursor, chunk.bytes_read, 1
            fmt = chunk.format
        else:
            source = find_source(resolved, roots)
            fmt = source.format
            if tracking.mode != ("lines" if source.lines else "whole") or tracking.source != str(
                source.location
            ):
                # A new file behind the path (a folder's log replaced, a format change): a new run.
                kept, tracking.reader, tracking.signature = KeptRun(), None, None
                tracking.mode, tracking.source = (
                    ("lines" if source.lines else "whole"),
                    str(source.location),
                )
            if source.lines:
                reader = RunReader(
                    source.location, format=source.format, aliases=aliases, state=tracking.reader
                )
                while True:
                    before = reader.state.offset
                    chunk = reader.read_new(max_bytes=piece)
                    if chunk.reset:
                        kept = KeptRun()
                    first = kept.empty
                    faults, found = fault_scan.scan(
                        faults,
                        kept.tails_run(),
                        chunk,
                        aliases,
                        kept.points + _chunk_points(chunk),
                        first,
                    )
                    opened |= found
                    new_points += kept.absorb(chunk)
                    pieces += 1
                    if reader.state.offset - before < piece:
                        break
                tracking.reader = reader.state.model_dump(mode="json")
                bytes_read = reader.bytes_read
            else:
                signature = _signature(source)
                if signature != tracking.signature:
                    from rlmap_bot.runs import read_run

                    whole = read_run(
                        source.location if source.location.is_file() else resolved,
                        format=source.format,
                        run_id=source.run_id,
                        aliases=aliases,
                    )
                    last = kept.last_step
                    if last is not None and (whole.last_step or 0) < last:
                        last, kept = None, KeptRun()  # rewritten from scratch: a new run
                    chunk = _after(whole, last)
                    faults, found = fault_scan.scan(
                        faults, kept.tails_run(), chunk, aliases, whole.step_count, kept.empty
                    )
                    opened |= found
                    fresh = KeptRun()
                    fresh.absorb(whole)
                    new_points = _chunk_points(chunk)
                    kept = fresh
                    tracking.signature = signature
                    bytes_read = whole.bytes_read
    except (PathRefused, RunReadError, OSError) as exc:
        for key, value in reading.items():
            setattr(tracking, key, value)
        if isinstance(exc, PathRefused):
            return Outcome("paused", tracking, before_check, pause="outside", message=str(exc))
        message = (
            str(exc)
            if isinstance(exc, RlmapError)
            else f"{watch.path}: cannot read: {exc.strerror or exc}"
        )
        return _stalled_or(
            Outcome("problem", tracking, before_check, message=message), watch, now, stall
        )
    return _judged(
        watch,
        tracking,
        kept,
        faults,
        opened,
        new_points,
        bytes_read,
        pieces,
        fmt,
        engine,
        aliases,
        now,
        stall,
    )


def _judged(
    watch: Watch,
    tracking: Tracking,
    kept: KeptRun,
    faults: FaultState,
    opened: set[str],
    new_points: int,
    bytes_read: int,
    pieces: int,
    format: str,
    engine: Engine,
    aliases: AliasTable,
    now: dt.datetime,
    stall: dt.timedelta,
) -> Outcome:
    """The outcome of a check that read: unchanged (or stalled), or judged."""
    source = _Format(format)
    tracking.faults = faults.model_dump(mode="json")
    tracking.bytes_read += bytes_read
    if new_points == 0:
        out = Outcome(
            "unchanged", tracking, kept, format=source.format, bytes_read=bytes_read, pieces=pieces
        )
        return _stalled_or(out, watch, now, stall)
    tracking.last_growth_at = now
    derivation, verdict = judge(kept, faults, engine, aliases)
    shifted = [f for f in derivation.faults if f.kind in SHIFT_KINDS]
    opened |= fault_scan.track_shift(faults, shifted, derivation.series, kept.last_step)
    tracking.faults = faults.model_dump(mode="json")
    tracking.last_verdict = VerdictSummary(
        headline=headline(verdict),
        binding_stage=verdict.binding_stage,
        binding_title=verdict.binding_title,
        confidence=verdict.confidence,
    )
    evaluation = evaluate(
        tracking.conditions,
        tracking.episodes,
        verdict.binding_stage,
        faults,
        opened,
        new_data=True,
        now=now,
        last_step=kept.last_step,
        tied=verdict.tied,
    )
    return Outcome(
        "checked",
        tracking,
        kept,
        format=source.format,
        new_points=new_points,
        bytes_read=bytes_read,
        verdict=verdict,
        derivation=derivation,
        evaluation=evaluation,
        opened_faults=opened,
        pieces=pieces,
    )


def _stalled_or(out: Outcome, watch: Watch, now: dt.datetime, stall: dt.timedelta) -> Outcome:
    if out.status == "problem" and sources.is_tracker(watch.path):
        return out  # a tracker that is down is retried, never taken for a run that stopped logging
    # The stall clock runs from the last new step, or from when someone (re)started the watch.
    last = max(t for t in (out.tracking.last_growth_at, watch.updated_at) if t is not None)
    if now - last >= stall:
        minutes = int((now - last).total_seconds() // 60)
        why = f" (last problem: {out.message})" if out.message else ""
        return Outcome(
            "paused",
            out.tracking,
            out.kept,
            pause="stalled",
            format=out.format,
            message=f"no new steps for {minutes} minutes{why}",
            bytes_read=out.bytes_read,
        )
    return out
