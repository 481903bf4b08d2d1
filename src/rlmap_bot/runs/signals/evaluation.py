"""The evaluation signals: the held-out score's trend over sparse validations, and how far it moved
from the evaluation before training."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from rlmap_bot.results.runs import SignalSource
from rlmap_bot.runs import stats
from rlmap_bot.runs.signals import levels
from rlmap_bot.runs.signals.base import UNIT_TOL, Missing, Reading, Readings, finite_points

#: Sparse validation: drop the first evaluation (it often jumps: format learning, per the
#: notes) and judge at least 6 recent evaluations, 3 against 3 (judgement: the fewest where a
#: median means anything); with fewer than 5 evaluations after the first, no trend.
EVAL_RECENT_MIN, EVAL_MIN = 6, 5
#: eval_improvement: the median of the last 3 evaluations against the pre-training one
#: (judgement: 3 damps one noisy eval without reaching back into older checkpoints).
EVAL_LAST = 3


#: How many standard errors of the difference two medians of evaluations must differ by to be a
#: change: two, about a 95% two-sided interval for an evaluation set's noise alone (judgement: the
#: usual bar; a 30-problem pass@1 then needs about four problems between two windows of three).
EVAL_Z = 2.0
#: The peak a fall is measured from: the highest median of this many consecutive evaluations
#: (judgement: as the windows, the fewest where a median shrugs off one lucky evaluation).
PEAK_RUN = 3
#: An evaluation set's number of trials (problems x samples) is read from the lattice its scores
#: sit on: a pass rate over N trials is a multiple of 1/N.  Up to LATTICE_MAX trials, the scores
#: within LATTICE_TOL of a multiple (printed floats), with at least LATTICE_MIN distinct scores
#: (LATTICE_MIN_LARGE past LATTICE_LARGE trials).  Measured by the odds of a chance fit: scores
#: off any lattice fit a given N with odds of about 2 * LATTICE_TOL * N each, so over every N up
#: to 200 two scores fit by chance about 3 times in 100 (and then the noise is that of at most 200
#: trials, too large rather than too small), and six up to 2,000 about 2 in 100.
LATTICE_MAX, LATTICE_LARGE, LATTICE_TOL = 2000, 200, 5e-5
LATTICE_MIN, LATTICE_MIN_LARGE = 2, 6


def trials_of(values: np.ndarray) -> int | None:
    """The number of trials N a set of 0-1 scores are pass rates over (each a multiple of 1/N),
    the smallest that fits; None when they fit no lattice up to LATTICE_MAX or are not 0-1."""
    distinct = np.unique(np.round(values, 9))
    if distinct.size < LATTICE_MIN or distinct.min() < -UNIT_TOL or distinct.max() > 1 + UNIT_TOL:
        return None
    # Scores printed to d decimals sit on the lattice of 10^-d whatever the set: when that is the
    # lattice found, it is the printing's and says nothing about the trials (a set of 500 or 400
    # has a lattice of its own, coarser than its printing).
    printed = next(
        (10**d for d in range(1, 7) if np.allclose(distinct * 10**d, np.round(distinct * 10**d))),
        None,
    )
    n = np.arange(1, LATTICE_MAX + 1, dtype=float)[:, None]
    scaled = distinct[None, :] * n
    fits = np.all(np.abs(scaled - np.round(scaled)) <= LATTICE_TOL * n, axis=1)
    for count in np.flatnonzero(fits) + 1:
        if count == printed:
            return None
        if count <= LATTICE_LARGE or distinct.size >= LATTICE_MIN_LARGE:
            return int(count)
    return None


def eval_noise(values: np.ndarray, level: float) -> tuple[float, str]:
    """One evaluation's noise (a standard deviation) and where it comes from: the binomial
    standard error of a pass rate over the set's trials where the scores say how many, else
    the curve's own step-to-step spread."""
    trials = trials_of(values)
    if trials is not None:
        p = min(max(level, 0.5 / trials), 1 - 0.5 / trials)
        return math.sqrt(p * (1 - p) / trials), (
            f"one evaluation's noise {math.sqrt(p * (1 - p) / trials):.3g}, the binomial standard "
            f"error of a pass rate over {trials} trials (its scores are multiples of 1/{trials})"
        )
    sigma = stats.step_noise(values)
    return sigma, f"one evaluation's noise {sigma:.3g}, from the curve's step-to-step spread"


def _median_se(sigma: float, *counts: int) -> float:
    """The standard error of a difference of medians of these many evaluations."""
    return levels.MEDIAN_SE * sigma * math.sqrt(sum(1 / c for c in counts))


def _past_peak(
    steps: np.ndarray, values: np.ndarray, last: int, sigma: float, floor: float
) -> tuple[float, float, int] | None:
    """A score past its peak and below it by more than its noise (Gao et al.'s shape): the drop
    from the highest median of PEAK_RUN evaluations to the median of the last ``last``, the band
    it must pass, and the peak's step; None when it did not peak before them or did not fall."""
    if values.size < PEAK_RUN + last:
        return None
    runs = np.array(
        [np.median(values[i : i + PEAK_RUN]) for i in range(values.size - PEAK_RUN + 1)]
    )
    top = int(np.argmax(runs[: values.size - last - PEAK_RUN + 1]))
    peak = float(runs[top])
    if float(np.max(runs)) > peak:  # the highest level is at the end, not before it
        return None
    drop = peak - float(np.median(values[-last:]))
    # The highest of many medians sits above the curve by chance: the expected largest of m
    # normal draws is about sqrt(2 ln m) standard deviations, and overlapping runs of PEAK_RUN
    # are about m / PEAK_RUN independent ones.  Added to the band, so a curve that saturates
    # in its noise has no peak to fall from.
    chosen = max(runs.size - last, 1) / PEAK_RUN
    lucky = math.sqrt(2 * math.log(max(chosen, 1.0))) * _median_se(sigma, PEAK_RUN)
    band = max(floor, EVAL_Z * _median_se(sigma, PEAK_RUN, last) + lucky)
    after = slice(top, values.size)
    if drop <= band or stats.sen_slope(steps[after], values[after]) >= 0:
        return None
    return drop, band, int(steps[top + PEAK_RUN // 2])


def _shortfall(r: Readings, rs: np.ndarray, half: int, t: stats.Trend, first: float) -> float:
    """How far, in flat bands, a flat held-out score fell short of following the training reward
    over the same steps: the reward's change there as a share of its gain since its start (a
    shape, free of either curve's scale), times the held-out's own gain since its first
    evaluation, is what it would have moved by; 0 when there is nothing to follow."""
    q = r.q.get("task_reward")
    if q is None or t.band <= 0:
        return 0.0
    steps, values = finite_points(q)
    before = values[(steps >= rs[0]) & (steps <= rs[half - 1])]
    after = values[(steps >= rs[half]) & (steps <= rs[-1])]
    if before.size == 0 or after.size == 0 or values.size < stats.FIRST_POINTS:
        return 0.0
    start = float(np.median(values[: stats.FIRST_POINTS]))
    p0, p1 = float(np.median(before)), float(np.median(after))
    if p1 - start <= 0:
        return 0.0
    share = min(max((p1 - p0) / (p1 - start), 0.0), 1.0)
    expected = share * max(t.after - first, 0.0)
    return (expected - t.change) / t.band


def heldout_score_trend(r: Readings) -> Reading:
    q = r.need("heldout_score", "a held-out (validation) score")
    steps, values = finite_points(q)
    if steps.size - 1 < EVAL_MIN:
        raise Missing(f"{q.label} has {steps.size} evaluations; at least {EVAL_MIN + 1} are needed")
    lattice = values
    steps, values = steps[1:], values[1:]  # the first evaluation often jumps (format learning)
    win = stats.windows(steps, r.window) if r.window is not None else None
    n_recent = (win.recent.stop - win.recent.start) if win else 0
    k = n_recent if n_recent >= EVAL_RECENT_MIN else max(EVAL_RECENT_MIN, math.ceil(steps.size / 2))
    k = min(k, steps.size)
    rs, rv = steps[-k:], values[-k:]
    half = k // 2
    sigma, noise_words = eval_noise(lattice, float(np.median(rv)))
    se = _median_se(sigma, half, k - half)
    t = stats.judge_trend(rs[:half], rv[:half], rs[half:], rv[half:], values, EVAL_Z * se)
    direction, detail, margin = t.direction, t.describe(), t.margin
    floor = t.band if t.band > EVAL_Z * se else 0.0  # the band's share-of-scale part, if larger
    # Falling is Gao et al.'s shape: past its peak and below it by more than its noise; a later
    # half below the earlier one with no such peak is a saturated score's noise.
    peaked = _past_peak(steps, values, k - half, sigma, floor)
    if peaked is not None:
        drop, band, at = peaked
        direction, margin = "falling", drop / band
        detail += (
            f"; past its peak at step {at}: {-drop:+.3g} from it against a band of "
            f"\u00b1{band:.3g}: {stats.margin_words(margin)}"
        )
    elif direction == "falling":
        direction, margin = "flat", 0.0
        detail += "; read as flat: not below its peak by more than its noise"
    detail += f"; {noise_words}"
    lv = stats.level(values)  # against the first evaluation after the dropped one
    if lv is not None:
        detail += "; " + lv.describe(steps)
        counts = (
            lv.first_slice.stop - lv.first_slice.start,
            lv.last_slice.stop - lv.last_slice.start,
        )
        # a fall to a quarter of the start counts only past the noise (one AIME problem is not it)
        if (
            lv.collapsed()
            and direction != "falling"
            and lv.first - lv.last > EVAL_Z * _median_se(sigma, *counts)
        ):
            direction, margin = "falling", math.inf
            detail += (
                f"; read as falling: now at most {stats.COLLAPSED_SHARE:.0%} of its first level"
            )
    if direction == "flat":
        margin = _shortfall(r, rs, half, t, float(values[0]))
        detail += (
            f"; against the training reward's shape over the same steps it fell short by "
            f"{max(margin, 0):.1f} bands"
            if "task_reward" in r.q
            else ""
        )
    if (
        direction == "falling"
    ):  # a score that rose and then fell: where it peaked says more than its ends
        top = int(np.argmax(values))
        detail += f"; highest {values[top]:.3g} at step {int(steps[top])}"
    return direction, SignalSource(
        metric=q.label,
        window=f"the last {k} evaluations, steps {int(rs[0])}-{int(rs[-1])}",
        method=f"sparse validation: first evaluation dropped, the later half of the recent "
        f"evaluations against the earlier half, flat within max(5% of the scale, {EVAL_Z:g} "
        f"standard errors of the difference) with Sen's slope agreeing; falling too when past its "
        f"peak (the highest median of 3 evaluations) by more than such a band; a level at most a "
        f"quarter of the first evaluations' reads falling",
        detail=detail,
        margin=round(margin, 3) if math.isfinite(margin) else None,
        start=int(rs[half]),
        end=int(rs[-1]),
        baseline_start=int(rs[0]),
        baseline_end=int(rs[half - 1]),
    )


def eval_improvement(r: Readings) -> Reading:
    q = r.need("heldout_score", "a held-out (validation) score")
    steps, values = finite_points(q)
    reward = r.q.get("task_reward")
    first_train = int(reward.steps[0]) if reward is not None and reward.steps.size else None
    if steps.size < EVAL_LAST + 1 or first_train is None or steps[0] >= first_train:
        raise Missing(
            "needs an evaluation before training started (val_before_train) as the baseline"
        )
    base = float(values[0])
    last = float(np.median(values[-EVAL_LAST:]))
    in_unit = values.min() >= -UNIT_TOL and values.max() <= 1 + UNIT_TOL
    scale = 100.0 if in_unit else 1.0
    value = round((last - base) * scale, 3)
    unit = "points (percent)" if in_unit else "score units"
    return value, SignalSource(
        metric=q.label,
        window=f"step {int(steps[0])} vs steps {int(steps[-EVAL_LAST])}-{int(steps[-1])}",
        method=f"median of the last {EVAL_LAST} evaluations minus the evaluation before training, "
        f"in {unit}",
        detail=f"{base:.3g} -> {last:.3g}",
        start=int(steps[-EVAL_LAST]),
        end=int(steps[-1]),
        baseline_start=int(steps[0]),
        baseline_end=int(steps[0]),
    )


SIGNALS: dict[str, Callable[[Readings], Reading]] = {
    "heldout_score_trend": heldout_score_trend,
    "eval_improvement": eval_improvement,
}
