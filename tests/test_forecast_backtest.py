"""The forecast backtest's baselines (benchmarks/forecast.py) on generated curves: each must be the
method it claims to be, or the goal it is held to means nothing."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from support import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
backtest = pytest.importorskip("forecast")


@pytest.mark.parametrize("first_step", [0, 1, 40])
def test_the_power_law_baseline_has_a_real_bootstrap_interval_wherever_the_run_starts(first_step):
    # A noisy power-law climb: the bootstrap must refit it around its own residuals, read at the
    # points' own steps (they were read one step off, and at step 0 as infinities, so the draws
    # failed and the interval shrank to the point).
    rng = np.random.default_rng(first_step)
    x = np.arange(first_step, first_step + 120, dtype=float)
    y = 0.8 - 0.6 * (x - first_step + 1) ** -0.5 + rng.normal(0, 0.02, x.size)
    at = np.arange(first_step + 300, first_step + 330, dtype=float)
    got = backtest.power(x, y, at)
    assert got is not None
    point, low, high = got
    truth = float(np.mean(0.8 - 0.6 * (at - first_step + 1) ** -0.5))
    assert abs(point - truth) < 0.05
    assert low < point < high and np.isfinite([low, high]).all()
