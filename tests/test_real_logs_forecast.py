"""`forecast` on real curves of the bank, held to expert readings written before the tool was run
(tests/data/real_logs/forecast_readings.yaml). Skipped without the bank, as tests/test_real_logs.py
is, and per curve when its log's folder is not there."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rlmap_bot.runs.aliases import load_aliases
from rlmap_bot.runs.sources import read_source
from rlmap_bot.scaling.outlook import outlook
from support import KNOWLEDGE
from support.realbank import bank_log, logs_folder

ROOT = Path(__file__).resolve().parent.parent
READINGS = ROOT / "tests" / "data" / "real_logs" / "forecast_readings.yaml"


LOGS = logs_folder()
if LOGS is None:
    pytest.skip(
        "the real-log files are not here: set RLMAP_REAL_LOGS to the folder holding them "
        "(tests/data/real_logs/README.md)",
        allow_module_level=True,
    )
CURVES = yaml.safe_load(READINGS.read_text(encoding="utf-8"))["curves"]


@pytest.mark.parametrize("curve", CURVES, ids=[c["log"] for c in CURVES])
def test_the_forecast_agrees_with_the_expert_reading(curve):
    assert LOGS is not None
    path = bank_log(LOGS, curve["log"], curve["path"])
    run = read_source(path, aliases=load_aliases(KNOWLEDGE), extra_metrics=[curve["metric"]])
    series = run.series[curve["metric"]]
    f = outlook(
        series.steps,
        series.values,
        source=curve["log"],
        metric=curve["metric"],
        quantity="training reward",
    )
    expect = curve["expect"]
    assert f.abstain is None and f.asymptote is not None
    assert f.asymptote.low <= expect["ceiling_contains"] <= f.asymptote.high, f.asymptote
    low, high = expect["ceiling_between"]
    assert low <= f.asymptote.value <= high, f.asymptote
    assert f.reached is not None and f.reached >= expect["reached_at_least"], f.reached
    assert (f.per_1000_steps or 0.0) <= expect["per_1000_steps_at_most"], f.per_1000_steps


@pytest.mark.parametrize("cut", [0.5, 0.7, 1.0])
def test_no_forecast_ahead_lies_beyond_the_ceiling(cut):
    """A verl PPO run still climbing when it is cut: the damped trend is weighed into the level
    forecast, and the ceiling is that same rule taken far ahead, so no step's forecast passes it
    (when the ceiling was the sigmoid's alone, step 1.5x of the cut at 50% lay 0.03 above it)."""
    assert LOGS is not None
    path = bank_log(
        LOGS,
        "verl-csv-ppo-ulysses-116",
        "verl-csv-ppo-ulysses-116/uly_sp2_dp2_vllm_tp1_20251111_091610_parsed.csv",
    )
    metric = "critic/rewards/mean"
    series = read_source(path, aliases=load_aliases(KNOWLEDGE), extra_metrics=[metric]).series[
        metric
    ]
    x, y = series.steps, series.values
    seen = x <= x[0] + cut * (x[-1] - x[0])
    last = int(x[seen][-1])

    def forecast(to: int):
        return outlook(
            x[seen], y[seen], source="uly", metric=metric, quantity="training reward", to=to
        )

    for ahead in (1.5, 3.0, 10.0):
        f = forecast(int(ahead * last))
        assert f.at is not None and f.asymptote is not None and f.now is not None, f.abstain
        rising = f.asymptote.value >= f.now
        beyond = f.at.value - f.asymptote.value if rising else f.asymptote.value - f.at.value
        assert beyond <= 1e-9, (ahead, f.at, f.asymptote)
        # and the step by which 95% of the rest comes is where the forecast gets that far
        if f.step_95 is not None and f.step_95 > last:
            at95 = forecast(f.step_95).at
            assert at95 is not None
            made = (at95.value - f.now) / (f.asymptote.value - f.now)
            assert 0.94 <= made <= 1.0, made
