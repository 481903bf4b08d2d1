"""A run's outlook in the product's terms: the ceiling and its interval, how much of it is reached,
the step by which 95% of the remaining gain comes, what 1,000 more steps buy, the level at a step
asked for, and the points to draw; or "not enough to forecast yet" and why.

Built on :mod:`rlmap_bot.scaling.forecast` (the backtested rule): the level at a step is
:func:`~rlmap_bot.scaling.forecast.level_at`, and the ceiling is the same rule taken far ahead
(each candidate shape at its limit, weighed as at any step), its interval widened by the spread of
the sigmoid's asymptote itself; so no forecast at any step lies beyond the ceiling.
"""

from __future__ import annotations

import math

import numpy as np

from rlmap_bot.results.scaling import AtStep, Curve, Estimate, Forecast
from rlmap_bot.scaling.curves import below_best
from rlmap_bot.scaling.forecast import (
    PARAMS,
    Seen,
    gain_weight,
    interval_scale,
    level_at,
    read_curve,
    stopped,
)

#: The share of the remaining gain whose step is reported ("the step by which 95% of the
#: remaining gain is reached").
REMAINING_SHARE = 0.95
#: "Another N steps buy about ...": the issue's sentence uses 1,000 steps.
MORE_STEPS = 1000
#: A normal 80% interval's half-width in standard deviations, as the backtest's baselines use.
Z80 = 1.2816
#: Points drawn for the fitted line and its band.
DRAWN = 120


def early_rule(params: dict | None = None) -> str:
    p = {**PARAMS, **(params or {})}
    return (
        f"the first {round(100 * p['early_share'])}% of the steps seen are left out before fitting "
        f"(ScaleRL leaves out each run's early, noisy part)"
    )


def outlook(
    x: np.ndarray,
    y: np.ndarray,
    *,
    source: str,
    metric: str,
    quantity: str,
    to: int | None = None,
    axis: str = "steps",
) -> Forecast:
    """The forecast of one curve (``x`` in steps, ascending)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    out = Forecast(
        source=source,
        metric=metric,
        quantity=quantity,
        axis=axis,
        points=int(x.size),
        first_step=int(x[0]) if x.size else None,
        last_step=int(x[-1]) if x.size else None,
        early_rule=early_rule(),
        curve=Curve(x=[float(v) for v in x], y=[float(v) for v in y]),
    )
    seen = read_curve(x, y)
    if seen.abstain:
        out.abstain = seen.abstain
        return out
    assert out.curve is not None and out.last_step is not None
    out.curve.early_until = seen.kept_from
    out.now = seen.level
    out.change = Estimate(
        value=seen.change,
        low=seen.change - Z80 * seen.change_se,
        high=seen.change + Z80 * seen.change_se,
    )
    # A run that has gained nothing its noise can tell since its start (the two means' own 80%
    # uncertainty) has no share of a gain to report, and no best it went back from. One that has
    # come down by more than that has no ceiling to reach either (a falling reward has no "share
    # of it reached"): the forecast says where it settles, or that no bend shows that yet.
    head = max(3, y.size // 10)
    start = float(np.mean(y[:head]))
    made = seen.level - start
    moved = abs(made) > Z80 * seen.noise * math.sqrt(1 / head + 1 / max(seen.recent.size, 1))
    out.start = start
    out.fell = moved and made < 0
    # A run below its best by more than a smoothed level's noise, whose last half still falls
    # (its change's whole 80% interval below zero), is coming down from its best: said so even
    # when no level is forecast yet (a fall with no bend), not "not enough to forecast yet".
    best = below_best(y, seen.level, seen.noise, Z80)
    if not out.fell and best is not None and out.change.high < 0:
        out.peak = best
    last = float(x[-1])
    target = float(to) if to is not None else last
    if to is not None and to < last:
        out.notes.append(f"step {to} is already behind the run (it is at step {int(last)})")
    # What is not known yet: a rising run's ceiling, or where a falling one settles.
    unknown = "where it settles" if out.fell or out.peak is not None else "its ceiling"
    at = level_at(seen, np.array([target]))
    if at.abstain or not at.identified:
        out.abstain = (
            at.abstain
            or at.unidentified
            or (
                f"the curve is still before its bend (the fitted midpoint lies ahead), so "
                f"{unknown} is not identified yet"
            )
        )
        return out
    out.saturated = at.saturated
    out.at = AtStep(step=int(target), value=at.value, low=at.low, high=at.high)
    found = _ceiling(seen, last)
    if found is None:
        fitted = "where it settles" if out.fell or out.peak is not None else "the fitted ceiling"
        out.abstain = f"{fitted} is not pinned down yet: the curve is still far from bending"
        out.at = None
        return out
    ceiling, step_95 = found
    out.asymptote = ceiling
    gain = ceiling.value - start
    # A run that has climbed and whose ceiling lies on the far side of where it is now (below it
    # for a rising run), by more than the recent level's own 80% uncertainty and by more than one
    # point's noise, is past its best: there is no share of a ceiling to reach, and no step by
    # which the rest comes. A ceiling a hair below the level (one shape's slight drift), closer
    # than the curve's own step-to-step noise, would not show on the curve: a run at its ceiling.
    back = seen.level - ceiling.value
    climbed = moved and made > 0
    if climbed and not out.saturated and back > max(Z80 * seen.level_se, seen.noise):
        out.past_peak = True
    elif climbed and abs(gain) > 1e-12:
        out.reached = float(min(max(made / gain, 0.0), 1.0))
    more = level_at(seen, np.array([last + MORE_STEPS]))
    if not more.abstain:
        out.per_1000_steps = more.value - seen.level
    # The step by which 95% of the remaining gain comes is said only when some gain remains: the
    # ceiling lies ahead of the level now by more than that level's own 80% uncertainty.
    ahead = (ceiling.value - seen.level) if made >= 0 else (seen.level - ceiling.value)
    remains = ahead > Z80 * seen.level_se
    out.step_95 = step_95 if remains and not out.past_peak else None
    out.curve = _drawn(out.curve, seen, max(target, last), step_95)
    return out


def _ceiling(seen: Seen, last: float) -> tuple[Estimate, int | None] | None:
    """The ceiling and the step by which the forecast comes 95% of the way to it (None when it
    gets no nearer within :data:`FURTHEST` lengths); None when the fitted ceiling is not pinned
    down. The settled level when the curve has stopped moving, else the level the rule tends to
    far ahead (every candidate shape taken to its limit and weighed as at any step, so that no
    step's forecast lies beyond the ceiling). Its interval is the rule's one length ahead,
    widened in quadrature by how far the sigmoid's asymptote itself moves when the fit's
    residuals are resampled (times the sigmoid's weight: the other shapes' limits do not move
    with it) and by how far the shapes' limits lie apart (their weighted standard deviation,
    times :data:`Z80`): where the shapes disagree on where the run is heading, so does the
    ceiling, and no fit of one shape sees that."""
    p = PARAMS
    flat = stopped(seen)
    if flat or seen.fit is None:
        half = p["q80"] * interval_scale(seen, 0.0)
        value = seen.settled if flat else seen.level  # as the level forecast says it
        return Estimate(value=value, low=value - half, high=value + half), int(last)
    curve = seen.fit.curve
    now = float(np.mean(curve(seen.recent + seen.shift)))
    if abs(curve.a - now) > p["max_reach"] * max(seen.seen_range, seen.noise):
        return None
    far = level_at(seen, None)
    if far.abstain:
        return None
    step_95 = _step_95(seen, last, far.value)
    scale = interval_scale(seen, far.move, None, None, far.spread, far.past_miss)
    spread = far.weights.get("sigmoid", 0.0) * _asymptote_spread(seen)
    half = math.hypot(p["q80"] * scale, spread, Z80 * far.spread)
    return Estimate(value=far.value, low=far.value - half, high=far.value + half), step_95


def _asymptote_spread(seen: Seen, draws: int = 20) -> float:
    """The 80% half-spread of the refitted asymptote over residual resamples (shrunk like the
    forecast); warm-started from the fit, so it costs a few milliseconds a draw."""
    from rlmap_bot.scaling.curves import fit_sigmoid

    assert seen.fit is not None
    curve = seen.fit.curve
    base = curve(seen.x + seen.shift)
    resid = seen.y - base
    rng = np.random.default_rng(0)
    found = []
    for _ in range(draws):
        again = fit_sigmoid(seen.x + seen.shift, base + rng.choice(resid, resid.size), start=curve)
        if again is not None:
            found.append(again.curve.a)
    if len(found) < 5:
        return 0.0
    lo, hi = np.quantile(found, [0.1, 0.9])
    return float(gain_weight(seen) * (hi - lo) / 2)


def _step_95(seen: Seen, last: float, ceiling: float) -> int | None:
    """The step by which the forecast has come 95% of the way from the level now to ``ceiling``
    (None when the rule gets no nearer within :data:`FURTHEST` lengths of the curve seen). The
    forecast's path is found on a log-spaced grid of steps ahead, then narrowed by bisection
    between the grid's last two steps."""
    goal = REMAINING_SHARE * (ceiling - seen.level)
    if abs(goal) < 1e-12:
        return int(last)

    def there(step: float) -> bool:
        got = level_at(seen, np.array([step]))
        return not got.abstain and (got.value - seen.level) / goal >= 1.0

    length = max(float(seen.x[-1] - seen.x[0]), 1.0)
    before = last
    for ahead in np.geomspace(0.01, FURTHEST, 60):
        step = last + ahead * length
        if there(step):
            lo, hi = before, step
            for _ in range(30):
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if there(mid) else (mid, hi)
            return int(math.ceil(hi))
        before = step
    return None


#: The furthest a step to 95% of the remaining gain is looked for, in lengths of the curve seen;
#: a forecast further ahead than this is not one a team plans by (judgement).
FURTHEST = 1000.0


def _drawn(curve: Curve, seen: Seen, until: float, step95: int | None) -> Curve:
    """The fitted line and its 80% band from the kept points to ``until`` (or to 95% of the
    remaining gain, whichever is further, capped at four times the steps seen)."""
    end = until
    if step95 is not None:
        end = max(end, min(float(step95), 4 * float(seen.x[-1])))
    xs = np.linspace(float(seen.x[0]), max(end, float(seen.x[-1]) + 1), DRAWN)
    values, lows, highs = [], [], []
    for v in xs:
        if v <= seen.x[-1] and seen.fit is not None:
            fitted = float(seen.fit.curve(v + seen.shift))
            values.append(fitted)
            lows.append(fitted)
            highs.append(fitted)
            continue
        got = level_at(seen, np.array([v]))
        values.append(got.value)
        lows.append(got.low)
        highs.append(got.high)
    curve.fit_x = [float(v) for v in xs]
    curve.fit_y = values
    curve.band_low = lows
    curve.band_high = highs
    return curve
