"""A run's metric forecast from its curve so far: the level at a later step, with an 80% interval,
or an abstention that says why.

The rule, in order (every constant is in ``PARAMS`` with where it comes from):

1. Too little curve: fewer than ``min_points`` points is "not enough to forecast yet".
2. The early part is left out: the first ``early_share`` of the steps seen (ScaleRL leaves out
   the early, noisy part of each run before fitting; reported as about the first 1.5k of its runs'
   GPU-hours).
3. Has the curve stopped moving? The recent change (Theil-Sen slope over the last half of the kept
   points, times that half's span) is compared with the noise of its level. When it is inside
   ``flat_z`` standard errors the forecast is the recent level: a saturated curve is not
   extrapolated.
4. Otherwise ScaleRL's sigmoid is fitted to the kept points, and the forecast is the recent level
   plus a share of the gain the fit still expects between now and the target steps (the recent
   level, not the fit's own value now, anchors it: the fit's error today is not carried forward).
   The share is ``shrink`` (the whole gain) once the curve has passed the fitted midpoint, and
   ``bend_weight`` (a quarter) while the midpoint still lies ahead: there the ceiling is not
   identified, so the forecast leans on the last value and takes only part of the fitted gain
   (a blend of the sigmoid and the last value; such a forecast is marked ``identified=False``
   and says no ceiling).
5. The interval: the forecast plus or minus ``q80`` times a scale known when the forecast is made
   (the gain still expected, the noise of the recent level, and a share of the range seen times
   how far ahead the target lies in lengths of the curve seen); ``q80`` is the 80th percentile of
   the tuning curves' errors in that scale (split-conformal: residuals of forecasts, not a
   bootstrap), its coverage checked by leaving one run out at a time, so the interval covers what
   wrong shapes do, not only the fitting noise a bootstrap sees.

An unidentified fit is an abstention with its reason: fewer than ``min_points`` points, no start
converges, or the fitted gain is larger than ``max_reach`` ranges seen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rlmap_bot.scaling.curves import Fit, fit_sigmoid, noise_sd

PARAMS = {
    # Fewer points than this cannot tell a trend from noise with the fits used here. Chosen on the
    # tuning part (10, 15, 20 tried): 10 and 15 gave the same median error over five cuts (0.080
    # against 0.080 at 20 with more abstentions); 15 kept as the more cautious of the two
    # (judgement).
    "min_points": 15,
    # ScaleRL leaves out the first ~1.5k GPU-hours of runs of ~16k and more: about a tenth.
    "early_share": 0.1,
    # Chosen on the tuning part of the bank (its 23 wider-tier curves) by `benchmarks/forecast.py
    # --tune` (the grid there, the lowest median error over five cuts of each tuning curve,
    # abstentions scored as the last value); q80 is the 80th percentile of the tuning forecasts'
    # errors in interval scales (split-conformal; leaving one run out at a time, the interval
    # covered 76% of the tuning forecasts at the 30% cut and 74% at 50%, 104 forecasts over five
    # cuts). Figures in docs/measurements.md.
    "flat_z": 0.5,
    "shrink": 1.0,
    "bend_weight": 0.25,
    "q80": 0.66,
    "range_share": 0.1,
    # A fitted gain beyond this many seen ranges is the fit chasing noise: judgement.
    "max_reach": 3.0,
    # A sigmoid's ceiling is identified only once the curve has passed its midpoint (its bend in
    # log-compute): before it, ceilings far apart fit the points alike. A fitted midpoint beyond
    # the last step seen gives no ceiling ("not enough to forecast yet") and a level forecast with
    # only ``bend_weight`` of the fitted gain. Judgement (a property of the shape), set before the
    # backtest was run with it.
    "bend_reach": 1.0,
}


@dataclass(frozen=True)
class Level:
    """A forecast of the level at some steps, or an abstention (``abstain`` says why)."""

    value: float = math.nan
    low: float = math.nan
    high: float = math.nan
    abstain: str | None = None
    saturated: bool = False
    gain: float = 0.0  # what the fit still expects, before weighting
    identified: bool = True  # False: the curve is before its bend, its ceiling unknown


@dataclass(frozen=True)
class Seen:
    """What the curve so far says, before any target is asked: the kept points, the recent level
    and its noise, the recent change and its standard error, the fitted sigmoid."""

    x: np.ndarray
    y: np.ndarray
    kept_from: float = math.nan
    shift: float = 0.0
    level: float = math.nan
    level_se: float = math.nan
    noise: float = math.nan
    seen_range: float = math.nan
    change: float = math.nan
    change_se: float = math.nan
    fit: Fit | None = None
    recent: np.ndarray = field(default_factory=lambda: np.zeros(0))
    abstain: str | None = None


def _theil_sen(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import theilslopes

    return float(theilslopes(y, x)[0])


def read_curve(x: np.ndarray, y: np.ndarray, params: dict | None = None) -> Seen:
    """Steps 1 and 2 of the rule and the fit: everything a forecast at any step needs."""
    p = {**PARAMS, **(params or {})}
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size < p["min_points"]:
        return Seen(
            x=x, y=y, abstain=f"only {x.size} points so far; a forecast needs {p['min_points']}"
        )
    span = x[-1] - x[0]
    if span <= 0:
        return Seen(x=x, y=y, abstain="every point is at one step")
    kept_from = x[0] + p["early_share"] * span
    kept = x >= kept_from
    xk, yk = x[kept], y[kept]
    shift = 1.0 - x[0]  # the run's first logged step is compute 1: the sigmoid needs x > 0
    k = max(5, xk.size // 10)
    noise = noise_sd(yk)
    half = xk >= xk[0] + 0.5 * (xk[-1] - xk[0])
    return Seen(
        x=xk,
        y=yk,
        kept_from=float(kept_from),
        shift=shift,
        level=float(np.mean(yk[-k:])),
        level_se=noise / math.sqrt(k),
        noise=noise,
        seen_range=float(np.max(yk) - np.min(yk)),
        change=_theil_sen(xk[half], yk[half]) * float(xk[half][-1] - xk[half][0]),
        change_se=noise * math.sqrt(12.0 / max(int(half.sum()), 3)),
        fit=fit_sigmoid(xk + shift, yk),
        recent=xk[-k:],
    )


def level_at(seen: Seen, at: np.ndarray, params: dict | None = None) -> Level:
    """Steps 3 to 5 of the rule: the mean level over the steps ``at``."""
    p = {**PARAMS, **(params or {})}
    if seen.abstain:
        return Level(abstain=seen.abstain)
    at = np.atleast_1d(np.asarray(at, dtype=float))
    identified = True
    if abs(seen.change) <= p["flat_z"] * seen.change_se:
        gain, saturated = 0.0, True
    else:
        if seen.fit is None:
            return Level(abstain="the curve fits no saturating shape yet")
        identified = seen.fit.curve.c_mid <= p["bend_reach"] * float(seen.x[-1] + seen.shift)
        now = float(np.mean(seen.fit.curve(seen.recent + seen.shift)))
        gain = float(np.mean(seen.fit.curve(at + seen.shift))) - now
        if abs(gain) > p["max_reach"] * max(seen.seen_range, seen.noise):
            return Level(
                abstain="the fitted ceiling is not pinned down yet: the curve is still far from "
                "bending"
            )
        saturated = False
    weight = gain_weight(seen, p) if saturated or identified else float(p["bend_weight"])
    value = seen.level + weight * gain
    half_width = p["q80"] * interval_scale(seen, gain, p, at)
    return Level(
        value=value,
        low=value - half_width,
        high=value + half_width,
        saturated=saturated,
        gain=gain,
        identified=saturated or identified,
    )


def gain_weight(seen: Seen, params: dict | None = None) -> float:
    """The share of the fitted gain the forecast takes (``shrink``; 1 on this bank's tuning)."""
    p = {**PARAMS, **(params or {})}
    return float(p["shrink"])


def interval_scale(
    seen: Seen, gain: float, params: dict | None = None, at: np.ndarray | None = None
) -> float:
    """The scale an interval is a multiple of, known when the forecast is made: the gain still
    expected, the standard error of the recent level and a share of the range seen, that share
    times how far ahead the target steps ``at`` lie in lengths of the curve seen (a forecast
    further ahead meets more of what the shape does not foretell; one length when ``at`` is not
    given). Tuning: with the horizon the tuning part's leave-one-run-out coverage was 76-77% at
    the 30% cut and 74-78% at 50%, without it 59% and 91%."""
    p = {**PARAMS, **(params or {})}
    horizon = 1.0
    if at is not None and seen.x.size > 1:
        length = float(seen.x[-1] - seen.x[0])
        horizon = max(float(np.mean(at)) - float(seen.x[-1]), 0.0) / max(length, 1e-12)
    scale = abs(gain) + seen.level_se + p["range_share"] * seen.seen_range * horizon
    # A curve that never moved (a run pinned at its floor) has no scale at all: a hair's width,
    # so that an interval still has two ends and a ratio to it is defined.
    return max(scale, 1e-9 * max(1.0, abs(seen.level)))


def forecast_level(
    x: np.ndarray, y: np.ndarray, at: np.ndarray, params: dict | None = None
) -> Level:
    """The mean level over the steps ``at`` forecast from the curve ``(x, y)`` seen so far."""
    return level_at(read_curve(x, y, params), at, params)
