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


def test_a_forecast_card_keeps_what_more_steps_buy_and_where_a_run_past_its_best_settles():
    """The card's title says the ceiling (or that the run is past its best) in place of the
    forecast line's head; the rest of the line must still be on the card: what 1,000 more steps
    buy (the issue's answer to "what does more compute buy") and, for a run past its best, the
    level the fit expects it to settle at."""
    x, y = run(Truth(0.8, 1.5, 200), 300, seed=1)
    rising = outlook(x, y, source="r", metric="reward", quantity="training reward")
    body = to_dicts(forecast_blocks(rising)[0])[1]["text"]["text"]
    assert rising.per_1000_steps is not None and rising.per_1000_steps > 0
    assert body.startswith("• Another 1,000 steps buy about +"), body

    x = np.arange(1, 401, dtype=float)
    bend = 0.2 + 0.5 * (1 - np.exp(-x / 60)) - 0.3 * np.clip((x - 250) / 150, 0, 1)
    y = bend + np.random.default_rng(0).normal(0, 0.01, x.size)
    past = outlook(x, y, source="r", metric="reward", quantity="training reward")
    assert past.past_peak
    card = json.dumps(to_dicts(forecast_blocks(past)[0]))
    assert "past its best" in card and "The fit expects it to settle near" in card, card


def test_a_run_coming_down_from_its_best_gets_a_card_that_says_so():
    x = np.arange(1, 401, dtype=float)
    y = 0.2 + 0.5 * (1 - np.exp(-x / 60)) - 0.3 * np.clip((x - 280) / 120, 0, 1)
    y = y + np.random.default_rng(4).normal(0, 0.015, x.size)
    f = outlook(x, y, source="r", metric="reward", quantity="training reward")
    blocks, text = forecast_blocks(f)
    card = json.dumps(to_dicts(blocks))
    assert "Down from its best; where it settles is not known yet" in card, card
    assert "down from its best (0.7" in card and "No forecast" not in card, card
