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
