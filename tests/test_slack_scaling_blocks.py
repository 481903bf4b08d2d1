"""The forecast and comparison blocks: the terminal's sentences as Block Kit, names from logs
escaped, within Slack's limits (rendered here directly; tests/test_slack_scaling.py drives them
through the Slack app)."""

from __future__ import annotations

import json
import re

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


def test_a_run_at_its_forecast_ceiling_is_said_in_words_not_as_100_percent_and_plus_zero():
    # A curve whose bend is at step 10, read to step 1,000: the fit has it at its ceiling, and
    # 1,000 more steps buy less than 0.001: "less than" the ceiling's last decimal, or a figure
    # written to its four decimals when its interval is that narrow, never a bare "+0.000".
    x, y = run(Truth(0.75, 1.5, 10), 1000, noise=0.01, seed=3)
    f = outlook(x, y, source="r", metric="reward", quantity="training reward")
    blocks, text = forecast_blocks(f)
    dumped = " ".join(json.dumps(to_dicts(blocks)).split())
    for said in (dumped, text):
        assert "100%" not in said and not re.search(r"\+0\.0+(?!\d)", said), said
    assert "At its forecast ceiling, near 0.75" in dumped, dumped
    assert re.search(
        r"more steps buy almost nothing \((less than 0\.001|about \+0\.000[1-4]) per 1,000 steps\)",
        text,
    ), text
    other = RunCurve("b", *run(Truth(0.55, 1.5, 40), 300, seed=2))
    c = compare_runs([RunCurve("a", x, y), other], "reward", "training reward")
    card = json.dumps(to_dicts(comparison_blocks(c)[0]))
    assert "at its ceiling" in card and "100% reached" not in card, card
