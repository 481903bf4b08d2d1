"""The fault scan of a growing run: hard faults seen at full resolution as the points arrive
(NaN/inf, divergence, gradient spikes), kept between checks with when each is over.

The kept series (:mod:`rlmap_bot.runs.growing.kept`) is a sample, so a single NaN or
spike between kept points would go unseen; this scan looks at every new point,
with the last full-resolution points of the previous check as context, and
keeps a small state between checks (:class:`FaultState`).  The rules are the deriver's
(``loss_divergence``, ``grad_norm_spikes``, ``runs.stats``); what the watcher adds is when a
fault is *over*.  Each open or closed fault gives the typed finding a post carries
(:mod:`rlmap_bot.results.faults`, its ``finding()``):

* NaN/inf in a loss, gradient norm, KL loss or entropy opens ``nan`` by the deriver's rule
  (``runs.signals.faults``): on ``SUSTAINED_MIN`` steps in a row, or on ``RECURRING_SHARE`` of
  the steps; a step or two the trainer skipped (finite again after) opens nothing.  It clears
  after :data:`CLEAR_FINITE` finite steps in a row (a run resumed from a checkpoint).
* A jump beyond the spike rule held for ``JUMP_RUN`` steps opens ``divergence``,
  remembering the level before it; it clears when the median of the last
  ``SPIKE_WINDOW`` points since the jump is back inside the band the jump broke.
* Gradient-norm spikes are counted over the whole run, as ``diagnose --run`` does.
* A run that stops learning (``runs.signals.faults.not_learning``: a gradient norm exactly 0 or
  repeated, a zero loss with nothing to show otherwise, every group without reward spread, a
  learning rate of 0, over the window's trailing stretch) opens ``not_learning``; it clears
  as soon as the trailing stretch is broken (the weights move again).
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field

from rlmap_bot.results.faults import (
    DivergenceFinding,
    NanFinding,
    NotLearningKind,
    ShiftFinding,
    StallFinding,
    TailShift,
    TailShiftKind,
)
from rlmap_bot.runs import stats
from rlmap_bot.runs.aliases import AliasTable
from rlmap_bot.runs.model import RunData, Series
from rlmap_bot.runs.quantities import resolve
from rlmap_bot.runs.signals.faults import (
    RECURRING_MIN,
    RECURRING_SHARE,
    SUSTAINED_MIN,
    not_learning,
)

#: What counts for NaN/inf: the quantities the loss_divergence signal looks at.
NAN_QUANTITIES = ("loss", "policy_loss", "grad_norm", "kl_loss", "entropy")
#: Finite steps in a row that clear a NaN/inf fault.  Judgement: twice the rolling baseline
#: of the spike rules (25 points), so the resumed run's baselines are built only of points
#: after the fault; a loss scaler that skips a bad batch now and then (finite steps between
#: NaNs) never gets there, and a run that went NaN for good keeps the fault open.
CLEAR_FINITE = 2 * stats.SPIKE_WINDOW
#: Spike steps listed (the count stays exact).  Judgement: enough to point at on the chart and
#: in a post; bounded, so a pathological run cannot grow the stored state.
SPIKES_LISTED = 20
#: Metrics named in a NaN/inf finding, and bad points whose metric names are collected per
#: check: a post names where it happened, not every metric of a run that went NaN everywhere.
NAN_NAMES, NAN_NAMED_POINTS = 6, 20


class NanFault(BaseModel):
    """NaN/inf in the loss-like metrics, and the finite steps counted since the last one."""

    active: bool = True
    first_step: int
    last_bad_step: int
    metrics: list[str] = Field(default_factory=list)
    bad_steps: int = 0
    finite_run: int = 0
    cleared_step: int | None = None
    #: Bursts before this one that were over (finite again): their steps and where the first began,
    #: so a post counts every NaN/inf step of the run, as diagnose does.
    earlier_steps: int = 0
    earlier_first: int | None = None

    def finding(self) -> NanFinding:
        return NanFinding(
            active=self.active,
            first_step=self.first_step,
            last_step=self.last_bad_step,
            metrics=self.metrics,
            bad_steps=self.bad_steps,
            earlier_steps=self.earlier_steps,
            earlier_first_step=self.earlier_first,
            clear_after=CLEAR_FINITE,
            cleared_step=self.cleared_step,
        )


class JumpFault(BaseModel):
    """A sustained jump of the loss: where, from which level and spread, and its level now."""

    active: bool = True
    step: int
    metric: str
    baseline: float
    sigma: float
    level: float | None = None
    cleared_step: int | None = None

    def finding(self) -> DivergenceFinding:
        return DivergenceFinding(
            active=self.active,
            step=self.step,
            metric=self.metric,
            baseline=self.baseline,
            sigma=self.sigma,
            level=self.level,
            held=stats.JUMP_RUN,
            window=stats.SPIKE_WINDOW,
            cleared_step=self.cleared_step,
        )


class StallFault(BaseModel):
    """A run that stopped learning: which sign, on which metric, since which step."""

    active: bool = True
    kind: NotLearningKind
    metric: str
    first_step: int
    last_step: int
    count: int
    cleared_step: int | None = None

    def finding(self) -> StallFinding:
        return StallFinding(
            active=self.active,
            cause=self.kind,
            metric=self.metric,
            first_step=self.first_step,
            last_step=self.last_step,
            cleared_step=self.cleared_step,
        )


class ShiftFault(BaseModel):
    """Sharp changes at the run's tail (:mod:`rlmap_bot.runs.signals.shifts`), one fault for all."""

    active: bool = True
    first_step: int
    kinds: list[TailShiftKind] = Field(default_factory=list)
    details: list[str] = Field(default_factory=list)
    levels: dict[str, list[float]] = Field(
        default_factory=dict, description="quantity -> [before, after]"
    )
    cleared_step: int | None = None

    def finding(self) -> ShiftFinding:
        return ShiftFinding(
            active=self.active,
            first_step=self.first_step,
            causes=self.kinds,
            details=self.details,
            cleared_step=self.cleared_step,
        )


class NanCount(BaseModel):
    """Every NaN/inf step seen so far, and the stretch in a row now: what decides whether they
    are a fault or steps the trainer skipped."""

    steps: int = Field(0, description="steps scanned (any loss-like metric logged)")
    bad: int = 0
    first_bad: int | None = None
    streak: int = 0
    streak_start: int | None = None
    metrics: list[str] = Field(default_factory=list)


class FaultState(BaseModel):
    nan: NanFault | None = None
    nan_count: NanCount = Field(default_factory=NanCount)
    shift: ShiftFault | None = None
    divergence: JumpFault | None = None
    not_learning: StallFault | None = None
    spikes: int = 0
    spike_steps: list[int] = Field(default_factory=list)
    spike_metric: str | None = None
    grad_seen: bool = False
    loss_seen: bool = False

    def active(self, name: str) -> bool:
        fault = getattr(self, name)
        return bool(fault is not None and fault.active)

    def found(self, name: str) -> NanFault | JumpFault | StallFault | ShiftFault | None:
        """The fault a condition ``fault:NAME`` stands for (None: the scan holds none)."""
        return {
            "nan": self.nan,
            "divergence": self.divergence,
            "not_learning": self.not_learning,
            "shift": self.shift,
        }.get(name)


def _window(tails: RunData, chunk: RunData) -> tuple[RunData, int]:
    """Context (the tails, before the chunk's first
    step) joined to the chunk; and that first step.
    """
    firsts = [int(s.steps[0]) for s in chunk.series.values() if len(s)]
    boundary = min(firsts)
    series: dict[str, Series] = {}
    for name in set(tails.series) | set(chunk.series):
        parts_s, parts_v = [], []
        if name in tails.series:
            t = tails.series[name]
            keep = t.steps < boundary
            parts_s.append(t.steps[keep])
            parts_v.append(t.values[keep])
        if name in chunk.series:
            parts_s.append(chunk.series[name].steps)
            parts_v.append(chunk.series[name].values)
        steps = np.concatenate(parts_s)
        if steps.size:
            series[name] = Series(name=name, steps=steps, values=np.concatenate(parts_v))
    return RunData(
        path=chunk.path, format=chunk.format, metrics=chunk.metrics, series=series
    ), boundary


def scan(
    state: FaultState,
    tails: RunData,
    chunk: RunData,
    aliases: AliasTable,
    run_points: int,
    first: bool,
) -> tuple[FaultState, set[str]]:
    """Scan the chunk's new points; returns the new state and the faults that opened in it.

    ``run_points`` is the run's length in points after this chunk (for the warm-up on the
    first read); ``first`` says nothing was read before (no context, warm-up applies).
    """
    state = state.model_copy(deep=True)
    opened: set[str] = set()
    if not any(len(s) for s in chunk.series.values()):
        return state, opened
    window, boundary = _window(tails, chunk)
    quantities = resolve(window, aliases).series
    warm = stats.warmup(run_points) if first else 0

    # -- NaN / inf, step by step over every loss-like quantity --------------------------------
    present = [quantities[q] for q in NAN_QUANTITIES if q in quantities]
    if present:
        state.loss_seen = True
        steps = np.unique(np.concatenate([q.steps[q.steps >= boundary] for q in present]))
        bad = np.zeros(steps.size, dtype=bool)
        names: dict[int, set[str]] = {}
        for q in present:
            new = q.steps >= boundary
            qs, qv = q.steps[new], q.values[new]
            idx = np.searchsorted(steps, qs)
            nonfinite = ~np.isfinite(qv)
            bad[idx[nonfinite]] = True
            for i in idx[nonfinite][:NAN_NAMED_POINTS]:
                names.setdefault(int(i), set()).add(q.label)
        bad_at = np.flatnonzero(bad)
        end = int(bad_at[-1]) + 1 if bad_at.size else 0
        start = int(bad_at[0]) if bad_at.size else 0
        state.nan_count.steps += start
        if start > 0:
            state.nan_count.streak = 0  # finite steps came before this chunk's first bad one
        for i in range(start, end):  # only the stretch that holds bad steps
            state.nan_count.steps += 1
            _nan_step(state, int(steps[i]), bool(bad[i]), names.get(i, set()), opened)
        state.nan_count.steps += int(steps.size) - end
        if steps.size > end:
            state.nan_count.streak = 0
        fault = state.nan
        if (
            fault is not None and fault.active and steps.size > end
        ):  # all finite after the last bad step
            need = CLEAR_FINITE - fault.finite_run
            rest = steps[end:]
            if rest.size >= need:
                fault.active, fault.cleared_step = False, int(rest[need - 1])
            fault.finite_run += int(rest.size)

    # -- divergence: a sustained jump, and whether the level came back ------------------------
    loss = quantities.get("loss") or quantities.get("policy_loss")
    if loss is not None:
        ok = np.isfinite(loss.values)
        steps, values = loss.steps[ok], loss.values[ok]
        n_ctx = int(np.sum(steps < boundary))
        jump = state.divergence
        if (jump is None or not jump.active) and steps.size > stats.SPIKE_WINDOW + stats.JUMP_RUN:
            hits = stats.jump_hits(values, warm).astype(np.int64)
            held = (
                np.convolve(hits, np.ones(stats.JUMP_RUN, dtype=np.int64), mode="valid")
                == stats.JUMP_RUN
            )
            held[: max(0, n_ctx - stats.JUMP_RUN + 1)] = (
                False  # the jump's last needed point must be new
            )
            if held.any():
                start = int(np.argmax(held))
                med, sig = stats.rolling_reference(values)
                state.divergence = jump = JumpFault(
                    step=int(steps[start]),
                    metric=loss.label,
                    baseline=float(med[start]),
                    sigma=float(sig[start]),
                )
                opened.add("divergence")
        since = values[steps >= jump.step] if jump is not None else values
        if jump is not None and jump.active and since.size:
            # The level now: the median of the last 25 points, counting only points since the jump
            # (a median that still holds pre-jump points would call the jump over too soon).
            recent = float(np.median(since[-stats.SPIKE_WINDOW :]))
            jump.level = recent
            if not bool(stats.breaks_band(recent, jump.baseline, jump.sigma)):
                jump.active, jump.cleared_step = False, int(steps[-1])

    # -- not learning: a trailing stretch of the window (the tails give 64 points of context) ---
    _stall(state, quantities, opened)

    # -- gradient-norm spikes, whole run ------------------------------------------------------
    grad = quantities.get("grad_norm")
    if grad is not None:
        state.grad_seen = True
        ok = np.isfinite(grad.values)
        steps, values = grad.steps[ok], grad.values[ok]
        n_ctx = int(np.sum(steps < boundary))
        for spike in stats.spikes(steps, values, max(n_ctx, warm)):
            state.spikes += 1
            state.spike_steps = (state.spike_steps + [spike.step])[-SPIKES_LISTED:]
            state.spike_metric = grad.label
    return state, opened


def _stall(state: FaultState, quantities, opened: set[str]) -> None:
    found = not_learning(quantities)
    fault = state.not_learning
    if found:
        now = found[0]
        if fault is None or not fault.active:
            state.not_learning = StallFault(
                kind=now.kind,
                metric=now.metric,
                first_step=now.first_step,
                last_step=now.last_step,
                count=now.count,
            )
            opened.add("not_learning")
        else:
            fault.last_step = now.last_step
            fault.count = max(fault.count, now.count)
    elif fault is not None and fault.active:
        last = max(
            (int(q.steps[-1]) for q in quantities.values() if q.steps.size), default=fault.last_step
        )
        fault.active, fault.cleared_step = False, last


def track_shift(
    state: FaultState, found: list[TailShift], series, last_step: int | None
) -> set[str]:
    """Open, widen or clear the ``shift`` fault from a check's tail findings; the faults opened.

    ``found`` are the derivation's shift faults (on the kept sample), ``series(quantity)`` its
    quantity series.  An open shift clears when every changed quantity's tail median is back on
    its earlier level's side of the midpoint between the two levels: the test itself stops firing
    as soon as the new level becomes the run's recent level, which is no recovery.
    """
    from rlmap_bot.runs.signals.shifts import QUANTITY_OF as quantity_of
    from rlmap_bot.runs.signals.shifts import tail_median

    fault = state.shift
    if found and (fault is None or not fault.active):
        fault = state.shift = ShiftFault(first_step=min(f.first_step for f in found))
        opened = {"shift"}
    else:
        opened = set()
    if fault is None or not fault.active:
        return opened
    for f in found:
        if f.kind not in fault.kinds:
            fault.kinds.append(f.kind)
            fault.details.append(f.detail)
            fault.levels[quantity_of[f.kind]] = [f.before, f.after]
    if found:
        return opened
    back = []
    for q, (before, after) in fault.levels.items():
        s = series(q)
        now = tail_median(s) if s is not None else None
        back.append(now is not None and (now - (before + after) / 2) * (before - after) > 0)
    if back and all(back):
        fault.active, fault.cleared_step = False, last_step
    return opened


def _nan_step(state: FaultState, step: int, bad: bool, names: set[str], opened: set[str]) -> None:
    fault, count = state.nan, state.nan_count
    if bad:
        count.bad += 1
        count.first_bad = step if count.first_bad is None else count.first_bad
        count.streak += 1
        count.streak_start = step if count.streak == 1 else count.streak_start
        count.metrics = sorted(set(count.metrics) | names)[:NAN_NAMES]
        if fault is None or not fault.active:
            sustained = count.streak >= SUSTAINED_MIN
            recurring = count.bad >= RECURRING_MIN and count.bad >= RECURRING_SHARE * count.steps
            if not (sustained or recurring):
                return  # a step the trainer skipped, so far: a note, not a fault
            first = count.streak_start if sustained else count.first_bad
            assert first is not None
            over = fault  # a burst before, finite again since
            fault = state.nan = NanFault(
                first_step=first,
                last_bad_step=step,
                metrics=count.metrics,
                bad_steps=count.streak if sustained else count.bad,
                earlier_steps=over.earlier_steps + over.bad_steps if over else 0,
                earlier_first=(over.earlier_first or over.first_step) if over else None,
            )
            opened.add("nan")
            return
        fault.last_bad_step, fault.finite_run = step, 0
        fault.bad_steps += 1
        fault.metrics = sorted(set(fault.metrics) | names)[:NAN_NAMES]
    else:
        count.streak = 0
        if fault is not None and fault.active:
            fault.finite_run += 1
            if fault.finite_run >= CLEAR_FINITE:
                fault.active, fault.cleared_step = False, step
