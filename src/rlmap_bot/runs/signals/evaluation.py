"""The evaluation signals: the held-out score's trend over sparse validations, and how far it moved
from the evaluation before training."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from rlmap_bot.results.runs import SignalSource
from rlmap_bot.runs import stats
from rlmap_bot.runs.signals.base import UNIT_TOL, Missing, Reading, Readings, finite_points

#: Sparse validation: drop the first evaluation (it often jumps: format learning, per the
#: notes) and judge at least 6 recent evaluations, 3 against 3 (judgement: the fewest where a
#: median means anything); with fewer than 5 evaluations after the first, no trend.
EVAL_RECENT_MIN, EVAL_MIN = 6, 5
#: eval_improvement: the median of the last 3 evaluations against the pre-training one
#: (judgement: 3 damps one noisy eval without reaching back into older checkpoints).
EVAL_LAST = 3


def heldout_score_trend(r: Readings) -> Reading:
    q = r.need("heldout_score", "a held-out (validation) score")
    steps, values = finite_points(q)
    if steps.size - 1 < EVAL_MIN:
        raise Missing(f"{q.label} has {steps.size} evaluations; at least {EVAL_MIN + 1} are needed")
    steps, values = steps[1:], values[1:]  # the first evaluation often jumps (format learning)
    win = stats.windows(steps, r.window) if r.window is not None else None
    n_recent = (win.recent.stop - win.recent.start) if win else 0
    k = n_recent if n_recent >= EVAL_RECENT_MIN else max(EVAL_RECENT_MIN, math.ceil(steps.size / 2))
    k = min(k, steps.size)
    rs, rv = steps[-k:], values[-k:]
    half = k // 2
    t = stats.judge_trend(rs[:half], rv[:half], rs[half:], rv[half:], values)
    direction, detail = t.direction, t.describe()
    lv = stats.level(values)  # against the first evaluation after the dropped one
    if lv is not None:
        detail += "; " + lv.describe(steps)
        if lv.collapsed() and direction != "falling":
            direction = "falling"
            detail += (
                f"; read as falling: now at most {stats.COLLAPSED_SHARE:.0%} of its first level"
            )
    if (
        direction == "falling"
    ):  # a score that rose and then fell: where it peaked says more than its ends
        top = int(np.argmax(values))
        detail += f"; highest {values[top]:.3g} at step {int(steps[top])}"
    return direction, SignalSource(
        metric=q.label,
        window=f"the last {k} evaluations, steps {int(rs[0])}-{int(rs[-1])}",
        method="sparse validation: first evaluation dropped, the later half of the recent "
        "evaluations "
        "against the earlier half; flat band and Sen's slope as for dense trends; a level at "
        "most "
        "a quarter of the first evaluations' reads falling",
        detail=detail,
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
        method=f"median of the last {EVAL_LAST} evaluations minus the evaluation before "
        f"training, in {unit}",
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
