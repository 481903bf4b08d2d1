"""Metric names no framework's table knows, and runs whose names fit several frameworks.

Each family has three members of its own in tests/data/unknown_names (W&B exports and plain CSVs as
those tools write them); before name reading, each one exited 2 or was attributed to the wrong
framework.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source

DATA = Path(__file__).resolve().parent / "data" / "unknown_names"


def _said(d) -> str:
    return " ".join(d.warnings)


@pytest.mark.parametrize(
    "name, quantity, metric",
    [
        ("wandb_ui_answer_tokens.csv", "response_length", "rollout/answer_tokens/mean"),
        ("wandb_history_solve_accuracy.jsonl", "task_reward", "policy/solve_accuracy"),
        ("wandb_history_gen_len.csv", "response_length", "gen/output_len_avg"),
    ],
)
def test_a_wandb_export_with_only_unknown_names_is_read_by_their_words_and_said(
    aliases, name, quantity, metric
):
    run = read_source(DATA / name, aliases=aliases)
    d = derive_signals(run, aliases)
    assert d.quantities[quantity] == f"{metric} [read by its name]"
    assert f"read '{metric}' as {quantity.replace('_', ' ')} by its name" in _said(d)
    assert "--map" in _said(d)


@pytest.mark.parametrize(
    "name, reward, length",
    [
        ("performance_output_length.csv", "performance", "output length"),
        ("success_rate_completion_tokens.csv", "Success rate", "Avg completion tokens"),
        ("score_reply_length.csv", "score", "reply length"),
    ],
)
def test_a_csv_with_everyday_column_names_gives_a_reward_and_a_length_reading(
    aliases, name, reward, length
):
    run = read_source(DATA / name, aliases=aliases)
    d = derive_signals(run, aliases)
    assert d.quantities["task_reward"].startswith(reward + " [")
    assert d.quantities["response_length"].startswith(length + " [")
    assert d.signals["proxy_reward_trend"] == "rising" and d.signals["length_growth"] > 1
    assert "--map proxy_reward_trend=METRIC" in _said(d) and "--map length_growth=METRIC" in _said(
        d
    )


def test_a_mapping_overrides_a_name_reading(aliases):
    path = DATA / "success_rate_completion_tokens.csv"
    run = read_source(path, aliases=aliases, extra_metrics=["prompt tokens"])
    d = derive_signals(run, aliases, mapping={"length_growth": "prompt tokens"})
    assert d.quantities["response_length"] == "prompt tokens [mapped by you]"
    assert "as response length by its name" not in _said(d)


def test_names_that_fit_no_rule_are_refused_with_the_names_listed(tmp_path, aliases):
    path = tmp_path / "other.csv"
    path.write_text("step,gpu_util,queue wait\n1,0.5,3\n2,0.6,4\n")
    with pytest.raises(RunReadError, match="gpu_util, queue wait.*--map SIGNAL=METRIC"):
        read_source(path, aliases=aliases)


@pytest.mark.parametrize(
    "name, framework",
    [
        ("openr1_trl_history_with_eval.csv", "trl"),
        ("trl_grpo_wandb_history.jsonl", "trl"),
        ("wandb_ui_train_reward_only.csv", "openrlhf or trl"),
    ],
)
def test_a_trl_wandb_export_is_not_called_openrlhf(aliases, name, framework):
    d = derive_signals(read_source(DATA / name, aliases=aliases), aliases)
    assert (d.run.framework or "").split(" (")[0] == framework
    held = d.quantities.get("heldout_score", "")
    assert "eval/runtime" not in held and "eval/loss" not in held
