"""Levels: each quantity's first logged values against its last, and the run's overall direction.

The trend signals say what the recent window does; a level says where the run stands against
its start, so a fall (or rise) that happened before the judged windows is never missed.  For
every quantity read, the medians of the first and last tenth and fifth of its finite points
(at least one point each) and of its first 3 points (the start, warm-up included), their
ratios, and an overall reading:

* *collapsed*: a quantity that starts above 0 is now at or below a quarter of
  max(start, first tenth) (stats.COLLAPSED_SHARE; Cui et al.'s 73% fall within 200 steps);
* *rising* / *falling*: the last fifth's median moved from the first fifth's by more than
  10% of the first fifth's size and more than the standard error of that difference; if not,
  and both the first fifth and the last tenth sit beyond such a band from the start on the
  same side, the direction of that change (the run's largest change may be at its very start);
* *flat* otherwise; *ambiguous* below 3 points.

Collapse applies to quantities that cannot go below 0 (entropy, length, a gradient norm, a
share, a KL); a surrogate loss is signed, so it only rises or falls.

Judgement: 10% is the smallest change a researcher reads as a direction over a whole run (twice
the 5% of the recent-window trend, as a whole run is noisier to eyeball).  The standard error
of a median of k points is about 1.25 sigma / sqrt(k), sigma the step-to-step noise; a
difference of two such medians must exceed the root of their summed squares, which keeps a
sparse 0/0.125 reward from "rising" on a lucky batch while a loss averaged over 100 steps can.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from rlmap_bot.results.runs import LevelReading
from rlmap_bot.runs import stats
from rlmap_bot.runs.quantities import QuantitySeries

LEVEL_BAND = 0.10
# : Fewest points for an overall reading.  Judgement:
# with 2 points any direction is one step's noise.
LEVEL_MIN_POINTS = 3
#: Sparse quantities: their first point is a whole evaluation (a benchmark average), a level in
#: itself, so a change at the start is measured from that first value rather than a median of three.
SPARSE = ("heldout_score",)
#: Signed quantities: a loss can cross 0, so it is never "collapsed".
SIGNED = ("loss", "policy_loss", "kl_loss")
#: The standard error of a median of normal noise is about 1.25 sigma / sqrt(k).
MEDIAN_SE = 1.2533


def _count(n: int, share: float) -> int:
    return max(1, math.ceil(share * n))


def _median_of(values: np.ndarray, share: float, last: bool) -> float:
    k = _count(values.size, share)
    part = values[-k:] if last else values[:k]
    return float(np.median(part))


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 6) if b != 0 else None


def _direction(delta: float, ref: float, noise: float) -> str | None:
    if abs(delta) > max(LEVEL_BAND * abs(ref), noise) and delta != 0:
        return "rising" if delta > 0 else "falling"
    return None


def reading(q: QuantitySeries) -> LevelReading | None:
    """The level reading of one quantity's finite points; None when it has none."""
    ok = np.isfinite(q.values)
    steps, values = q.steps[ok], q.values[ok]
    n = values.size
    if n == 0:
        return None
    k_start = min(3, n)
    start = float(np.median(values[:k_start]))
    # The origin a change at the very start is measured
    # from: a sparse series' first point is a whole
    # evaluation (a level in itself), any other's the start.
    origin, k_origin = (float(values[0]), 1) if q.quantity in SPARSE else (start, k_start)
    f10, l10 = _median_of(values, 0.10, False), _median_of(values, 0.10, True)
    f20, l20 = _median_of(values, 0.20, False), _median_of(values, 0.20, True)
    change = round((l20 - f20) / abs(f20), 6) if f20 != 0 else None
    if n < LEVEL_MIN_POINTS:
        trend = "ambiguous"
    else:
        top = max(start, f10)
        sigma = MEDIAN_SE * stats.step_noise(values, stats.NOISE_DIFFS)
        k20, k10 = _count(n, 0.20), _count(n, 0.10)
        if q.quantity not in SIGNED and top > 0 and 0 <= l10 <= stats.COLLAPSED_SHARE * top:
            trend = "collapsed"
        else:
            trend = _direction(l20 - f20, f20, sigma * math.sqrt(2 / k20)) or "flat"
            if (
                trend == "flat"
            ):  # a change at the very start that held: the first fifth already sits after it
                early = _direction(f20 - origin, origin, sigma * math.sqrt(1 / k_origin + 1 / k20))
                if early is not None and early == _direction(
                    l10 - origin, origin, sigma * math.sqrt(1 / k_origin + 1 / k10)
                ):
                    trend = early
    return LevelReading(
        metric=q.label,
        points=int(n),
        first_step=int(steps[0]),
        last_step=int(steps[-1]),
        start=start,
        first10=f10,
        last10=l10,
        first20=f20,
        last20=l20,
        level=_ratio(l10, f10),
        level_vs_start=_ratio(l10, start),
        change20=change,
        trend=trend,
    )


def readings(series: Mapping[str, QuantitySeries]) -> dict[str, LevelReading]:
    """Level readings of every quantity the run gives."""
    out: dict[str, LevelReading] = {}
    for name, q in sorted(series.items()):
        r = reading(q)
        if r is not None:
            out[name] = r
    return out
