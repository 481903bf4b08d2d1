"""Sharp changes: a quantity whose level left the run's own level before it, and stayed there.

The trend signals compare the last quarter with the quarter before and the levels compare the
first and last fifths, so a collapse inside the last tenth of a long run is averaged away, and
one 60% of the way through is averaged into "the run's level" once the run has gone on.  Here
every stretch of the run is compared with the points just before it, with the statistics the team
notes say hold up on autocorrelated curves: medians and a robust spread (MAD), an effect size that
must be large, not a p-value.

For a window of ``k`` points (two sizes, :data:`TAIL_SHARES`, so a change that filled a
twentieth of the run and one that filled a tenth are both seen) starting at a split point, against
the ``REFERENCE_FACTOR * k`` points before it (after warm-up):

* the window's median is at least :data:`SHIFT_Z` robust sigmas of the reference's points away
  from the reference's median (the typical point after the split lies outside the spread before);
* and the change is large for its quantity (:data:`RULES`): the task reward fell by a share of
  its scale, the gradient norm, the response length or the entropy rose or fell by a factor;
* and the reference and the window were levels, not a slope: the drift of each (the median of
  its later half minus its earlier half's) is at most :data:`STEADY_SHARE` of the change (a curve
  moving into the change, or still moving through it, is a trend, which the trend and growth
  signals read);
* and it held: at least :data:`HELD_SHARE` of the points from the split to the last logged one
  lie on the far side of the midpoint between the two medians (a few wild points, or a dip the
  run came back from, do not make it).

The split points are tried from the start of the run on, so the change is named with the step it
began (the first point past the midpoint after the earliest split that passes), wherever in the
run it happened.  A run logged fewer than :data:`MIN_POINTS` times is scanned with shorter tails
and references (:data:`SHORT_TAIL_MIN`, :data:`SHORT_REF_MIN`); a fall that began before any
reference could be held (inside the warm-up) is measured from the run's first points instead
(:func:`_from_start`); and a fall to a quarter of its level may follow a reference that was
already drifting its way (:data:`COLLAPSE_STEADY_SHARE`).  Each finding is a
:class:`~rlmap_bot.results.faults.TailShift` (its kind names the quantity and the direction),
said before any stage verdict, the earliest first.
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
#: Finite points after warm-up from which the tails above are used: TAIL_MIN plus its
#: reference, 40, and room for the warm-up skip.
MIN_POINTS = 60
#: A run logged fewer times (a W&B export of a TRL run averaging 5-10 steps a row holds 20-60
#: rows; a short agentic run 50) is scanned with tails of SHORT_TAIL_MIN points and references of
#: at least SHORT_REF_MIN.  Measured on the population's tuning seed with 30 more runs a class
#: (indices 13-42): 10 of 60 output and late collapses went unnamed before, every one a W&B
#: export of a TRL run with 20-45 rows; none after, and no fault before onset in 20 runs of each
#: class checked at the watch's 8 points (docs/measurements.md).  Judgement on the sizes: a median
#: of 5 points varies by about 0.56 sigma (1.25 / sqrt(5)), a seventh of the SHIFT_Z band; a
#: reference of 8 gives a MAD that can be off by half, which the size rules (RULES) and
#: HELD_SHARE, not the z alone, guard.
SHORT_TAIL_MIN, SHORT_REF_MIN = 5, 8
#: Fewest finite points for any reading: a short tail and its reference (5 + 3 x 5).  Below that
#: a run holds too few points to tell a level from its noise.
SPARSE_MIN_POINTS = SHORT_TAIL_MIN * (1 + REFERENCE_FACTOR)
#: The tail's median against the reference: at least 4 robust sigmas of the reference's points.
#: Judgement: beyond 4 sigma a normal reference has 0.006% of its points, so the tail's typical
#: point is one the run did not produce at its recent level; a looser z than the spike rule's 6
#: because it is held by a median of >= 10 points, not a single point.
SHIFT_Z = 4.0
#: Share of the tail's points past the midpoint of the two medians.  Judgement: two thirds is a
#: change most of the tail shows, where a median alone is carried by half the points.
HELD_SHARE = 2 / 3

#: The reference's (and the window's) own drift, at most this share of the change.  Judgement:
#: a level already moving by a quarter of the change is a trend; the planted late length growth
#: of the test logs (a smooth ramp over the last 30%) drifts by a third of its change inside its
#: reference at the tail, and by more inside the window where the reference is still flat.
STEADY_SHARE = 0.25
#: The reference's drift allowed when the change is a collapse: a positive quantity that fell
#: to a quarter of its level or less (stats.COLLAPSED_SHARE) within one window, and the window
#: after it a level on its own scale (its drift at most STEADY_SHARE of its median).  A straight
#: slope carried on from the reference explains at most 4/3 of its drift over the gap between
#: the two medians (half a reference and half a window, a window a third of a reference), so
#: with a drift of half the change at least a third of the fall is a break no trend accounts
#: for.  A decay by the same factor every step (an entropy x0.98 a step, tests/test_slack_watch.py's
#: saturated collapse) also falls to a quarter in a reference and a window, but is still falling
#: by that factor in the window, which the window's own-scale check turns away.  Judgement,
#: from answers eroding by a third over 20 steps and then falling to a few tokens (as the bank's
#: verl-agent-opd-60 does; its own crash is spread over the 5 points of its window, so this
#: does not name it yet: docs/measurements.md).
COLLAPSE_STEADY_SHARE = 0.5


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
#: (healthy R1-style growth doubles over hundreds of steps, a trend the steady rule leaves to
#: the growth signal; the bank's tails at most 1.21x).  The bank's figures are in
#: docs/measurements.md.  Falls, the mirror of the rises: a response length at most half its
#: level (a RAGEN run's output collapse: about 100 -> 10 tokens; a length penalty or a model
#: learning to be brief shortens responses gradually, which the steady rule leaves to the trend
#: signals); an entropy at most a quarter of its level (stats.COLLAPSED_SHARE, Cui et al.'s
#: collapse) or at least 3x it (the blow-up of verl-agent-opd-60 in the bank, where tiny outputs
#: are sampled near uniformly; 3x, the gradient norm's factor).  A gradient norm that falls to 0
#: is the not-learning fault's (runs/signals/faults.py).  Judgement, each checked against the
#: bank and the population (docs/measurements.md).
RULES: dict[str, tuple[Rule, ...]] = {
    "task_reward": (Rule("reward_collapse", -1, share=0.30, what="the task reward collapsed"),),
    "grad_norm": (Rule("grad_norm_blowup", +1, factor=3.0, what="the gradient norm blew up"),),
    "response_length": (
        Rule("length_explosion", +1, factor=1.5, what="the response length exploded"),
        Rule("length_collapse", -1, factor=0.5, what="the response length collapsed"),
    ),
    "entropy": (
        Rule("entropy_collapse", -1, factor=stats.COLLAPSED_SHARE, what="the entropy collapsed"),
        Rule("entropy_blowup", +1, factor=3.0, what="the entropy blew up"),
    ),
}
#: The quantity each kind is read on.
QUANTITY_OF: dict[str, str] = {r.kind: q for q, rules in RULES.items() for r in rules}


@dataclass
class Shift:
    quantity: str
    kind: TailShiftKind
    what: str
    metric: str
    before: float
    after: float
    sigma: float
    z: float
    first_step: int  # the first step past the midpoint: where the change began
    last_step: int
    reference: tuple[int, int]
    steps: list[int]
    points: int

    def detail(self) -> str:
        ratio = f" ({self.after / self.before:.2g}x)" if self.before > 0 and self.after >= 0 else ""
        # A level with no noise (a score pinned at its floor) puts any change infinitely many
        # sigmas away; past 100 the figure says nothing more.
        away = f"{self.z:.0f} robust sigmas away" if self.z < 100 else "far outside its noise"
        return (
            f"{self.what} from step {self.first_step}: {self.metric} went from a level of "
            f"{self.before:.3g} (median of steps {self.reference[0]}-{self.reference[1]}) to "
            f"{self.after:.3g}{ratio} over steps {self.first_step}-{self.last_step}, {away}"
        )


def _large(rule: Rule, m0: float, m1: float, lo: float, hi: float) -> bool:
    if rule.factor is not None:
        if m0 <= 0:
            return False
        ratio = m1 / m0
        return ratio >= rule.factor if rule.direction > 0 else ratio <= rule.factor
    return abs(m1 - m0) >= (rule.share or 0.0) * max(abs(m0), hi - lo)


def _drift(values: np.ndarray) -> float:
    """How far a stretch moves: the median of its later half minus its earlier half's."""
    half = values.size // 2
    return abs(float(np.median(values[half:]) - np.median(values[:half])))


def _steady_before(rule: Rule, ref: np.ndarray, window: np.ndarray, m0: float, m1: float) -> bool:
    """The reference was a level: its drift at most :data:`STEADY_SHARE` of the change; for a
    collapse (a fall to a quarter or less), at most :data:`COLLAPSE_STEADY_SHARE` of it when the
    window after is a level on its own scale too (its drift at most STEADY_SHARE of its median):
    a decay by the same factor every step is still falling by that factor in the window."""
    change = abs(m1 - m0)
    if _drift(ref) <= STEADY_SHARE * change:
        return True
    collapsed = rule.factor is not None and 0 < m1 <= stats.COLLAPSED_SHARE * m0
    if not collapsed or _drift(ref) > COLLAPSE_STEADY_SHARE * change:
        return False
    return _drift(window) <= STEADY_SHARE * m1


def _one(q: QuantitySeries, rule: Rule) -> Shift | None:
    ok = np.isfinite(q.values)
    steps, values = q.steps[ok], q.values[ok]
    n = values.size
    start = stats.warmup(n)
    if n - start < SPARSE_MIN_POINTS:
        return None
    tail_min, ref_min = (
        (TAIL_MIN, TAIL_MIN) if n - start >= MIN_POINTS else (SHORT_TAIL_MIN, SHORT_REF_MIN)
    )
    lo, hi = (float(x) for x in np.percentile(values[start:], [5, 95]))
    found: Shift | None = None
    for share in TAIL_SHARES:
        k = max(tail_min, math.ceil(share * (n - start)))
        stride = max(1, k // 4)  # a quarter window: the onset is refined point by point below
        last = n - k
        splits = list(range(start + ref_min, last, stride)) + [last]
        for t in splits:
            if found is not None and t >= found.points:
                break  # only an earlier start can replace what the other size found
            ref_start = max(start, t - REFERENCE_FACTOR * k)
            ref, window = values[ref_start:t], values[t : t + k]
            if ref.size < ref_min:
                continue
            m0, m1 = float(np.median(ref)), float(np.median(window))
            sigma = max(stats.robust_sigma(ref), 1e-12)
            change = m1 - m0
            z = abs(change) / sigma
            if np.sign(change) != rule.direction or z < SHIFT_Z:
                continue
            if not _large(rule, m0, m1, lo, hi):
                continue
            mid = (m0 + m1) / 2
            since = values[t:]
            if float(np.mean(np.sign(since - mid) == rule.direction)) < HELD_SHARE:
                continue  # it did not hold to the last logged point
            if _drift(window) > STEADY_SHARE * abs(change) or not _steady_before(
                rule, ref, window, m0, m1
            ):
                continue  # a slope on either side: a trend, not a step from one level to another
            past = np.flatnonzero(np.sign(window - mid) == rule.direction)
            onset = t + int(past[0])
            reference = (int(steps[ref_start]), int(steps[t - 1]))
            found = _shift(q, rule, steps, values, onset, m0, sigma, z, reference)
            break
    if found is None:
        found = _from_start(q, rule, steps, values, start + ref_min, (lo, hi))
    if found is not None:
        found.points = n - found.points
    return found


#: A fall from the start is a step, not a decay, when it goes from its midpoint to this share of
#: the way to its new level within one short tail (the scan's window, a twentieth of the run).
#: Judgement: the scan asks its window to be a level within a quarter of the change; nine tenths
#: of the way is that bar at the window's far end.  Seen on the bank's healthy
#: verl-tb-asyncreward-q7b-fsdp-base, whose entropy decays 0.33 -> 0.07 over 40 steps: 22 points
#: from its midpoint to nine tenths, where verl-agent-opd-262's collapses take 1-4.
ARRIVED_SHARE = 0.9


def _held_past(values: np.ndarray, line: float, rule: Rule) -> int | None:
    """The first point past ``line`` (in the rule's direction) from which at least
    :data:`HELD_SHARE` of the points stay past it, or None."""
    past = np.sign(values - line) == rule.direction
    held = np.cumsum(past[::-1])[::-1] / np.arange(values.size, 0, -1)
    found = np.flatnonzero(past & (held >= HELD_SHARE))
    return int(found[0]) if found.size else None


def _from_start(
    q: QuantitySeries,
    rule: Rule,
    steps: np.ndarray,
    values: np.ndarray,
    before: int,
    scale: tuple[float, float],
) -> Shift | None:
    """A fall that began before the scan could hold a reference (index ``before``): inside the
    warm-up it skips, or among a short run's first points.  The level before is the run's start
    (the median of its first :data:`~rlmap_bot.runs.stats.FIRST_POINTS`, as the level readings'),
    the level after is the last tail's; the noise is the run's step-to-step noise, as a start of
    3 points has no spread of its own to measure.  Only falls: a rise at the very start is what a
    warm-up does (lengths and entropy jump in the first steps, per the team's notes on training
    logs; the gradient norm climbs with a learning-rate warm-up).  A fall by a factor must reach
    the level readings' collapse (a quarter of the start, stats.COLLAPSED_SHARE), stricter than
    the scan's half for length: a model learning to be brief shortens its answers most in its
    first steps."""
    if rule.direction > 0:
        return None
    first = stats.FIRST_POINTS
    k = max(SHORT_TAIL_MIN, math.ceil(TAIL_SHARES[0] * values.size))
    m0, m1 = float(np.median(values[:first])), float(np.median(values[-k:]))
    if rule.factor is not None:
        if m0 <= 0 or m1 / m0 > min(rule.factor, stats.COLLAPSED_SHARE):
            return None
    elif not _large(rule, m0, m1, *scale):
        return None
    change, sigma = m1 - m0, max(stats.step_noise(values), 1e-12)
    if np.sign(change) != rule.direction or abs(change) / sigma < SHIFT_Z:
        return None
    onset, done = (
        _held_past(values, m0 + change / 2, rule),
        _held_past(values, m0 + ARRIVED_SHARE * change, rule),
    )
    if onset is None or done is None or not first <= onset < before:
        return None  # from the first point on (no level before it), or the scan's to place
    if done - onset > k or _drift(values[onset:]) > STEADY_SHARE * abs(change):
        return None  # a slope through the midpoint, or still moving after it: a trend
    reference = (int(steps[0]), int(steps[first - 1]))
    return _shift(q, rule, steps, values, onset, m0, sigma, abs(change) / sigma, reference)


def _shift(
    q: QuantitySeries,
    rule: Rule,
    steps: np.ndarray,
    values: np.ndarray,
    onset: int,
    before: float,
    sigma: float,
    z: float,
    reference: tuple[int, int],
) -> Shift:
    """The shift that begins at index ``onset``, measured against the level ``before`` over the
    ``reference`` steps; its ``points`` is the index while searching (the caller makes it the
    count of points once found)."""
    after = steps[onset:]
    return Shift(
        q.quantity,
        rule.kind,
        rule.what,
        q.label,
        before,
        float(np.median(values[onset:])),
        sigma,
        z,
        int(after[0]),
        int(after[-1]),
        reference,
        [int(s) for s in after[:20]],
        onset,
    )


def tail_median(q: QuantitySeries) -> float | None:
    """The median of the shorter tail (:data:`TAIL_SHARES`) of the finite points, or None."""
    values = q.values[np.isfinite(q.values)]
    if values.size < TAIL_MIN:
        return None
    k = max(TAIL_MIN, math.ceil(TAIL_SHARES[0] * (values.size - stats.warmup(values.size))))
    return float(np.median(values[-k:]))


def shifts(series: Mapping[str, QuantitySeries]) -> list[Shift]:
    """The sharp changes of the run's quantities, the earliest first (see the module
    docstring); at most one a quantity (its earliest)."""
    found = []
    for quantity, rules in RULES.items():
        q = series.get(quantity)
        if q is None:
            continue
        hits = [h for h in (_one(q, rule) for rule in rules) if h is not None]
        if hits:
            found.append(min(hits, key=lambda h: h.first_step))
    return sorted(found, key=lambda h: h.first_step)


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
