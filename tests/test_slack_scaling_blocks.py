"""The forecast and comparison blocks: the terminal's sentences as Block Kit, names from logs
escaped, within Slack's limits (rendered here directly; tests/test_slack_scaling.py drives them
through the Slack app)."""

from __future__ import annotations

import json

import numpy as np

from rlmap_bot.scaling.compare import RunCurve, compare_runs
from rlmap_bot.scaling.outlook import outlook
from rlmap_bot.slack.blocks.common import to_dicts
from rlmap_bot.slack.blocks.scaling import comparison_blocks, forecast_blocks
from support.scalingcurves import Truth, run

EVIL = "<!channel> <@U123> run&co"


def test_a_forecast_card_says_the_forecast_and_escapes_the_run_name():
    x, y = run(Truth(0.75, 1.3, 60), 250)
    f = outlook(x, y, source=EVIL, metric="reward", quantity="training reward")
    blocks, text = forecast_blocks(f)
    dumped = json.dumps(to_dicts(blocks))
    assert "<!channel>" not in dumped and "&lt;!channel&gt;" in dumped
    assert "Ceiling near" in dumped and text.startswith("Forecast:")


def test_a_too_short_run_card_says_why_there_is_no_forecast():
    f = outlook(np.arange(1.0, 6.0), np.arange(5.0), source="r", metric="m", quantity="reward")
    blocks, text = forecast_blocks(f)
    assert "Not enough to forecast yet: only 5 points" in json.dumps(to_dicts(blocks))
    assert "not enough to forecast yet" in text


def test_a_comparison_card_names_the_higher_ceiling():
    a = RunCurve(EVIL, *run(Truth(0.85, 1.5, 40), 300, seed=1))
    b = RunCurve("b", *run(Truth(0.55, 1.5, 40), 300, seed=2))
    blocks, text = comparison_blocks(compare_runs([a, b], "reward", "training reward"))
    dumped = json.dumps(to_dicts(blocks))
    assert "has the higher ceiling" in dumped and "<@U123>" not in dumped
    assert len(text) <= 3000
