"""A run's faults: it is not learning, or it logs NaN/inf, said before any stage verdict.

A stage verdict presumes a run that updates its weights.  When the gradient norm is exactly 0
(or the same value) step after step, every group has zero reward spread, the learning rate is
0, or a loss or gradient logs NaN/inf, the first thing to say is that, with the steps it
happened at; the stage scores come after.  The rules are plain equalities over logged values,
so they are shared by ``diagnose --run`` (whole run) and the watch (a trailing stretch, as a
run that starts well can stop learning).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from rlmap_bot import wording
from rlmap_bot.results.faults import Fault, NonFinite, NotLearning, NotLearningKind
from rlmap_bot.runs import stats
from rlmap_bot.runs.model import RunData
from rlmap_bot.runs.quantities import QuantitySeries

#: Fewest points for "on all steps": below 5 logged points a run is still starting (and a
#: warm-up learning rate may be 0).  Judgement.
THROUGHOUT_MIN = 5
#: A trailing stretch this long of exactly-0 (or exactly repeated) gradient norms, of groups
#: all without spread, or of a 0 learning rate, is a run that stopped learning.  Judgement: a
#: float gradient norm repeats exactly by chance essentially never, so 10 in a row is far past
#: chance, yet few enough for the watch to say it within a check or two.
STRETCH_MIN = 10
#: Steps listed per fault (the count stays exact).  Judgement: enough to point at.
STEPS_LISTED = 20
#: Quantities whose NaN/inf is a fault (the loss_divergence signal looks at the same ones, plus
#: the reward).
NAN_QUANTITIES = ("loss", "policy_loss", "grad_norm", "kl_loss", "entropy", "task_reward")


def trailing_run(values: np.ndarray, same_as_previous: bool) -> int:
    """How many points at the end are exactly 0 (or, with ``same_as_previous``, exactly equal to
    the point before them, counting that point too)."""
    n = values.size
    if n == 0:
        return 0
    if same_as_previous:
        if n == 1:
            return 1
        diff = values[1:] != values[:-1]
        breaks = np.flatnonzero(diff)
        return n - (int(breaks[-1]) + 1) if breaks.size else n
    nonzero = np.flatnonzero(values != 0)
    return n - (int(nonzero[-1]) + 1) if nonzero.size else n


def _stretch(kind: NotLearningKind, q: QuantitySeries, run: int, detail: str) -> NotLearning | None:
    steps = q.steps[np.isfinite(q.values)]
    n = steps.size
    whole = run == n and n >= THROUGHOUT_MIN
    if not whole and run < STRETCH_MIN:
        return None
    part = steps[n - run :]
    where = f"on all {n} logged steps" if run == n else f"on the last {run} logged steps"
    return NotLearning(
        kind=kind,
        metric=q.label,
        steps=[int(s) for s in part[:STEPS_LISTED]],
        count=run,
        first_step=int(part[0]),
        last_step=int(part[-1]),
        throughout=run == n,
        detail=f"{q.label} {detail} {where} (steps {int(part[0])}-{int(part[-1])})",
    )


def not_learning(series: Mapping[str, QuantitySeries]) -> list[NotLearning]:
    """Signs that the weights do not move, each over all steps or over a trailing stretch."""
    found: list[NotLearning] = []
    grad = series.get("grad_norm")
    grad_fault = None
    if grad is not None:
        v = grad.values[np.isfinite(grad.values)]
        zeros = trailing_run(v, same_as_previous=False)
        if zeros:
            grad_fault = _stretch("zero_gradient", grad, zeros, "is exactly 0")
        if grad_fault is None:
            same = trailing_run(v, same_as_previous=True)
            grad_fault = (
                _stretch("constant_gradient", grad, same, f"is exactly {v[-1]:.6g}")
                if v.size
                else None
            )
        if grad_fault is not None:
            found.append(grad_fault)
    loss = series.get("loss") or series.get("policy_loss")
    if loss is not None and (grad is None or grad_fault is not None):
        # A surrogate loss of exactly 0 is normal in GRPO with no KL term (the logged loss is
        # rounded, and its gradient is not 0): only with no gradient norm to show otherwise,
        # or one that says nothing moves, is a zero loss a fault.
        v = loss.values[np.isfinite(loss.values)]
        fault = _stretch("zero_loss", loss, trailing_run(v, same_as_previous=False), "is exactly 0")
        if fault is not None:
            found.append(fault)
    spread = series.get("zero_std_fraction")
    if spread is not None:
        v = spread.values[np.isfinite(spread.values)]
        run = trailing_run(v - 1.0, same_as_previous=False)  # exactly 1: every group without spread
        fault = _stretch("zero_variance", spread, run, "is 1 (every group has zero reward spread)")
        if fault is not None:
            found.append(fault)
    lr = series.get("learning_rate")
    if lr is not None:
        # Only a schedule that ran out (non-zero before, 0 for a stretch since): a console log that
        # prints 3 decimals shows any real learning rate as 0.000 from its first step.
        v = lr.values[np.isfinite(lr.values)]
        run = trailing_run(v, same_as_previous=False)
        fault = _stretch("no_update", lr, run, "is exactly 0") if 0 < run < v.size else None
        if fault is not None:
            found.append(fault)
    entropy = series.get("entropy")
    if entropy is not None:
        v = entropy.values[np.isfinite(entropy.values)]
        fault = _stretch(
            "zero_entropy", entropy, trailing_run(v, same_as_previous=False), "is exactly 0"
        )
        if fault is not None:
            found.append(fault)
    return found


#: Non-finite points in a row that make a fault: the persistence the sustained-jump rule asks of
#: a loss (stats.JUMP_RUN, RLDK's "for 3 updates").  Why a shorter stretch followed by finite
#: points is not one: verl's actor (dp_actor, ``_optimizer_step``) zeroes the gradients and
#: skips the update when the gradient norm is not finite, and logs that norm; the weights are
#: untouched, so the next step is finite again.  Weights that went NaN never log a finite loss
#: again, so every later step is non-finite; three skips in a row are no accident either.
SUSTAINED_MIN = stats.JUMP_RUN
#: Scattered non-finite points become a fault when at least this many (and this share of the
#: logged points) are non-finite: a run that skips one update in ten loses a tenth of its
#: budget and has a numerical problem to fix, though each skip alone is harmless. Judgement:
#: 3, as SUSTAINED_MIN; a tenth, the share a step-level problem must reach to be no accident.
RECURRING_MIN, RECURRING_SHARE = 3, 0.10


def _nan_kinds(values: np.ndarray) -> str:
    return "/".join(sorted({"NaN" if np.isnan(x) else "inf" for x in values[:STEPS_LISTED]}))


def _stretches(bad: np.ndarray) -> list[tuple[int, int]]:
    """The runs of True in ``bad`` as (start, stop) index pairs."""
    edges = np.diff(np.concatenate([[0], bad.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()
    return list(zip(starts, stops, strict=True))


def classify_nonfinite(quantity: str, q: QuantitySeries) -> tuple[NonFinite | None, str | None]:
    """A quantity's NaN/inf as a fault (:data:`SUSTAINED_MIN` steps in a row, or recurring), or
    as a note (a step or a few the trainer skipped); ``(None, None)`` when all are finite."""
    bad = ~np.isfinite(q.values)
    n, count = int(bad.size), int(bad.sum())
    if not count:
        return None, None
    steps = q.steps[bad]
    kinds = _nan_kinds(q.values[bad])
    long = [(a, b) for a, b in _stretches(bad) if b - a >= SUSTAINED_MIN or b - a == n]
    if long:
        a, b = long[0]
        throughout = b - a == n
        to_end = bool(bad[-1]) and long[-1][1] == n
        others = count - sum(y - x for x, y in long)
        # Every burst of the metric is named (two bursts at different steps are one fault of
        # that metric, from the first, with all its steps counted), the earliest first.
        bursts = ", and ".join(
            f"from step {int(q.steps[x])} to step {int(q.steps[y - 1])} "
            f"({wording.counted(y - x, 'step')} in a row)"
            for x, y in long
        )
        detail = (
            f"{q.label} logs {kinds} on all {wording.counted(n, 'logged step')}"
            if throughout
            else f"{q.label} logs {kinds} on every step {bursts}; "
            + ("still at the last logged step" if to_end else "finite again after")
            + (f", and {wording.counted(others, 'other step')}" if others else "")
            + (f" ({wording.counted(count, 'step')} in all)" if len(long) > 1 or others else "")
        )
        return NonFinite(
            metric=q.label,
            quantity=quantity,
            pattern="sustained",
            steps=[int(s) for s in steps[:STEPS_LISTED]],
            count=count,
            first_step=int(q.steps[a]),
            last_step=int(steps[-1]),
            throughout=throughout,
            detail=detail,
        ), None
    if count >= RECURRING_MIN and count >= RECURRING_SHARE * n:
        return NonFinite(
            metric=q.label,
            quantity=quantity,
            pattern="recurring",
            steps=[int(s) for s in steps[:STEPS_LISTED]],
            count=count,
            first_step=int(steps[0]),
            last_step=int(steps[-1]),
            throughout=False,
            detail=f"{q.label} logs {kinds} at {wording.counted(count, 'step')} of {n} "
            f"({count / n:.0%}), first at step {int(steps[0])}, last at step {int(steps[-1])}, "
            f"finite between: updates skipped again and again",
        ), None
    shown = ", ".join(str(int(s)) for s in steps[:5])
    at = f"step {shown}" if count == 1 else f"steps {shown}"
    if bad[-1]:
        return None, (
            f"{q.label} logs {kinds} at {at} of {n}, the last logged: not yet a divergence (a "
            f"trainer such as verl skips such an update; {SUSTAINED_MIN} in a row would be one)"
        )
    return None, (
        f"{q.label} logs {kinds} at {at} only ({count} of {n} logged steps), finite after: an "
        f"update the trainer skipped (verl's actor skips a step whose gradient norm is not "
        f"finite), a note, not a divergence"
    )


def nonfinite(run: RunData, series: Mapping[str, QuantitySeries]) -> list[NonFinite]:
    """NaN/inf that is a fault: in a loss, gradient norm, entropy or reward, sustained from a step
    to the last one or recurring (:func:`classify_nonfinite`)."""
    found = [classify_nonfinite(k, series[k])[0] for k in NAN_QUANTITIES if k in series]
    return [f for f in found if f is not None]


def nonfinite_notes(series: Mapping[str, QuantitySeries]) -> list[str]:
    """NaN/inf that is a note: a step or a few the trainer skipped."""
    found = [classify_nonfinite(k, series[k])[1] for k in NAN_QUANTITIES if k in series]
    return [n for n in found if n is not None]


def find_faults(run: RunData, series: Mapping[str, QuantitySeries]) -> list[Fault]:
    """Every fault of the run, the earliest first: what went wrong first is the likeliest cause
    of what followed, and the card's first line names it with the step it began.  Faults that
    began at the same step keep the order sharp changes, NaN/inf, signs it is not learning."""
    from rlmap_bot.runs.signals.shifts import shift_faults

    found: list[Fault] = [*shift_faults(series), *nonfinite(run, series), *not_learning(series)]
    return sorted(found, key=lambda f: f.first_step)
