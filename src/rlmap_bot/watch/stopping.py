"""When to stop a watched run, from its forecast: said once each.

Every check's verdict carries the forecast of the run's curve (:mod:`rlmap_bot.runs.forecast`:
the held-out score when logged densely enough, else the training reward), so a watch reads it
as it reads the verdict, and opens one of two conditions, each at most once in a watch's life:

* ``stop:reached``: the run has reached 95% of its forecast ceiling (the issue's line), the
  ceiling's whole 80% interval lies above where the run started (it has gained something a
  forecast can measure), the most more steps could buy (the interval's far end less the level now)
  is at most :data:`LEFT_SHARE` of what the run has gained so far, so is the most its last half
  may have climbed by its own noise (a curve read as flat for want of points to show its slope has
  not been shown to stop), and the forecast does not say the run is past its best; and all of it
  still holds at a check :data:`AGAIN` more steps on (the
  forecast of a noisy curve can look flat for one check).
* ``stop:falling``: the forecast ceiling fell sharply below the best-established one forecast
  before (the one whose 80% interval's low end was highest): the two intervals do not overlap
  (or the run's recent level is already below the earlier interval and the forecast says it is
  past its best), the fall is at least :data:`FALL_SHARE` of the gain that earlier ceiling
  promised, and the curve itself has turned down (the forecast says it is past its best, or its
  recent level is below its best by more than its noise). A run bending down before it
  collapses.

A condition here is never resolved: its advice is given once, and a watch that opens it stays
quiet about it after. Both are measured on the generated population and the real-log bank
(``tests/test_watch_stopping.py``; ``docs/measurements.md``, "When to stop").
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import numpy as np

from rlmap_bot.results.scaling import AtStep
from rlmap_bot.results.watch import StopAdvised

if TYPE_CHECKING:
    from rlmap_bot.results.scaling import Forecast
    from rlmap_bot.watch.conditions import Evaluation
    from rlmap_bot.watch.model import Tracking

REACHED_KEY, FALLING_KEY = "stop:reached", "stop:falling"
STOP_PREFIX = "stop:"
#: The issue's line: "reached 95% of its forecast ceiling".
REACHED_SHARE = 0.95
#: More steps buy little: at most this share of what the run has gained so far, at the ceiling
#: interval's far end. Chosen on the population's tuning seed (tests/support/population.py, 3601;
#: 0.2, 0.25 and 0.3 tried, none said it of a rising run there); docs/measurements.md, "When to
#: stop", reports the held-out seed.
LEFT_SHARE = 0.25
#: It still holds this much further on (a share of the steps seen when it was first met): a check
#: over materially new steps, as the population sweep's checks at every tenth of a run are.
AGAIN = 0.1
#: A sharp fall: the ceiling forecast now is below the earlier one by at least this share of the
#: gain the earlier one promised over the run's start. Judgement, checked on the population: a
#: collapsing run's ceiling falls by most of its gain within a few checks, while a healthy run's
#: forecast, refitted as it grows, moves by a few hundredths of it.
FALL_SHARE = 0.25
#: The curve has turned down: its recent level is below its best smoothed level by more than this
#: many standard errors of that level (1.28: one-sided 80%, as the forecast's intervals).
TURNED_Z = 1.2816


def _turned_down(forecast: Forecast) -> bool:
    """The curve's recent level is below its best by more than the noise of a smoothed level."""
    from rlmap_bot.scaling.curves import below_best, noise_sd

    if forecast.past_peak:
        return True
    if forecast.curve is None or len(forecast.curve.y) < 6 or forecast.now is None:
        return False
    y = np.asarray(forecast.curve.y, dtype=float)
    return below_best(y, forecast.now, noise_sd(y), TURNED_Z) is not None


def reached(forecast: Forecast | None) -> StopAdvised | None:
    """The advice to stop because more steps buy little, on this check's forecast alone (the
    watch asks it again :data:`AGAIN` further on before saying it), or None."""
    if forecast is None or forecast.abstain or forecast.asymptote is None:
        return None
    if forecast.past_peak or forecast.reached is None or forecast.reached < REACHED_SHARE:
        return None
    start, ceiling, now = forecast.start, forecast.asymptote, forecast.now
    if start is None or now is None or ceiling.low <= start:
        return None
    if ceiling.high - now > LEFT_SHARE * (now - start):
        return None
    # A curve read as flat for want of points to show its slope is not one shown to have stopped:
    # the most its last half may have climbed, by its own noise, must be small too (another half
    # at that pace would buy more than LEFT_SHARE of the gain so far).
    if forecast.change is not None and forecast.change.high > LEFT_SHARE * (now - start):
        return None
    return StopAdvised(
        reason="reached",
        metric=forecast.metric,
        quantity=forecast.quantity,
        step=forecast.last_step,
        ceiling=ceiling,
        now=now,
        reached=forecast.reached,
        more=max(0.0, ceiling.high - now),
    )


def falling(forecast: Forecast | None, peak: AtStep | None) -> StopAdvised | None:
    """The warning that the forecast ceiling fell sharply below ``peak`` (the highest forecast
    before), or None."""
    if forecast is None or forecast.asymptote is None or peak is None or forecast.now is None:
        return None
    start, ceiling = forecast.start, forecast.asymptote
    if start is None or peak.value <= start:
        return None
    # Apart: the ceiling forecast now lies wholly below the earlier one's interval; or the run
    # itself already does and the forecast expects it lower still (past its best), whatever the
    # width of a far forecast of a curve that is turning, which the shapes disagree on.
    apart = ceiling.high < peak.low or (forecast.past_peak and forecast.now < peak.low)
    sharp = peak.value - ceiling.value >= FALL_SHARE * (peak.value - start)
    if not (apart and sharp and _turned_down(forecast)):
        return None
    return StopAdvised(
        reason="falling",
        metric=forecast.metric,
        quantity=forecast.quantity,
        step=forecast.last_step,
        ceiling=ceiling,
        now=forecast.now,
        reached=None,
        earlier=peak,
    )


def new_peak(forecast: Forecast | None, peak: AtStep | None) -> AtStep | None:
    """The best-established ceiling forecast so far, with this check's forecast counted: the one
    whose 80% interval's low end is highest. A ceiling promised with a wide interval (a climb the
    candidate shapes extrapolate apart) promised little, and a later, narrower forecast below its
    middle is no fall from it."""
    if forecast is None or forecast.abstain or forecast.asymptote is None:
        return peak
    a = forecast.asymptote
    if peak is not None and peak.low >= a.low:
        return peak
    step = forecast.last_step if forecast.last_step is not None else 0
    return AtStep(step=step, value=a.value, low=a.low, high=a.high)


def advise(
    evaluation: Evaluation, forecast: Forecast | None, tracking: Tracking, now: dt.datetime
) -> None:
    """Open a stop condition (at most one of each kind in a watch's life) on ``evaluation`` when
    this check's forecast calls for it, with a ``stop`` transition to announce; keeps in
    ``tracking`` the best-established ceiling so far (the fall is judged against the checks
    before) and where the run was first seen to have reached its ceiling."""
    from rlmap_bot.watch.conditions import Transition, open_condition

    peak, step = tracking.ceiling_peak, forecast.last_step if forecast is not None else None
    found = {FALLING_KEY: falling(forecast, peak), REACHED_KEY: reached(forecast)}
    if found[REACHED_KEY] is None or step is None:
        tracking.reached_since = None
    elif tracking.reached_since is None or step < tracking.reached_since:
        tracking.reached_since = step
    held = (
        tracking.reached_since is not None
        and step is not None
        and step >= tracking.reached_since * (1 + AGAIN)
    )
    # A run with a fault open (announced before, or opened by this very check) has not levelled
    # off, it broke: "reached its ceiling" beside a collapse would read as all is well, so that
    # advice waits until the fault is over. A falling ceiling is the bend a fault may follow: said.
    broken = any(key.startswith("fault:") for key in evaluation.conditions)
    for key in (FALLING_KEY, REACHED_KEY):
        advice = found[key]
        if key == REACHED_KEY and broken:
            continue
        # A run told it is bending down is not told after that it has reached its ceiling.
        if advice is None or key in evaluation.episodes:
            continue
        if key == REACHED_KEY and (not held or FALLING_KEY in evaluation.episodes):
            continue
        condition = open_condition(key, evaluation.episodes, now, step)
        condition.detail = advice.model_dump(mode="json")
        evaluation.conditions[key] = condition
        evaluation.transitions.append(Transition("stop", condition))
    tracking.ceiling_peak = new_peak(forecast, peak)
