"""What real tools write: stray control bytes, W&B web-UI CSV
exports, old and new TRL names, TRL's TensorBoard tags.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from support import runlogs as rl


def test_a_console_log_with_a_few_stray_nul_bytes_is_read(tmp_path, aliases):
    """NCCL prints NULs inside a device name; a handful in a long text log is not binary content."""
    lines = rl.verl_console_lines(rl.named(rl.curves("healthy"), "verl"))
    noise = ["NCCL INFO Channel 00/02 : 0[0] -> 1[1] via P2P/IPC dev\x00ice\x00 0\n"] * 3
    path = tmp_path / "console.log"
    path.write_text(
        "".join(noise[:2]) + "".join(lines[:100]) + noise[2] + "".join(lines[100:]),
        encoding="utf-8",
    )
    run = read_source(path, aliases=aliases)
    assert run.format == "verl-console" and run.series["critic/score/mean"].steps.size == 200
    # Binary-ness is a proportion: a file made mostly of control bytes is still refused.
    junk = tmp_path / "junk.log"
    junk.write_bytes(b"step:1 - a:1\n" + bytes(range(32)) * 400)
    with pytest.raises(RunReadError, match="binary content"):
        read_source(junk, aliases=aliases)


def _ui_export(path, runs: dict[str, list[tuple[int, float]]], metric: str = "train/reward"):
    """A CSV as the W&B web UI exports a chart: `<run> - <metric>` with __MIN/__MAX band columns."""
    steps = sorted({s for points in runs.values() for s, _ in points})
    header = ["train/global_step"]
    for name in runs:
        header += [f"{name} - {metric}", f"{name} - {metric}__MIN", f"{name} - {metric}__MAX"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(header)
        for step in steps:
            row: list[object] = [step]
            for points in runs.values():
                value = dict(points).get(step)
                row += ["", "", ""] if value is None else [value, value - 1.0, value + 1.0]
            w.writerow(row)
    return path


def test_a_wandb_ui_export_with_one_run(tmp_path, aliases):
    points = [(s, 0.1 + 0.002 * s) for s in range(1, 151)]
    run = read_source(
        _ui_export(tmp_path / "wandb_export.csv", {"fragrant-sea-49": points}), aliases=aliases
    )
    assert run.format == "wandb-csv" and run.run_id == "wandb_export.csv"
    reward = run.series["train/reward"]
    assert reward.steps.tolist() == list(range(1, 151))
    np.testing.assert_allclose(
        reward.values, [v for _, v in points]
    )  # the band columns are not values
    assert derive_signals(run, aliases).signals["proxy_reward_trend"] == "rising"


def test_a_wandb_ui_export_with_several_runs_is_listed_and_picked(tmp_path, aliases):
    path = _ui_export(
        tmp_path / "export.csv",
        {
            "fragrant-sea-49": [(s, 0.2 + 0.003 * s) for s in range(1, 121)],
            "misty-lake-50": [(s, 0.8 - 0.003 * s) for s in range(1, 101)],
        },
    )
    unpicked = read_source(
        path, aliases=aliases
    )  # the first run, and the reading says which and how to pick
    text = " ".join(unpicked.warnings)
    assert (
        unpicked.run_id.endswith("fragrant-sea-49")
        and "holds 2 runs" in text
        and "--run-id" in text
    )
    assert "fragrant-sea-49" in text and "misty-lake-50" in text
    second = read_source(path, run_id="misty-lake-50", aliases=aliases)
    assert (
        second.run_id.endswith("misty-lake-50") and second.series["train/reward"].steps.size == 100
    )
    assert derive_signals(second, aliases).signals["proxy_reward_trend"] == "falling"
    first = read_source(path, run_id="fragrant-sea-49", aliases=aliases)
    assert first.series["train/reward"].steps.size == 120


@pytest.mark.parametrize("name", ["completion_length", "completions/mean_length"])
def test_trl_length_under_its_old_and_new_names(name, tmp_path, aliases):
    records = [
        (
            s,
            {
                **{k: v for k, v in r.items() if k != "completions/mean_length"},
                name: r["completions/mean_length"],
            },
        )
        for s, r in rl.named(rl.curves("length_explosion"), "trl")
        if "completions/mean_length" in r
    ]
    folder = rl.write_trl_output(tmp_path / "out", records)
    d = derive_signals(read_source(folder, aliases=aliases), aliases)
    assert d.signal_sources["length_growth"].metric == name and d.signals["length_growth"] > 1.5


def test_trl_tensorboard_tags_carry_the_train_prefix(tmp_path, aliases):
    """transformers' rewrite_logs writes train/<name> and eval/<name> to TensorBoard."""
    records = []
    for step, row in rl.named(rl.curves("entropy_collapse"), "trl"):
        renamed = {
            ("eval/reward" if k == "eval_reward" else f"train/{k}"): v for k, v in row.items()
        }
        records.append((step, renamed))
    run = read_source(rl.write_tensorboard(tmp_path / "runs" / "Dec02", records), aliases=aliases)
    d = derive_signals(run, aliases)
    assert (
        run.format == "tensorboard" and d.signal_sources["entropy_trend"].metric == "train/entropy"
    )
    assert d.signal_sources["heldout_score_trend"].metric == "eval/reward"
    assert d.signal_sources["length_growth"].metric == "train/completions/mean_length"


def test_a_roll_metrics_jsonl_counts_its_steps_by_system_step(tmp_path, aliases):
    # ROLL (alibaba/ROLL) writes one JSON object a step, the step under "system/step" beside
    # slash-named metrics; a log of it was refused as unknown before this key was known.
    path = tmp_path / "metrics.jsonl"
    lines = [
        {"actor/pg_loss": 0.01, "reward/selected_mean": 0.3 + 0.001 * s, "system/step": s}
        for s in range(1, 121)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = read_source(path, aliases=aliases, extra_metrics=["reward/selected_mean"])
    reward = run.series["reward/selected_mean"]
    assert reward.steps.tolist() == list(range(1, 121))
    np.testing.assert_allclose(reward.values, [0.3 + 0.001 * s for s in range(1, 121)])
    assert "system/step" not in run.series
