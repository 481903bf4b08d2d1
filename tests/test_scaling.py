"""The scaling core (issue 37): a run's forecast, the comparison of runs and the batch decision, on
generated runs whose ceiling and efficiency are known (tests/support/scalingcurves.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlmap_bot.results.scaling import Estimate, Forecast, forecast_line, forecast_sentences
from rlmap_bot.scaling.compare import RunCurve, batch_decision, compare_runs
from rlmap_bot.scaling.curves import fit_sigmoid
from rlmap_bot.scaling.forecast import forecast_level
from rlmap_bot.scaling.outlook import outlook
from support.scalingcurves import Truth, run


def test_the_sigmoid_fit_recovers_a_clean_curve():
    truth = Truth(a=0.7, b=1.5, c_mid=60)
    x = np.arange(1, 401, dtype=float)
    fit = fit_sigmoid(x, truth(x))
    assert fit is not None
    assert fit.curve.a == pytest.approx(0.7, abs=0.01)
    assert fit.curve.c_mid == pytest.approx(60, rel=0.05)


def test_a_rising_run_is_forecast_within_its_interval_and_below_a_plain_extrapolation():
    """Most generated runs cut at half, past their bend, have their later level inside the 80%
    interval."""
    inside = 0
    for seed in range(10):
        truth = Truth(a=0.6 + 0.02 * seed, b=1.4, c_mid=60)
        x, y = run(truth, 300, seed=seed)
        cut = x <= 150
        got = forecast_level(x[cut], y[cut], x[270:])
        assert got.abstain is None
        inside += got.low <= float(np.mean(truth(x[270:]))) <= got.high
    assert inside >= 7


def test_a_flat_run_is_saturated_and_more_steps_buy_nothing():
    x = np.arange(1, 301, dtype=float)
    y = 0.5 + np.random.default_rng(3).normal(0, 0.02, x.size)
    f = outlook(x, y, source="flat", metric="reward", quantity="training reward")
    assert f.saturated and f.abstain is None
    assert f.asymptote is not None and f.asymptote.low < 0.5 < f.asymptote.high
    assert f.reached == 1.0 or f.reached is None
    assert "stopped moving" in forecast_line(f)


def test_too_short_a_run_is_not_forecast_and_says_why():
    x = np.arange(1, 11, dtype=float)
    f = outlook(x, x / 10, source="short", metric="reward", quantity="training reward")
    assert f.abstain is not None and "10 points" in f.abstain
    assert f.asymptote is None and f.at is None
    assert forecast_line(f).startswith("Forecast: not enough to forecast yet (only 10 points")


def test_a_run_cut_before_its_bend_is_not_forecast_and_says_why():
    """Before its midpoint a sigmoid's ceiling is not identified: ceilings far apart fit alike."""
    truth = Truth(a=0.8, b=1.5, c_mid=400)
    x, y = run(truth, 120, noise=0.01, seed=4)
    f = outlook(x, y, source="early", metric="reward", quantity="training reward")
    assert f.abstain is not None and "before its bend" in f.abstain
    assert f.asymptote is None


def test_the_outlook_of_a_run_still_rising_says_what_more_steps_buy():
    truth = Truth(a=0.8, b=1.2, c_mid=100)
    x, y = run(truth, 250, noise=0.01)
    f = outlook(x, y, source="r", metric="reward", quantity="training reward", to=1000)
    assert f.abstain is None and not f.saturated
    assert f.asymptote is not None and f.asymptote.value > f.now
    assert f.step_95 is not None and f.step_95 > 250
    assert f.per_1000_steps is not None and f.per_1000_steps > 0
    assert f.at is not None and f.at.step == 1000 and f.at.low < f.at.value < f.at.high
    assert 0 < (f.reached or 0) < 1
    assert f.curve is not None and f.curve.fit_x[-1] >= 1000


def _pairs(count: int, seed: int = 11):
    """Generated pairs: half differ only in the ceiling (0.2 apart), half only in efficiency (the
    midpoint three times later); which run comes first is shuffled."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        a = rng.uniform(0.5, 0.7)
        b = rng.uniform(1.0, 2.0)
        c = rng.uniform(30, 80)
        if i % 2 == 0:
            better, worse, kind = Truth(a + 0.2, b, c), Truth(a, b, c), "ceiling"
        else:
            better, worse, kind = Truth(a, b, c), Truth(a, b, 3 * c), "efficiency"
        runs = [("better", better), ("worse", worse)]
        if rng.random() < 0.5:
            runs.reverse()
        curves = [
            RunCurve(name, *run(t, 400, seed=100 * i + j)) for j, (name, t) in enumerate(runs)
        ]
        yield kind, curves


def test_generated_pairs_get_the_right_winner_and_the_right_kind_of_difference():
    """Issue 37: >= 90% right on pairs with a known ceiling and efficiency."""
    right = total = 0
    for kind, curves in _pairs(20):
        got = compare_runs(curves, "reward", "training reward")
        winner = got.higher_ceiling if kind == "ceiling" else got.faster
        right += got.kind == kind and winner == "better"
        total += 1
    assert right / total >= 0.9, f"{right} of {total}"


def test_a_comparison_of_one_run_too_short_says_it_cannot_compare():
    x, y = run(Truth(0.7, 1.5, 60), 300)
    short = RunCurve("short", x[:8], y[:8])
    got = compare_runs([RunCurve("long", x, y), short], "reward", "training reward")
    assert got.kind == "unclear" and "not enough to compare yet" in got.verdict
    assert "short" in got.verdict


def test_a_comparison_with_a_run_that_came_down_says_its_ceiling_is_where_it_settles():
    """The verdict weighs the levels the fits tend to; for a run that fell that level is where it
    settles, and the comparison says so beside its row, in the terminal and on the card."""
    from rlmap_bot.cli.render_scaling import comparison_text

    x, up = run(Truth(0.7, 2.0, 60), 400, seed=3)
    down = Truth(0.2, 2.0, 80, r0=0.6)(x) + np.random.default_rng(4).normal(0, 0.02, x.size)
    got = compare_runs([RunCurve("up", x, up), RunCurve("down", x, down)], "reward", "reward")
    assert [f.fell for f in got.forecasts] == [False, True]
    note = (
        "down came down since its start: for a run that fell, its 'ceiling' here is the level it "
        "settles at"
    )
    assert got.notes == [note]
    said = comparison_text(got)
    assert "- down: settles near" in said and "down since its start" in said, said


def test_the_batch_decision_reads_the_speedup_and_the_wall_clock():
    """At 2B the generated run needs half the steps (perfect scaling) but each step takes 2.5
    times as long: fewer steps, later on the clock."""
    small = Truth(0.7, 1.5, 100)
    large = Truth(0.7, 1.5, 50)
    xs, ys = run(small, 500, seed=1)
    xl, yl = run(large, 500, seed=2)
    got = batch_decision(
        RunCurve("b256", xs, ys, np.full(xs.size, 10.0), 256),
        RunCurve("b512", xl, yl, np.full(xl.size, 25.0), 512),
    )
    assert got.speedup == pytest.approx(2.0, rel=0.25)
    assert got.steps_small > got.steps_large
    assert got.wall_clock == "b256" and got.seconds_small < got.seconds_large


def test_the_batch_decision_with_no_gain_reads_about_one():
    truth = Truth(0.7, 1.5, 80)
    xs, ys = run(truth, 400, seed=5)
    xl, yl = run(truth, 400, seed=6)
    got = batch_decision(RunCurve("small", xs, ys, batch=128), RunCurve("large", xl, yl, batch=256))
    assert got.speedup == pytest.approx(1.0, abs=0.25)


@pytest.mark.parametrize(
    ("onset", "drop", "seed"),
    [(220, 0.15, 0), (250, 0.3, 1), (280, 0.15, 2)],
    ids=["a small fall from step 220", "a large fall from step 250", "a small fall from step 280"],
)
def test_a_run_that_falls_late_after_a_plateau_is_said_to_be_past_its_best(onset, drop, seed):
    """A reward that levels off near 0.7 and then falls in a straight line over the last third
    or so of the run. The looks back inside the run mostly see the plateau, so every shape missed
    the fall there and the recent level missed it least: a forecast by that one shape alone read
    "at its forecast ceiling: more steps buy almost nothing" of every such run. The shapes'
    blend keeps the trend's share, and the run is said to be past its best."""
    x = np.arange(1, 401, dtype=float)
    fall = drop * np.clip((x - onset) / (400 - onset), 0, 1)
    y = 0.2 + 0.5 * (1 - np.exp(-x / 60)) - fall
    y = y + np.random.default_rng(seed).normal(0, 0.015, x.size)
    f = outlook(x, y, source="late-fall", metric="reward", quantity="training reward")
    line = forecast_line(f)
    assert f.past_peak and line.startswith("Forecast: past its best"), line


@pytest.mark.parametrize(
    "shape",
    [
        "levels near 0.7, loses 0.3 over its last 120 steps",
        "levels near 0.7, loses 0.3 over its last 80 steps",
        "peaks near 0.6 at step 200 of 300, crashes to 0.2 over its last 40",
    ],
)
def test_a_run_coming_down_from_its_best_with_no_bend_says_so_not_not_enough(shape):
    """A run that climbed and is now falling fast, with no bend yet to show where the fall ends:
    the sigmoid's midpoint lies ahead, so no level is forecast. "Not enough to forecast yet"
    beside a falling reward reads as silence; the forecast says how far it has come down from
    its best instead (or that it is past its best, when a level is forecast)."""
    if shape.startswith("peaks"):
        x = np.arange(1, 301, dtype=float)
        y = 0.1 + 0.5 * (1 - np.exp(-x / 50)) - 0.4 * np.clip((x - 260) / 40, 0, 1)
        seed = 3
    else:
        x = np.arange(1, 401, dtype=float)
        onset = 280 if "120" in shape else 320
        y = 0.2 + 0.5 * (1 - np.exp(-x / 60)) - 0.3 * np.clip((x - onset) / (400 - onset), 0, 1)
        seed = 4
    y = y + np.random.default_rng(seed).normal(0, 0.015, x.size)
    f = outlook(x, y, source="coming-down", metric="reward", quantity="training reward")
    line = forecast_line(f)
    said = ("Forecast: down from its best (", "Forecast: past its best")
    assert line.startswith(said), line
    assert "not enough to forecast" not in line


def test_a_run_still_climbing_is_not_said_to_come_down_from_its_best():
    x, y = run(Truth(0.8, 1.5, 200), 300, seed=1)
    f = outlook(x, y, source="r", metric="reward", quantity="training reward")
    assert f.peak is None and "down from" not in forecast_line(f)


def test_a_run_past_its_peak_is_said_to_be_past_its_best_not_a_share_of_a_ceiling():
    """Rise, then a steady fall (a run bending down before it collapses): the ceiling ahead is
    below where the run is, so no share of it is "reached" and no step brings "the rest"."""
    x = np.arange(1, 401, dtype=float)
    rise = Truth(a=0.8, b=2.0, c_mid=40)(x)
    y = rise - np.where(x > 200, (x - 200) * 0.0015, 0.0)
    y = y + np.random.default_rng(7).normal(0, 0.01, x.size)
    f = outlook(x, y, source="peaked", metric="reward", quantity="training reward")
    assert f.abstain is None and f.past_peak
    assert f.reached is None and f.step_95 is None
    assert forecast_line(f).startswith("Forecast: past its best")


def _fallen(shape: str, x: np.ndarray) -> np.ndarray:
    """Rewards that come down from where they started: a sigmoid falling to a floor, a slow
    decay still under way, and a dip that has begun to climb back (below its start still)."""
    if shape == "falls to a floor":
        return Truth(a=0.2, b=2.0, c_mid=80, r0=0.6)(x)
    if shape == "still decaying":
        return 0.3 + 0.3 * np.exp(-x / 250)
    return 0.5 - 0.2 * np.sin(np.pi * np.minimum(x, 300) / 400)


@pytest.mark.parametrize("shape", ["falls to a floor", "still decaying", "dips, climbs back"])
def test_a_run_that_came_down_is_told_where_it_settles_not_a_share_of_a_ceiling(shape):
    """A reward below where it started has no ceiling to reach: "62% of it reached" beside a
    falling curve, or "past its best ... below the 0.36 it is at now" beside a ceiling above
    0.36, misread it. The forecast says it came down, from what to what, and where it settles;
    the card, the compare row and the stop advice agree."""
    from rlmap_bot.results.scaling import fell_words, run_row
    from rlmap_bot.slack.blocks.scaling import forecast_blocks, forecast_title

    x = np.arange(1, 401, dtype=float)
    y = _fallen(shape, x) + np.random.default_rng(5).normal(0, 0.02, x.size)
    f = outlook(x, y, source="down", metric="reward", quantity="training reward")
    assert f.abstain is None and f.asymptote is not None and f.start is not None
    assert f.fell and f.reached is None and not f.past_peak
    assert f.now < f.start
    line = forecast_line(f)
    assert line.startswith("Forecast: down since its start ("), line
    assert "settle near" in line and not any(w in line for w in ("reached", "ceiling", "best"))
    assert forecast_title(f).startswith("Down since its start; settling near"), forecast_title(f)
    assert run_row(f).startswith("settles near"), run_row(f)
    # The card's title has no figures, so its body keeps the line that has them.
    blocks, _ = forecast_blocks(f)
    body = json.dumps([b.to_dict() for b in blocks])
    assert fell_words(f) in body, body


def test_a_run_still_coming_down_in_a_line_says_so_with_no_level_to_settle_at():
    """A reward falling steadily for 400 steps shows no bend, so where it settles is not
    identified; but "not enough to forecast yet" on 400 points of a plain fall says nothing of
    what a reader sees. The line says it came down, from what to what, and why no level is
    forecast."""
    from rlmap_bot.results.scaling import diagnosis_line, run_row
    from rlmap_bot.slack.blocks.scaling import forecast_title

    x = np.arange(1, 401, dtype=float)
    y = 0.6 - 0.0006 * x + np.random.default_rng(5).normal(0, 0.02, x.size)
    f = outlook(x, y, source="down", metric="reward", quantity="training reward")
    assert f.abstain and f.fell and f.asymptote is None
    line = forecast_line(f)
    assert line.startswith("Forecast: down since its start (0.5"), line
    assert line.endswith("with no bend yet to show where it settles."), line
    assert diagnosis_line(f) == line
    assert forecast_sentences(f)[1] == f"Why no level is forecast: {f.abstain}."
    assert forecast_title(f) == "Down since its start; where it settles is not known yet"
    assert run_row(f) == line.removeprefix("Forecast: ").removesuffix(".")


def _said(now: float, start: float, asymptote: Estimate) -> Forecast:
    """A training-reward forecast given by its figures, for the words said of it."""
    return Forecast(
        source="r",
        metric="reward",
        quantity="training reward",
        now=now,
        start=start,
        asymptote=asymptote,
    )


def test_a_level_below_a_run_that_gained_nothing_is_where_it_settles_not_a_ceiling():
    """A run that has gained nothing its noise can tell (0.28 at its start, 0.30 now) and whose
    forecast lies below it: "ceiling near 0.17" names no ceiling it could climb to, and "another
    1,000 steps buy about -0.11" reads as a gain with a typo. It settles there, and the steps
    move it."""
    from rlmap_bot.results.scaling import run_row
    from rlmap_bot.slack.blocks.scaling import forecast_title

    f = _said(now=0.3, start=0.28, asymptote=Estimate(value=0.17, low=-0.06, high=0.40))
    f = f.model_copy(update={"per_1000_steps": -0.11})
    assert forecast_line(f) == (
        "Forecast: the fit expects it to settle near 0.17 (-0.06 to 0.40); another 1,000 steps "
        "move it about -0.11."
    )
    assert forecast_title(f) == "Settling near 0.17 (-0.06 to 0.40)"
    assert run_row(f) == "settles near 0.17 (-0.06 to 0.40)"
    rising = f.model_copy(
        update={"per_1000_steps": 0.02, "asymptote": Estimate(value=0.4, low=0.35, high=0.45)}
    )
    assert forecast_line(rising).endswith("another 1,000 steps buy about +0.02.")


def test_a_run_at_its_ceiling_drifting_down_is_not_said_to_buy_a_negative_gain():
    """At its ceiling, steps that lower the forecast a measurable amount are a drift, not "almost
    nothing (about -0.02)"; a drift that rounds to nothing, and a drift up, keep the old words."""
    f = _said(now=0.75, start=0.3, asymptote=Estimate(value=0.75, low=0.68, high=0.82))
    f = f.model_copy(update={"reached": 1.0, "per_1000_steps": -0.02})
    assert forecast_line(f) == (
        "Forecast: at its forecast ceiling, near 0.75 (0.68-0.82): more steps buy nothing (the "
        "fit drifts about -0.02 per 1,000 steps)."
    )
    tiny = f.model_copy(update={"per_1000_steps": -0.001})
    assert forecast_line(tiny).endswith(
        "more steps buy almost nothing (less than 0.01 per 1,000 steps)."
    )
    up = f.model_copy(update={"per_1000_steps": 0.02})
    assert forecast_line(up).endswith(
        "more steps buy almost nothing (about +0.02 per 1,000 steps)."
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_ceiling_a_hair_below_the_level_is_a_run_at_its_ceiling_not_past_its_best(seed):
    """A plateau with a slight drift down over its last half, logged with little noise: the
    forecast's ceiling lies a few ten-thousandths below the level now, beyond the recent level's
    standard error but within one point's noise, so nothing of it would show on the curve. That
    is a run at its ceiling (the drift shows in what more steps buy), not "past its best"."""
    x, y = run(Truth(0.7, 2.0, 60), 600, noise=0.001, seed=seed)
    y = y - 6e-5 * np.maximum(x - 300, 0)
    f = outlook(x, y, source="drift", metric="reward", quantity="training reward")
    assert f.asymptote is not None and f.now is not None
    assert f.asymptote.value < f.now < f.asymptote.high
    assert not f.past_peak and f.reached == 1.0
    assert forecast_line(f).startswith("Forecast: at its forecast ceiling"), forecast_line(f)


@pytest.mark.parametrize("seed", [0, 1, 26])
def test_a_run_that_gained_nothing_its_noise_can_tell_gets_no_share_of_a_ceiling(seed):
    """A noisy run wandering around where it started (reward 0.55, noise 0.1, 200 steps): the
    ceiling may land a hair under the start, and a share of that "gain" read "0% of it reached".
    With no gain its noise can tell, no share is said, and nothing is past its best."""
    x = np.arange(1, 201, dtype=float)
    rng = np.random.default_rng(seed)
    y = 0.55 + 0.03 * np.sin(x / 30) + rng.normal(0, 0.1, x.size)
    f = outlook(x, y, source="wander", metric="reward", quantity="training reward")
    assert f.abstain is None and f.asymptote is not None
    assert f.reached is None and not f.past_peak
    line = forecast_line(f)
    said = ("Forecast: ceiling near", "Forecast: the fit expects it to settle near")
    assert line.startswith(said) and "reached" not in line, line


def test_no_step_for_the_rest_of_the_gain_when_no_gain_remains():
    """A run at its ceiling: the ceiling is no further ahead than the noise of the level now."""
    truth = Truth(a=0.7, b=2.0, c_mid=20)
    x, y = run(truth, 600, noise=0.02, seed=9)
    f = outlook(x, y, source="done", metric="reward", quantity="training reward")
    assert f.abstain is None and f.asymptote is not None
    assert f.asymptote.low <= f.now <= f.asymptote.high
    assert f.step_95 is None
    assert not any("95% of the gain" in s for s in forecast_sentences(f))


def test_an_interval_with_a_negative_end_is_written_with_to():
    from rlmap_bot.results.scaling import Estimate, interval

    assert interval(Estimate(value=0.2, low=-0.4, high=0.8)) == "0.2 (-0.4 to 0.8)"
    assert interval(Estimate(value=0.71, low=0.68, high=0.74)) == "0.710 (0.680-0.740)"
