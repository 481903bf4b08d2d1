"""The reward signals: the training reward's trend and pass rate, and the share of groups whose
samples all got the same reward (no advantage to learn from)."""

from __future__ import annotations

from typing import Callable

from rlmap_bot.runs.signals.base import UNIT_TOL, Missing, Reading, Readings


def proxy_reward_trend(r: Readings) -> Reading:
    direction, src = r.leveled_trend(*r.dense("task_reward", "the training reward"))
    collapse = r.fault("reward_collapse")  # the tail's collapse, not the quarter's median
    if collapse is not None and direction != "falling":
        direction, src.detail = "falling", src.detail + f"; read as falling: {collapse.detail}"
        src.margin = None  # a collapse is no call at the band's edge
    return direction, src


def train_solve_rate(r: Readings) -> Reading:
    """The share of training tasks solved: the task's own pass rate where the run logs it apart
    from the reward (a reward with a format bonus earns points on tasks it never solves), else a
    0-1 training reward."""
    if "task_pass_rate" in r.q:
        return r.recent_mean(
            "task_pass_rate",
            "the training pass rate",
            "mean pass rate of the task's own check over the recent window (no format bonus)",
        )
    q, steps, values, win = r.dense("task_reward", "the training reward")
    lo, hi = float(values.min()), float(values.max())
    if lo < -UNIT_TOL or hi > 1 + UNIT_TOL:
        raise Missing(
            f"{q.label} ranges {lo:.3g} to {hi:.3g}, not a 0-1 pass rate; map a success-rate "
            f"metric with --map train_solve_rate=METRIC"
        )
    value, src = r.recent_mean(
        "task_reward",
        "the training reward",
        "mean task reward over the recent window (a 0-1 reward is a pass rate)",
    )
    return value, src


def zero_advantage_fraction(r: Readings) -> Reading:
    if "zero_std_fraction" not in r.q and "zero_std_count" in r.q:
        raise Missing(
            f"{r.q['zero_std_count'].label} counts zero-spread groups but the number of groups per "
            f"step is not logged; divide by your rollout batch size and map it"
        )
    return r.recent_mean(
        "zero_std_fraction",
        "the zero-advantage share",
        "mean share of prompts whose samples all got the same reward",
    )


SIGNALS: dict[str, Callable[[Readings], Reading]] = {
    "proxy_reward_trend": proxy_reward_trend,
    "train_solve_rate": train_solve_rate,
    "zero_advantage_fraction": zero_advantage_fraction,
}
