"""The training solve rate is the task's own pass rate, not a reward that adds a format bonus
(issue 36; the bank's trl-tb-countdown, whose equation reward is 0 at every step while the format
bonus lifts the summed reward to 0.06-0.25, read as "solves 8%" and no stage).

The family: a reward logged in parts, one of them for the answer's form. Members written here in
their real formats: TRL's ``rewards/<function>/mean`` (0.17+) with a think-format bonus, EasyR1's
``reward/overall`` beside ``reward/accuracy``, and a run whose parts do not single out one task
check (two that are not format bonuses), which keeps the summed reward."""

from __future__ import annotations

import json

import numpy as np

from rlmap_bot.runs.diagnose import diagnose_run
from support import KNOWLEDGE


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _trl_rows(task, bonus, steps=60, seed=3, **more):
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(1, steps + 1):
        t, b = task(step), bonus(step)
        rows.append(
            {
                "step": step,
                "train/reward": t + b,
                "train/rewards/accuracy_reward/mean": t,
                "train/rewards/think_format_reward/mean": b,
                "train/loss": float(rng.normal(0.0, 0.01)),
                "train/grad_norm": float(abs(rng.normal(0.3, 0.03))),
                "train/completion_length": float(rng.normal(300, 10)),
                **{k: f(step) for k, f in more.items()},
            }
        )
    return rows


def test_a_trl_run_that_never_solves_its_tasks_but_earns_the_format_bonus_is_too_hard(
    core, tmp_path
):
    rng = np.random.default_rng(4)
    rows = _trl_rows(lambda s: 0.0, lambda s: float(rng.choice([0.0, 0.25, 0.5])))
    found = diagnose_run(core.engine, KNOWLEDGE, _jsonl(tmp_path / "never.jsonl", rows))
    assert found.signals["train_solve_rate"] == 0
    assert "accuracy_reward" in found.signal_sources["train_solve_rate"].metric
    assert found.binding_stage == "environments", found.summary
    assert any("think_format_reward" in w and "format bonus" in w for w in found.warnings)


def test_a_trl_run_solving_half_its_tasks_reads_half_not_half_plus_the_bonus(core, tmp_path):
    rows = _trl_rows(lambda s: 0.5, lambda s: 0.45)
    found = diagnose_run(core.engine, KNOWLEDGE, _jsonl(tmp_path / "half.jsonl", rows))
    assert abs(found.signals["train_solve_rate"] - 0.5) < 1e-9


def test_easyr1_reads_its_accuracy_part_as_the_pass_rate(core, tmp_path):
    """EasyR1 logs reward/overall (here a 0.5 format weight) and reward/accuracy apart."""
    rows = [
        {
            "step": s,
            "reward": {"overall": 0.5 * 0.02 + 0.5 * 0.95, "accuracy": 0.02, "format": 0.95},
            "actor": {"grad_norm": 0.3, "pg_loss": 0.01, "entropy_loss": 0.5},
            "response_length": {"mean": 300.0},
        }
        for s in range(1, 61)
    ]
    found = diagnose_run(core.engine, KNOWLEDGE, _jsonl(tmp_path / "easyr1.jsonl", rows))
    assert found.signals["train_solve_rate"] < 0.05
    assert found.signal_sources["train_solve_rate"].metric == "reward/accuracy"


def test_parts_that_single_out_no_task_check_keep_the_summed_reward(core, tmp_path):
    """Two parts that are not format bonuses (the answer's check and a length penalty): which one
    is the pass rate is not for the bot to guess, so the 0-1 summed reward stays the reading."""
    rows = _trl_rows(
        lambda s: 0.3,
        lambda s: 0.0,
        **{"train/rewards/length_penalty/mean": lambda s: 0.1},
    )
    for r in rows:
        r["train/reward"] = 0.4
    found = diagnose_run(core.engine, KNOWLEDGE, _jsonl(tmp_path / "two.jsonl", rows))
    assert found.signal_sources["train_solve_rate"].metric == "train/reward"
    assert not any("format bonus" in w for w in found.warnings)


def test_the_same_parts_on_the_evaluation_set_are_never_the_training_pass_rate(core, tmp_path):
    """TRL writes its evaluation's reward parts as eval/rewards/<function>/mean in TensorBoard
    and W&B: those are held-out rows, whatever order they come in (they used to win)."""
    rows = _trl_rows(lambda s: 0.05, lambda s: 0.25)
    for step in range(10, 61, 10):
        rows.append(
            {
                "step": step,
                "eval/rewards/accuracy_reward/mean": 0.6,
                "eval/rewards/think_format_reward/mean": 0.3,
            }
        )
    found = diagnose_run(core.engine, KNOWLEDGE, _jsonl(tmp_path / "with_eval.jsonl", rows))
    source = found.signal_sources["train_solve_rate"]
    assert source.metric == "train/rewards/accuracy_reward/mean"
    assert abs(found.signals["train_solve_rate"] - 0.05) < 1e-9


def test_a_penalty_beside_a_format_bonus_is_no_pass_rate(core, tmp_path):
    """The one part that is not a format bonus is a length penalty, never applied (0): read as a
    pass rate it would call a healthy run's pool too hard."""
    rows = _trl_rows(lambda s: 0.0, lambda s: 0.5)
    for r in rows:
        r["train/rewards/length_penalty/mean"] = r.pop("train/rewards/accuracy_reward/mean")
        r["train/reward"] = 0.5
    found = diagnose_run(core.engine, KNOWLEDGE, _jsonl(tmp_path / "penalty.jsonl", rows))
    assert found.signal_sources["train_solve_rate"].metric == "train/reward"
    assert not any("format bonus" in w for w in found.warnings)


def test_a_pass_rate_mapped_by_hand_gets_no_note_about_parts(core, tmp_path):
    rows = _trl_rows(lambda s: 0.3, lambda s: 0.25)
    path = _jsonl(tmp_path / "mapped.jsonl", rows)
    found = diagnose_run(core.engine, KNOWLEDGE, path, mapping={"train_solve_rate": "train/reward"})
    assert found.signal_sources["train_solve_rate"].metric == "train/reward"
    assert not any("format bonus" in w for w in found.warnings)
