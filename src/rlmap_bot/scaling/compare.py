"""Runs side by side: whose ceiling is higher, which is only faster, and the batch decision.

ScaleRL found that most recipe choices move a run's efficiency (how soon it gets there), not its
ceiling (catalog entry ``scalerl``); a comparison says which of the two separates the runs, with
the intervals behind it. The batch decision follows the catalog's signal ``batch_doubling_speedup``:
steps to a common target at batch B over steps at 2B, and, when step times are logged, which run
gets there sooner on the clock (the question "When Do Larger Batches Help Scale LLM RL?" asks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlmap_bot.results.scaling import BatchDecision, Comparison, Forecast
from rlmap_bot.scaling.curves import smoothed
from rlmap_bot.scaling.forecast import read_curve
from rlmap_bot.scaling.outlook import outlook

#: One run is "faster" when it needs at most this share of the other's steps to the common target.
#: Judgement: a quarter fewer steps is more than the step-to-step noise moves a crossing on the
#: generated pairs (tests/test_scaling.py), and less than the doubling a recipe change buys.
FASTER_RATIO = 0.8
#: The batch decision's common target: this share of the way from the runs' common start to the
#: lower of their final levels. Judgement: near enough to the end that it measures the approach,
#: far enough below it that both runs get there.
TARGET_SHARE = 0.8
#: Efficiency is read, as ScaleRL reads it (its C_mid), as the steps a run takes to half of its own
#: gain: a run with a higher ceiling is not "faster" only because it climbs further.
OWN_SHARE = 0.5


@dataclass
class RunCurve:
    """One run's curve for a comparison: its label, x (steps or compute), y, and optionally the
    seconds each step took and its batch size."""

    label: str
    x: np.ndarray
    y: np.ndarray
    seconds: np.ndarray | None = None
    batch: float | None = None


def steps_to(run: RunCurve, target: float, rising: bool = True) -> float | None:
    """The first step at which the smoothed curve reaches ``target``; past the run's end, the
    step at which its fitted sigmoid does; None when neither does."""
    s = smoothed(run.y)
    hit = np.nonzero(s >= target if rising else s <= target)[0]
    if hit.size:
        return float(run.x[hit[0]])
    seen = read_curve(run.x, run.y, look_back=False)
    if seen.fit is None:
        return None
    c = seen.fit.curve
    whole = c.a - c.r0
    if abs(whole) < 1e-12:
        return None
    share = (target - c.r0) / whole
    if not 0 < share < 1:
        return None
    return c.reach(share) - seen.shift


def compare_runs(
    runs: list[RunCurve], metric: str, quantity: str, axis: str = "steps"
) -> Comparison:
    """Fit each run and say how they differ (``kind``: ceiling, efficiency, both, none, unclear)."""
    forecasts = [
        outlook(r.x, r.y, source=r.label, metric=metric, quantity=quantity, axis=axis) for r in runs
    ]
    out = Comparison(axis=axis, metric=metric, forecasts=forecasts, labels=[r.label for r in runs])
    usable = [(r, f) for r, f in zip(runs, forecasts, strict=False) if f.asymptote is not None]
    fell = [f.source for _, f in usable if f.fell]
    if fell:
        # The verdict compares the levels the fits tend to; for a run that came down that level is
        # where it settles, not a ceiling it climbs to, and the reader should know which is which.
        out.notes.append(
            f"{', '.join(fell)} came down since {'its' if len(fell) == 1 else 'their'} start: "
            "for a run that fell, its 'ceiling' here is the level it settles at"
        )
    if len(usable) < 2:
        names = ", ".join(f"{f.source} ({f.abstain})" for f in forecasts if f.abstain)
        out.verdict = f"not enough to compare yet: {names}" if names else "not enough to compare"
        return out
    by_ceiling = sorted(
        usable,
        key=lambda rf: rf[1].asymptote.value,  # type: ignore[union-attr]
        reverse=True,
    )
    (top_run, top), (_, nxt) = by_ceiling[0], by_ceiling[1]
    assert top.asymptote is not None and nxt.asymptote is not None
    # The difference's own 80% interval (the two half-widths in quadrature) must exclude zero.
    half = math.hypot(
        top.asymptote.high - top.asymptote.value, nxt.asymptote.value - nxt.asymptote.low
    )
    ceiling_differs = top.asymptote.value - nxt.asymptote.value > half
    if ceiling_differs:
        out.higher_ceiling = top_run.label
    spans = {r.label: half_gain_steps(r, f) for r, f in usable}
    known = {k: v[1] for k, v in spans.items() if v is not None}
    faster = None
    if len(known) >= 2:
        ordered = sorted(known.items(), key=lambda kv: kv[1])
        (first, s1), (second, s2) = ordered[0], ordered[1]
        first_late, second_early = spans[first][2], spans[second][0]  # type: ignore[index]
        clear = first_late is not None and second_early is not None and first_late < second_early
        if clear and s2 > 0 and max(s1, 1.0) / max(s2, 1.0) <= FASTER_RATIO:
            faster = first
    out.faster = faster
    out.kind = (
        "both"
        if ceiling_differs and faster
        else "ceiling"
        if ceiling_differs
        else "efficiency"
        if faster
        else "none"
    )
    out.verdict = _verdict(out, top, nxt, known)
    return out


def half_gain_steps(
    run: RunCurve, forecast: Forecast
) -> tuple[float | None, float, float | None] | None:
    """The step at which the run has made half of its own gain (from its start to its ceiling),
    with the earliest and latest steps that the noise of the smoothed curve allows (the crossings
    of the half-gain level moved by 1.28 standard errors of a smoothed point either way: 80%)."""
    from rlmap_bot.scaling.curves import noise_sd

    assert forecast.asymptote is not None
    start = float(np.mean(run.y[: max(3, run.y.size // 10)]))
    gain = forecast.asymptote.value - start
    if abs(gain) < 1e-12:
        return None
    rising = gain > 0
    level = start + OWN_SHARE * gain
    mid = steps_to(run, level, rising)
    if mid is None:
        return None
    d = 1.2816 * noise_sd(run.y) / np.sqrt(max(3, run.y.size // 20))
    sign = 1.0 if rising else -1.0
    early = steps_to(run, level - sign * d, rising)
    late = steps_to(run, level + sign * d, rising)
    return early, mid, late


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def _verdict(out: Comparison, top: Forecast, nxt: Forecast, reach: dict) -> str:
    a, b = top.asymptote, nxt.asymptote
    assert a is not None and b is not None
    ceilings = (
        f"{top.source} has the higher ceiling: {_fmt(a.value)} ({_fmt(a.low)}-{_fmt(a.high)}) "
        f"against {_fmt(b.value)} ({_fmt(b.low)}-{_fmt(b.high)})"
        if out.higher_ceiling
        else f"their ceilings cannot be told apart: {top.source} {_fmt(a.value)} "
        f"({_fmt(a.low)}-{_fmt(a.high)}), {nxt.source} {_fmt(b.value)} "
        f"({_fmt(b.low)}-{_fmt(b.high)})"
    )
    if out.faster:
        steps = ", ".join(
            f"{k} at {int(round(v)):,}" for k, v in sorted(reach.items(), key=lambda kv: kv[1])
        )
        speed = f"{out.faster} is faster: it makes half of its gain first ({steps} {out.axis})"
        if out.kind == "efficiency":
            how = "how soon, not (as far as the fits tell) how high"
            speed += f"; what separates them is efficiency: {how}"
    else:
        speed = "neither makes half of its gain clearly sooner"
    return f"{ceilings}; {speed}."


def batch_decision(small: RunCurve, large: RunCurve) -> BatchDecision:
    """Steps to a common target at the smaller and the larger batch, the speed-up per doubling
    (``batch_doubling_speedup``), and with step times which gets there sooner on the clock."""
    assert small.batch is not None and large.batch is not None
    if large.batch < small.batch:
        small, large = large, small
    assert small.batch is not None and large.batch is not None
    start = float(np.mean([np.mean(r.y[: max(3, r.y.size // 10)]) for r in (small, large)]))
    ends = [float(smoothed(r.y)[-1]) for r in (small, large)]
    lower = min(ends)
    rising = lower >= start
    target = start + TARGET_SHARE * (lower - start)
    out = BatchDecision(
        small=small.label,
        large=large.label,
        batch_small=small.batch,
        batch_large=large.batch,
        target=target,
    )
    s_small, s_large = steps_to(small, target, rising), steps_to(large, target, rising)
    out.steps_small = None if s_small is None else int(round(s_small - small.x[0]))
    out.steps_large = None if s_large is None else int(round(s_large - large.x[0]))
    if not out.steps_small or not out.steps_large or large.batch <= small.batch:
        out.note = "one of the runs does not reach the common target: no speed-up to read"
        return out
    ratio = out.steps_small / out.steps_large
    doublings = math.log2(large.batch / small.batch)
    out.speedup = ratio ** (1 / doublings) if doublings > 0 else None
    if abs(doublings - 1) > 0.05:
        out.note = (
            f"the batches differ by {large.batch / small.batch:.2g}x, not 2x: the speed-up is per "
            "doubling, read as if each doubling bought the same"
        )
    if small.seconds is not None and large.seconds is not None:
        out.seconds_small = _seconds_until(small, s_small)
        out.seconds_large = _seconds_until(large, s_large)
        if out.seconds_small and out.seconds_large:
            out.wall_clock = large.label if out.seconds_large < out.seconds_small else small.label
    return out


def _seconds_until(run: RunCurve, step: float | None) -> float | None:
    """The logged step times summed up to ``step``; None without them or past them."""
    if step is None or run.seconds is None or run.seconds.size != run.x.size:
        return None
    upto = run.x <= step
    if upto.all() and step > run.x[-1]:
        return None
    return float(np.nansum(run.seconds[upto]))
