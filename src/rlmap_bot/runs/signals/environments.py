"""The environment signals: how many times the prompts have been passed over (task repeats)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from rlmap_bot.results.runs import SignalSource
from rlmap_bot.runs.signals.base import Reading, Readings
from rlmap_bot.wording import counted


def task_repeat_epochs(r: Readings) -> Reading:
    q, steps, values, win = r.dense("epoch", "the epoch")
    last = float(values[-1])
    if q.unit == "epochs":
        return round(max(0.0, last), 3), SignalSource(
            metric=q.label,
            window=f"step {int(steps[-1])}",
            method="last logged (fractional) epoch",
            detail=f"{counted(float(f'{last:.3g}'), 'pass')} over the prompts",
            start=int(steps[-1]),
            end=int(steps[-1]),
        )
    # An epoch index (0-based): passes = index + the share of the current epoch done,
    # with the epoch length taken from where the index last changed.
    changes = np.flatnonzero(np.diff(values) > 0)
    if changes.size >= 1:
        starts = steps[changes + 1]
        length = (
            float(np.median(np.diff(np.concatenate([[steps[0]], starts])))) if starts.size else 0.0
        )
        done = (steps[-1] - starts[-1] + 1) / length if length > 0 else 0.0
        value = last + min(done, 1.0)
        how = (
            f"epoch index {last:.0f} + {min(done, 1.0):.2f} of an epoch of about {length:.0f} steps"
        )
    else:
        value = last + 1.0
        how = (
            f"epoch index {last:.0f} and no epoch boundary seen: an upper bound of "
            f"{counted(int(last + 1), 'pass')}"
        )
    return round(value, 3), SignalSource(
        metric=q.label,
        window=f"steps {int(steps[0])}-{int(steps[-1])}",
        method="passes over the prompts from the 0-based epoch index",
        detail=how,
        start=int(steps[0]),
        end=int(steps[-1]),
    )


SIGNALS: dict[str, Callable[[Readings], Reading]] = {
    "task_repeat_epochs": task_repeat_epochs,
}
