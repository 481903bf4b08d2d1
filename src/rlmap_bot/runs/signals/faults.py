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

from rlmap_bot.results.faults import Fault, NonFinite, NotLearning, NotLearningKind
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


def nonfinite(run: RunData, series: Mapping[str, QuantitySeries]) -> list[NonFinite]:
    """NaN/inf in a loss, gradient norm, entropy or reward, with the steps it happened at."""
    found: list[NonFinite] = []
    for quantity in NAN_QUANTITIES:
        q = series.get(quantity)
        if q is None:
            continue
        bad = ~np.isfinite(q.values)
        if not bad.any():
            continue
        steps = q.steps[bad]
        kinds = sorted({"NaN" if np.isnan(x) else "inf" for x in q.values[bad][:STEPS_LISTED]})
        found.append(
            NonFinite(
                metric=q.label,
                steps=[int(s) for s in steps[:STEPS_LISTED]],
                count=int(steps.size),
                first_step=int(steps[0]),
                last_step=int(steps[-1]),
                throughout=bool(bad.all()),
                detail=f"{q.label} logs {'/'.join(kinds)} at {int(steps.size)} step(s), first at "
                f"step "
                f"{int(steps[0])}" + (f", last at step {int(steps[-1])}" if steps.size > 1 else ""),
            )
        )
    return found


def find_faults(run: RunData, series: Mapping[str, QuantitySeries]) -> list[Fault]:
    """Every fault of the run: a sharp change at its tail first (what is happening now), then
    NaN/inf, then the signs it is not learning."""
    from rlmap_bot.runs.signals.shifts import shift_faults

    return [*shift_faults(series), *nonfinite(run, series), *not_learning(series)]
