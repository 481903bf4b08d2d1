"""Levels, not only slopes: a trend signal is judged against the run's first logged values too.

The family (issue 17): a quantity that fell to a small fraction of its start early in the run and
then sat flat read "stable" (entropy) or grew (length), because the warm-up and early windows sat
after the fall.  Each case below is one member of that family, written as a curve shape.
"""

from __future__ import annotations

import numpy as np
import pytest

from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from rlmap_bot.runs.stats import COLLAPSED_SHARE
from support import runlogs as rl


def _derive(tmp_path, aliases, steps, **curves):
    """A verl JSONL log of the given curves (neutral names: entropy, length, reward, grad_norm)."""
    names = {
        "entropy": "actor/entropy",
        "length": "response_length/mean",
        "reward": "critic/score/mean",
        "grad_norm": "actor/grad_norm",
        "pg_loss": "actor/pg_loss",
    }
    records = [
        (int(s), {names[k]: float(v[i]) for k, v in curves.items()}) for i, s in enumerate(steps)
    ]
    run = read_source(rl.write_verl_jsonl(tmp_path / "run.jsonl", records), aliases=aliases)
    return derive_signals(run, aliases)


def _noise(n, scale, seed=0):
    return np.random.default_rng(seed).normal(0, scale, n)


def test_an_early_collapse_on_a_long_run_is_collapsed_not_stable(tmp_path, aliases):
    """0.40 -> about 0.03 within the first 200 of 1,120
    steps, then flat (the verl GRPO run of the issue).
    """
    steps = np.arange(1, 1121)
    entropy = 0.03 + 0.37 * np.exp(-steps / 45) + np.abs(_noise(steps.size, 0.002))
    d = _derive(tmp_path, aliases, steps, entropy=entropy, reward=0.5 + _noise(steps.size, 0.02, 1))
    assert d.signals["entropy_trend"] == "collapsed"
    src = d.signal_sources["entropy_trend"]
    assert src.first_start == 1 and src.first_level > 0.3 and src.level < 0.05


def test_a_short_run_sees_its_start(tmp_path, aliases):
    """106 points, 0.256 -> 0.061 (24% of the start):
    collapsed; the early window starts at the first point.
    """
    steps = np.arange(1, 107)
    entropy = 0.061 + 0.195 * np.exp(-(steps - 1) / 12) + np.abs(_noise(steps.size, 0.001))
    d = _derive(tmp_path, aliases, steps, entropy=entropy)
    assert d.signals["entropy_trend"] == "collapsed"
    short = np.arange(1, 61)
    d = _derive(tmp_path, aliases, short, entropy=0.5 - 0.001 * short + _noise(short.size, 0.005))
    assert d.signals["entropy_trend"] == "stable"
    assert d.signal_sources["entropy_trend"].baseline_start == 1, (
        "no warm-up skipped under 100 points"
    )


def test_length_growth_is_the_last_level_over_the_first(tmp_path, aliases):
    """A 49-point TRL-like run whose mean length fell from 53 to about 4 tokens by step 40."""
    steps = np.arange(1, 50)
    length = np.maximum(4.0, 53 - 1.3 * (steps - 1)) + np.abs(_noise(steps.size, 0.3))
    d = _derive(tmp_path, aliases, steps, length=length)
    assert d.signals["length_growth"] == pytest.approx(4.2 / 53, abs=0.02)
    src = d.signal_sources["length_growth"]
    assert src.baseline_start == 1 and src.baseline_end == 3 and src.end == 49


def test_a_slow_steady_fall_to_a_fifth_is_collapsed_while_falling(tmp_path, aliases):
    steps = np.arange(1, 301)
    entropy = 0.6 * (1 - 0.8 * steps / 300) + _noise(steps.size, 0.003)
    d = _derive(tmp_path, aliases, steps, entropy=entropy)
    assert d.signals["entropy_trend"] == "collapsed"


def test_a_fall_to_two_fifths_that_stopped_is_declined_not_collapsed(tmp_path, aliases):
    """Above the line: 0.5 -> 0.2 early, then flat, is not collapsed (and not falling any more);
    nor is it stable, which would contradict the chart: it is declined."""
    steps = np.arange(1, 401)
    entropy = 0.2 + 0.3 * np.exp(-steps / 20) + _noise(steps.size, 0.002)
    d = _derive(tmp_path, aliases, steps, entropy=entropy)
    assert d.signals["entropy_trend"] == "declined"
    assert (
        d.signal_sources["entropy_trend"].level
        > COLLAPSED_SHARE * d.signal_sources["entropy_trend"].first_level
    )


def test_a_gentle_fall_of_a_third_reads_declined_and_a_tenth_stable(tmp_path, aliases):
    """The example log's shape (0.6 -> 0.4, still falling)
    once read "stable" beside a falling chart.
    """
    steps = np.arange(1, 201)
    d = _derive(tmp_path, aliases, steps, entropy=0.6 - 0.001 * steps + _noise(steps.size, 0.005))
    assert d.signals["entropy_trend"] == "declined"
    assert "declined at <= 80%" in d.signal_sources["entropy_trend"].method
    d = _derive(tmp_path, aliases, steps, entropy=0.6 - 0.0003 * steps + _noise(steps.size, 0.005))
    assert d.signals["entropy_trend"] == "stable"


def test_a_reward_that_collapsed_and_sat_flat_reads_falling(tmp_path, aliases):
    steps = np.arange(1, 251)
    reward = 0.05 + 0.6 * np.exp(-steps / 15) + np.abs(_noise(steps.size, 0.005))
    d = _derive(tmp_path, aliases, steps, reward=reward)
    assert d.signals["proxy_reward_trend"] == "falling"
    assert "read as falling" in d.signal_sources["proxy_reward_trend"].detail


@pytest.mark.parametrize("shape", ["early", "late", "steady", "step"])
def test_no_trend_reads_stable_or_flat_below_a_quarter_of_its_start(shape, tmp_path, aliases):
    steps = np.arange(1, 181)
    t = steps / steps[-1]
    fall = {
        "early": np.exp(-t * 25),
        "late": 1 / (1 + np.exp((t - 0.6) * 30)),
        "steady": 1 - t,
        "step": (t < 0.3).astype(float),
    }[shape]
    base = 0.1 + 0.9 * fall  # ends at a tenth of its start
    d = _derive(
        tmp_path,
        aliases,
        steps,
        entropy=0.5 * base,
        reward=0.8 * base + np.abs(_noise(steps.size, 0.003)),
    )
    assert d.signals["entropy_trend"] in ("collapsed", "collapsing")
    assert d.signals["proxy_reward_trend"] == "falling"
