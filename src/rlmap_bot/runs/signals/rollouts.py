"""The rollout-generation signals: response length and truncation, the trainer's wait for rollouts,
the environment's share of rollout time, and how stale the rollouts' policy is."""

from __future__ import annotations

from typing import Callable

from rlmap_bot.results.runs import SignalSource
from rlmap_bot.runs.signals.base import (
    Missing,
    Reading,
    Readings,
    step_span,
    steps_text,
    with_level,
)


def length_growth(r: Readings) -> Reading:
    q, steps, values, win = r.dense("response_length", "the response length")
    lv = r.level(steps, values, win)
    if lv.first <= 0:
        raise Missing(f"{q.label} starts at {lv.first:.3g}; lengths must be positive")
    a, b = step_span(steps, lv.last_slice)
    c, d = step_span(steps, lv.first_slice)
    src = SignalSource(
        metric=q.label,
        window=f"{steps_text(steps, lv.last_slice)} against the first logged, "
        f"{steps_text(steps, lv.first_slice)}",
        method="the last level (median of the last tenth of the points, or of the window you "
        "chose) over the first level (median of the first 3 logged points)",
        detail=f"{lv.first:.4g} -> {lv.last:.4g} tokens",
        start=a,
        end=b,
        baseline_start=c,
        baseline_end=d,
    )
    with_level(src, steps, lv)
    return float(
        f"{lv.last / lv.first:.4g}"
    ), src  # significant figures: a collapse to 0.0006 is not 0.001


def truncation_rate(r: Readings) -> Reading:
    return r.recent_mean(
        "truncation", "the truncation share", "mean share truncated at the length limit"
    )


def rollout_wait_fraction(r: Readings) -> Reading:
    return r.recent_mean(
        "trainer_idle",
        "the trainer's wait for rollouts",
        "mean share of the step the trainer waits for rollouts",
    )


def env_time_fraction(r: Readings) -> Reading:
    return r.recent_mean(
        "env_time_share",
        "environment time",
        "mean share of rollout time spent in the environment",
    )


def policy_lag_steps(r: Readings) -> Reading:
    value, src = r.recent_mean(
        "staleness",
        "policy staleness",
        "mean staleness over the recent window",
        share=False,
        digits=3,
    )
    return max(0.0, value), src


SIGNALS: dict[str, Callable[[Readings], Reading]] = {
    "length_growth": length_growth,
    "truncation_rate": truncation_rate,
    "rollout_wait_fraction": rollout_wait_fraction,
    "env_time_fraction": env_time_fraction,
    "policy_lag_steps": policy_lag_steps,
}
