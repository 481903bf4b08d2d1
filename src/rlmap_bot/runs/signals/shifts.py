"""Sharp changes at the tail: a quantity whose recent level left the run's own recent level.

The trend signals compare the last quarter with the quarter before and the levels compare the
first and last fifths, so a collapse inside the last tenth of a long run is averaged away.  Here
the most recent points are compared with the points just before them, the run's own recent
level, with the statistics the team notes say hold up on autocorrelated curves: medians and a
robust spread (MAD), an effect size that must be large, not a p-value.

For a tail of ``k`` points (two sizes, :data:`TAIL_SHARES`, so a change that filled the last
twentieth and one that filled the last tenth are both seen) against the ``REFERENCE_FACTOR * k``
points before it (after warm-up):

* the tail's median is at least :data:`SHIFT_Z` robust sigmas of the reference's points away
  from the reference's median (the typical recent point lies outside the reference's spread);
* and the change is large for its quantity (:data:`RULES`): the task reward fell by a share of
  its scale, the gradient norm or the response length rose by a factor;
* and the reference was a level, not a slope: its own drift (the median of its later half minus
  its earlier half's) is at most :data:`STEADY_SHARE` of the change (a curve already climbing
  into the tail is a trend, which the trend and growth signals read);
* and at least :data:`HELD_SHARE` of the tail's points lie on the far side of the midpoint
  between the two medians (the change held; a few wild points do not make it).

Each finding is a :class:`~rlmap_bot.results.faults.TailShift` (``reward_collapse``,
``grad_norm_blowup``, ``length_explosion``), said before any stage verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from rlmap_bot.results.faults import TailShift, TailShiftKind
from rlmap_bot.runs import stats
from rlmap_bot.runs.quantities import QuantitySeries

#: Tail sizes as shares of the finite points.  The issue's failure is a change inside the last
#: tenth; a twentieth catches it earlier in a watch (half the points needed), a tenth keeps the
#: reference window clean of a change that already fills it.
TAIL_SHARES = (0.05, 0.10)
#: Fewest points in a tail.  A median of 10 points varies by about 0.4 sigma (1.25 / sqrt(10)),
#: a tenth of the SHIFT_Z band.
TAIL_MIN = 10
#: The reference is the 3 tail-lengths before the tail (judgement: long enough that its median
#: and MAD are stable, recent enough to be "the run's own recent level", not its start; a
#: reference three times the tail holds a change that already spilt into it to under a quarter).
REFERENCE_FACTOR = 3
#: Fewest finite points after warm-up for any reading: TAIL_MIN plus its reference, 40, and
#: room for the warm-up skip.  Below that the trend signals judge the whole run anyway.
MIN_POINTS = 60
#: The tail's median against the reference: at least 4 robust sigmas of the reference's points.
#: Judgement: beyond 4 sigma a normal reference has 0.006% of its points, so the tail's typical
#: point is one the run did not produce at its recent level; a looser z than the spike rule's 6
#: because it is held by a median of >= 10 points, not a single point.
SHIFT_Z = 4.0
#: Share of the tail's points past the midpoint of the two medians.  Judgement: two thirds is a
#: change most of the tail shows, where a median alone is carried by half the points.
HELD_SHARE = 2 / 3

#: The reference's own drift, at most this share of the change.  Judgement: a level already moving
#: by a quarter of the change is a trend; the planted late length growth of the test logs (a
#: smooth ramp over the last 30%) drifts by a third of its tail change inside its reference.
STEADY_SHARE = 0.25


@dataclass(frozen=True)
class Rule:
    """What counts as a sharp change of one quantity (direction and size)."""

    kind: TailShiftKind
    direction: int  # +1: a rise is the fault; -1: a fall
    factor: float | None = None  # ratio tail/reference at least this (positive quantities)
    share: float | None = None  # |change| at least this share of the scale (signed quantities)
    what: str = ""


#: The sizes.  Reward: a fall of at least 30% of its scale (the larger of |level| and the run's
#: 5-95% range): the issue's collapse is 0.7 -> 0.2-0.45, a fall of 36-71%; the real-log bank's
#: runs long enough to judge move their reward tails by at most 11% of that scale.  Gradient
#: norm: at least 3x (a sustained level, where the spike rule asks 4x of a single point; the
#: issue's blow-up is 10x; the bank's tails at most 1.13x).  Response length: at least 1.5x
#: (healthy R1-style growth doubles over hundreds of steps; the bank's tails at most 1.21x).
#: The bank's figures are in docs/measurements.md.
RULES: dict[str, Rule] = {
    "task_reward": Rule("reward_collapse", -1, share=0.30, what="the task reward collapsed"),
    "grad_norm": Rule("grad_norm_blowup", +1, factor=3.0, what="the gradient norm blew up"),
    "response_length": Rule(
        "length_explosion", +1, factor=1.5, what="the response length exploded"
    ),
}


@dataclass
class Shift:
    quantity: str
    kind: TailShiftKind
    metric: str
    before: float
    after: float
    sigma: float
    z: float
    first_step: int  # the tail's first step
    last_step: int
    reference: tuple[int, int]
    steps: list[int]
    points: int

    def detail(self) -> str:
        ratio = f" ({self.after / self.before:.2g}x)" if self.before > 0 and self.after >= 0 else ""
        return (
            f"{RULES[self.quantity].what}: {self.metric} went from a recent level of "
            f"{self.before:.3g} (median of steps "
            f"{self.reference[0]}-{self.reference[1]}) to {self.after:.3g}{ratio} over steps "
            f"{self.first_step}-{self.last_step}, {self.z:.0f} robust sigmas away"
        )


def _one(q: QuantitySeries, rule: Rule) -> Shift | None:
    ok = np.isfinite(q.values)
    steps, values = q.steps[ok], q.values[ok]
    start = stats.warmup(values.size)
    if values.size - start < MIN_POINTS:
        return None
    lo, hi = np.percentile(values[start:], [5, 95])
    best: Shift | None = None
    for share in TAIL_SHARES:
        k = max(TAIL_MIN, math.ceil(share * (values.size - start)))
        ref_start = max(start, values.size - k - REFERENCE_FACTOR * k)
        ref, tail = values[ref_start : values.size - k], values[values.size - k :]
        if ref.size < TAIL_MIN:
            continue
        m0, m1 = float(np.median(ref)), float(np.median(tail))
        sigma = max(stats.robust_sigma(ref), 1e-12)
        change = m1 - m0
        z = abs(change) / sigma
        if np.sign(change) != rule.direction or z < SHIFT_Z:
            continue
        if rule.factor is not None:
            large = m0 > 0 and m1 / m0 >= rule.factor
        else:
            large = abs(change) >= (rule.share or 0.0) * max(abs(m0), float(hi - lo))
        held = float(np.mean(np.sign(tail - (m0 + m1) / 2) == rule.direction)) >= HELD_SHARE
        half = ref.size // 2
        drift = abs(float(np.median(ref[half:]) - np.median(ref[:half])))
        steady = drift <= STEADY_SHARE * abs(change)
        if large and held and steady and (best is None or z > best.z):
            tail_steps = steps[values.size - k :]
            best = Shift(
                q.quantity,
                rule.kind,
                q.label,
                m0,
                m1,
                sigma,
                z,
                int(tail_steps[0]),
                int(tail_steps[-1]),
                (int(steps[ref_start]), int(steps[values.size - k - 1])),
                [int(s) for s in tail_steps[:20]],
                int(k),
            )
    return best


def tail_median(q: QuantitySeries) -> float | None:
    """The median of the shorter tail (:data:`TAIL_SHARES`) of the finite points, or None."""
    values = q.values[np.isfinite(q.values)]
    if values.size < TAIL_MIN:
        return None
    k = max(TAIL_MIN, math.ceil(TAIL_SHARES[0] * (values.size - stats.warmup(values.size))))
    return float(np.median(values[-k:]))


def shifts(series: Mapping[str, QuantitySeries]) -> list[Shift]:
    """The sharp tail changes of the run's quantities (see the module docstring)."""
    found = []
    for quantity, rule in RULES.items():
        q = series.get(quantity)
        if q is not None:
            hit = _one(q, rule)
            if hit is not None:
                found.append(hit)
    return found


def shift_faults(series: Mapping[str, QuantitySeries]) -> list[TailShift]:
    """The same findings as faults, said before any stage verdict."""
    return [
        TailShift(
            kind=s.kind,
            metric=s.metric,
            steps=s.steps,
            count=s.points,
            first_step=s.first_step,
            last_step=s.last_step,
            throughout=False,
            detail=s.detail(),
            before=s.before,
            after=s.after,
        )
        for s in shifts(series)
    ]
