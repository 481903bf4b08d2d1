"""One check of one watched run: read what is new, update the kept series, judge the whole run.

Every source is read through :mod:`rlmap_bot.runs.sources` from the cursor kept in the watch's
tracking, so a check reads only what is new.  A path is read by
:class:`~rlmap_bot.runs.sources.local.LocalSource`: a line-based log (verl console and JSONL, CSV,
JSONL) from its byte offset, in pieces of at most :data:`PIECE` bytes, so even the first read of a
multi-GB log holds only one piece's values at a time (a rotated or truncated file is noticed and
read afresh); a TensorBoard folder from each event file's offset; other formats (TRL checkpoints,
gzip, JSON arrays) whole, only when their size or modification time changed, keeping the steps
past the last one read.  A W&B run folder and a tracker run (``wandb:``, ``mlflow:``,
``trackio:``) are read by their own run sources (:func:`rlmap_bot.runs.sources.read_new`), from the
cursor stored in the watch's tracking.

What is read goes to :mod:`rlmap_bot.runs.growing`, a chunk at a time (``take``: the fault scan
at full resolution, then the kept series), and the kept run is judged there (``judge``). The
verdict is the engine's on signals derived from the kept sample, except two the scan sees better
at full resolution: ``loss_divergence`` (a NaN/inf or divergence still going on) and
``grad_norm_spikes`` (any spike in the run).
Nothing here posts; :mod:`rlmap_bot.watch.service` decides what to announce.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, NamedTuple

from rlmap_bot.errors import RlmapError
from rlmap_bot.results.watch import CheckResult
from rlmap_bot.runs.detect import choose, discover
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.growing import take
from rlmap_bot.runs.growing.judge import headline, judge
from rlmap_bot.runs.growing.kept import KeptRun
from rlmap_bot.runs.growing.scan import FaultState
from rlmap_bot.runs.model import RunData
from rlmap_bot.runs.read import keeper
from rlmap_bot.runs.signals import Derivation
from rlmap_bot.runs.sources import Cursor, SourceRef, is_tracker, is_wandb_folder, read_new
from rlmap_bot.runs.sources.access import Access, PathRefused, check_folder, within
from rlmap_bot.runs.sources.local import LocalSource
from rlmap_bot.watch.conditions import Evaluation, evaluate
from rlmap_bot.watch.model import Tracking, VerdictSummary, Watch
from rlmap_bot.watch.stopping import advise
from rlmap_bot.wording import is_lead

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

    def result(self, watch: Watch) -> CheckResult:
        """What this check of ``watch`` read and concluded, as a command returns it (the posts
        are added by whoever makes them)."""
        kept = self.kept
        status = {"checked": "checked", "unchanged": "unchanged", "paused": "paused"}.get(
            self.status, "problem"
        )
        return CheckResult(
            watch_id=watch.id,
            path=watch.path,
            status=status,
            problem=self.message,
            format=self.format,
            mode=self.tracking.mode,
            steps=kept.steps,
            first_step=kept.first_step,
            last_step=kept.last_step,
            new_steps=self.new_points,
            bytes_read=self.bytes_read,
            verdict=self.tracking.last_verdict,
            open_conditions=sorted(self.tracking.conditions),
        )

    def judgement(self) -> Judgement:
        """The verdict and what it rests on, which every "checked" outcome has (and only those)."""
        assert (
            self.verdict is not None and self.derivation is not None and self.evaluation is not None
        ), f"a check with status {self.status!r} judged nothing"
        return Judgement(self.verdict, self.derivation, self.evaluation)


class _Format(NamedTuple):
    format: str


class _Source(NamedTuple):
    location: Path
    format: str
    run_id: str | None


def find_source(path: Path, roots: list[Path]) -> _Source:
    """The one log the watched path stands for (RunReadError, PathRefused), as
    :func:`~rlmap_bot.runs.detect.discover` finds it; :mod:`rlmap_bot.runs.sources.local` reads it.
    """
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
    return _Source(location, cand.format, cand.run_id)


def _path_cursor(tracking: Tracking, found: _Source) -> Cursor | None:
    """Where the last check of this path stopped; None when the path stands for another file
    now (or was never read), which is read as a new run."""
    if tracking.source != str(found.location):
        return None
    if tracking.cursor and tracking.cursor.get("kind") == "path":
        return Cursor.model_validate(tracking.cursor)
    if tracking.mode == "lines" and tracking.reader:  # a line reader's position, kept alone
        data = {"mode": "lines", "file": tracking.source, "reader": tracking.reader}
        return Cursor(kind="path", data=data)
    return None


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
    access: Access,
    piece: int = PIECE,
) -> Outcome:
    """Read, scan, derive and judge; see the module
    docstring.  Never raises for the run's own problems.

    ``piece``: the most bytes of a line log read in one go (:data:`PIECE`).  A tracker run or a
    W&B run folder is read through its run source (:func:`~rlmap_bot.runs.sources.read_new`) with
    ``access``; a path through :class:`~rlmap_bot.runs.sources.local.LocalSource`; both from
    the cursor kept in ``tracking``.
    """
    tracking = tracking.model_copy(deep=True)
    tracking.checks += 1
    tracking.last_check_at = now
    if tracking.last_growth_at is None:
        tracking.last_growth_at = now  # the stall clock starts at the first check
    tracker = is_tracker(watch.path)
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
    fmt = ""
    pieces_read: Iterable[tuple[RunData, dict]]
    try:
        via_source = tracker or is_wandb_folder(resolved)
        if via_source:
            chunk, cursor = read_new(watch.path, tracking.cursor, aliases, access)
            if tracking.mode != "source" or chunk.reset:  # a first read, or the run started over
                kept = KeptRun()
                tracking.mode, tracking.source, tracking.reader = "source", watch.path, None
            pieces_read = [(chunk, cursor)]
        else:
            found = find_source(resolved, roots)
            cursor_in = _path_cursor(tracking, found)
            if cursor_in is None:
                # A new file behind the path (a folder's log replaced, a format change): a new run.
                kept, tracking.reader, tracking.signature = KeptRun(), None, None
                tracking.mode, tracking.source = None, str(found.location)
            local = LocalSource(
                SourceRef(kind="path", target=str(resolved), text=watch.path), resolved
            )
            keep = keeper(aliases, ())
            pieces_read = (
                (run, after.model_dump(mode="json"))
                for run, after in local.read_pieces(cursor_in, keep, piece)
            )
        for chunk, cursor in pieces_read:
            if chunk.reset:  # rotated, truncated, rewritten, or another run: start again
                kept = KeptRun()
            faults, found_faults, points = take(kept, faults, chunk, aliases)
            opened |= found_faults
            new_points += points
            bytes_read += chunk.bytes_read
            pieces += 1
            tracking.cursor = cursor
            fmt = chunk.format
        if not via_source:
            mode = (tracking.cursor or {}).get("data", {}).get("mode")
            tracking.mode = mode if mode in ("lines", "whole") else "source"
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
    derivation, verdict, shifted = judge(kept, faults, engine, aliases)
    opened |= shifted
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
        lead=is_lead(verdict),
    )
    # When to stop, from the forecast the verdict carries: said once each (watch/stopping.py).
    advise(evaluation, verdict.forecast, tracking, now)
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
    if out.status == "problem" and is_tracker(watch.path):
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
