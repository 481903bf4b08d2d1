"""Gradient-norm spikes against a reference that has two levels (issue 36, the bank's
trl-tb-countdown: a 0.16 step called a spike "588x the rolling median", the median being the
~1e-4 of steps where every GRPO group had zero reward spread).

A spike is an update larger than the run has been making. The family: a metric that alternates
between two levels, so the median and MAD of the window sit on the lower one. Each member is
written here from its mechanism, not from the bank log."""

from __future__ import annotations

import numpy as np

from rlmap_bot.runs import stats


def _steps(n: int) -> np.ndarray:
    return np.arange(1, n + 1)


def test_grpo_steps_without_reward_spread_between_normal_updates_are_no_spikes():
    """Steps where every group has zero advantage update almost nothing (gradient ~1e-4); the
    others ~0.2. Which kind a step is, is random: often more than half are the quiet kind."""
    rng = np.random.default_rng(11)
    quiet = rng.random(200) < 0.55
    values = np.where(quiet, rng.uniform(5e-5, 3e-4, 200), rng.uniform(0.13, 0.42, 200))
    assert stats.spikes(_steps(200), values) == []
    values[150] = 4.0  # a real blow-up among them is still one
    assert [s.step for s in stats.spikes(_steps(200), values)] == [151]


def test_a_norm_logged_as_zero_between_accumulation_boundaries_has_no_spikes():
    """A trainer that logs 0 on micro-steps and the real norm (~1) on the step that syncs."""
    rng = np.random.default_rng(12)
    values = np.zeros(300)
    values[2::3] = rng.normal(1.0, 0.1, 100)
    assert stats.spikes(_steps(300), values) == []


def test_two_data_sources_taking_turns_with_different_gradient_scales_have_no_spikes():
    """Batches alternate between a math set (norm ~0.05) and a code set (~0.5), in random turns."""
    rng = np.random.default_rng(13)
    code = rng.random(240) < 0.4
    values = np.where(code, rng.normal(0.5, 0.05, 240), rng.normal(0.05, 0.005, 240))
    assert stats.spikes(_steps(240), np.abs(values)) == []


def test_up_to_three_true_spikes_within_one_window_are_each_found():
    """The level seen on two earlier steps of the window does not hide a third spike."""
    rng = np.random.default_rng(14)
    values = rng.normal(1.0, 0.05, 120)
    for i in (60, 68, 75):
        values[i] = 10.0
    assert [s.step for s in stats.spikes(_steps(120), values)] == [61, 69, 76]
