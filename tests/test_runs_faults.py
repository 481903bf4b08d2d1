"""Faults first: a run that is not learning, or that logs NaN/inf, is said before any stage verdict.

The family (issue 17): a TRL run whose gradient norm was exactly 0 on all 200 steps got a
confident stage verdict, and its zero gradient was read as "a smooth gradient norm".  Members
below: a zero, a constant, or a zero-then-resumed gradient norm; a zero loss with nothing to
show otherwise; every group without reward spread; a zero learning rate; NaN; and a healthy
run that stops learning part-way (the watch).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlmap_bot.runs.growing import scan as fault_scan
from rlmap_bot.runs.growing import take
from rlmap_bot.runs.growing.kept import KeptRun
from rlmap_bot.runs.growing.scan import FaultState
from rlmap_bot.runs.incremental import RunReader
from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from rlmap_bot.runs.verdict import verdict_for
from rlmap_bot.slack.blocks.runs import run_blocks
from rlmap_bot.wording.posts import fault_sentence
from support import runlogs as rl
from support.cli import run_cli


def _trl(tmp_path, n=200, **overrides):
    """A TRL output folder of a flat-reward run, with
    any column replaced by a fixed array or value.
    """
    rng = np.random.default_rng(0)
    records = []
    for i in range(n):
        row = {
            "reward": 0.3 + rng.normal(0, 0.02),
            "grad_norm": 0.4 * np.exp(rng.normal(0, 0.2)),
            "loss": rng.normal(0, 0.01),
            "completions/mean_length": 300 + rng.normal(0, 5),
            "entropy": 0.5 + rng.normal(0, 0.01),
            "learning_rate": 1e-6,
            "frac_reward_zero_std": 0.2,
        }
        for key, value in overrides.items():
            row[key] = float(value[i]) if isinstance(value, np.ndarray) else value
        records.append((i + 1, row))
    return rl.write_trl_output(tmp_path / "out", records)


def _derive(path, aliases):
    return derive_signals(read_source(path, aliases=aliases), aliases)


def test_a_zero_gradient_on_every_step_is_a_fault_not_a_smooth_gradient(tmp_path, aliases):
    d = _derive(_trl(tmp_path, grad_norm=0.0), aliases)
    [fault] = [f for f in d.faults if f.kind == "zero_gradient"]
    assert fault.metric == "grad_norm" and fault.throughout and fault.count == 200
    assert fault.first_step == 1 and fault.last_step == 200 and fault.steps[:3] == [1, 2, 3]
    assert "grad_norm_spikes" not in d.signals, (
        "a gradient that never moves is not evidence of a stable update"
    )
    assert "a fault" in d.missing_reasons["grad_norm_spikes"]
    assert "loss_divergence" not in d.signals


@pytest.mark.parametrize(
    "overrides, kind, metric",
    [
        ({"grad_norm": 1.0}, "constant_gradient", "grad_norm"),
        ({"frac_reward_zero_std": 1.0}, "zero_variance", "frac_reward_zero_std"),
        ({"learning_rate": np.r_[np.full(150, 1e-6), np.zeros(50)]}, "no_update", "learning_rate"),
        ({"entropy": 0.0}, "zero_entropy", "entropy"),
    ],
)
def test_each_sign_of_a_run_that_does_not_learn(overrides, kind, metric, tmp_path, aliases):
    d = _derive(_trl(tmp_path, **overrides), aliases)
    assert [(f.kind, f.metric, f.throughout) for f in d.faults] == [
        (kind, metric, kind != "no_update")
    ]


def test_a_learning_rate_printed_as_zero_throughout_is_not_a_fault(tmp_path, aliases):
    """Old verl consoles print 3 decimals: any real
    learning rate reads 0.000 from the first step.
    """
    assert _derive(_trl(tmp_path, learning_rate=0.0), aliases).faults == []


def test_a_zero_loss_is_a_fault_only_when_no_gradient_shows_learning(tmp_path, aliases):
    """GRPO with no KL term logs a loss of exactly 0
    while it learns: the moving gradient norm says so.
    """
    learning = _derive(_trl(tmp_path / "a", loss=0.0), aliases)
    assert learning.faults == []
    path = tmp_path / "b.csv"
    path.write_text(
        "step,loss,reward\n" + "".join(f"{s},0.0,{0.3 + 0.001 * s}\n" for s in range(1, 41))
    )
    stalled = _derive(path, aliases)
    assert [(f.kind, f.metric) for f in stalled.faults] == [("zero_loss", "loss")]


def test_a_run_that_stops_learning_part_way_has_the_stretch(tmp_path, aliases):
    grad = np.exp(np.random.default_rng(1).normal(-1, 0.2, 200))
    grad[150:] = 0.0
    d = _derive(_trl(tmp_path, grad_norm=grad), aliases)
    [fault] = d.faults
    assert fault.kind == "zero_gradient" and not fault.throughout
    assert (fault.first_step, fault.last_step, fault.count) == (151, 200, 50)
    short = np.exp(np.random.default_rng(1).normal(-1, 0.2, 200))
    short[195:] = 0.0  # 5 zeros at the end: too few to call
    assert _derive(_trl(tmp_path / "s", grad_norm=short), aliases).faults == []


def test_one_nan_step_the_trainer_skipped_is_a_note_with_its_step(tmp_path, aliases):
    path = rl.write_verl_console(tmp_path / "nan.log", rl.named(rl.curves("nan_step"), "verl"))
    d = _derive(path, aliases)
    assert [f for f in d.faults if f.kind == "nan"] == []
    notes = [w for w in d.warnings if f"at step {rl.NAN_STEP} only" in w]
    assert {n.split(" ")[0] for n in notes} == {"actor/pg_loss", "actor/grad_norm"}, d.warnings


@pytest.mark.parametrize("pattern", rl.PATTERNS)
def test_planted_patterns_without_a_fault_have_none(pattern, tmp_path, aliases):
    path = rl.write_verl_jsonl(tmp_path / "run.jsonl", rl.named(rl.curves(pattern), "verl"))
    assert _derive(path, aliases).faults == []


def test_the_cli_says_faults_before_the_verdict(env, tmp_path):
    folder = _trl(tmp_path, grad_norm=0.0)
    out = run_cli(["diagnose", "--run", str(folder)], env)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith("Fault: not learning")
    assert text.index("Faults (fix these") < text.index("From the logs:")
    assert "gradient norm is exactly 0" in text and "all 200 logged steps (steps 1-200)" in text
    data = json.loads(run_cli(["diagnose", "--run", str(folder), "--json"], env).stdout)
    [fault] = data["faults"]
    assert (
        fault["kind"] == "zero_gradient"
        and fault["metric"] == "grad_norm"
        and fault["steps"][:2] == [1, 2]
    )
    assert fault["count"] == 200


def test_slack_says_faults_first(core, tmp_path, aliases):
    d = _derive(_trl(tmp_path, grad_norm=0.0), aliases)
    blocks, text = run_blocks(verdict_for(core.engine, d), "trainer_state.json")
    first = blocks[0].to_dict()
    assert first["text"]["text"].startswith(":rotating_light: Fault: not learning")
    assert "exactly 0" in first["text"]["text"]
    assert text.startswith("Fault: not learning")


def test_the_watch_opens_not_learning_once_when_a_healthy_run_stops(tmp_path, aliases):
    records = rl.named(rl.curves("healthy", steps=300), "verl")
    stalled = [
        (s, {**r, "actor/grad_norm": 0.0}) if s > 200 and "actor/grad_norm" in r else (s, r)
        for s, r in records
    ]
    path = rl.write_verl_console(tmp_path / "train.log", stalled[:201])
    reader, kept, state = RunReader(path, aliases=aliases), KeptRun(), FaultState()
    opened_each = []
    for start, upto in ((201, 201), (201, 206), (206, 231), (231, 261), (261, 301)):
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(rl.verl_console_lines(stalled[start:upto]))
        state, opened, _ = take(kept, state, reader.read_new(), aliases)
        opened_each.append(opened)
    assert opened_each == [set(), set(), {"not_learning"}, set(), set()]
    fault = state.not_learning
    assert (
        fault.active
        and fault.kind == "zero_gradient"
        and fault.first_step == 201
        and fault.last_step == 300
    )
    assert "gradient norm is exactly 0" in fault_sentence(fault.finding())
    with open(path, "a", encoding="utf-8") as f:  # the weights move again
        f.writelines(rl.verl_console_lines(rl.named(rl.curves("healthy", steps=310), "verl")[301:]))
    state, opened = fault_scan.scan(state, kept.tails_run(), reader.read_new(), aliases, 310, False)
    assert (
        opened == set()
        and not state.not_learning.active
        and "learning again" in fault_sentence(state.not_learning.finding())
    )


def test_the_watch_never_reads_a_stalled_gradient_as_smooth(core, tmp_path, aliases):
    """The watch's verdict overrides grad_norm_spikes with
    its full-resolution count; not on a stalled gradient.
    """
    from rlmap_bot.runs.growing.judge import judge

    run = read_source(_trl(tmp_path, grad_norm=0.0), aliases=aliases)
    kept = KeptRun()
    state, opened = fault_scan.scan(FaultState(), kept.tails_run(), run, aliases, 200, True)
    kept.absorb(run)
    assert state.grad_seen and "not_learning" in opened
    derivation, verdict, _ = judge(kept, state, core.engine, aliases)
    assert (
        "grad_norm_spikes" not in derivation.signals and "grad_norm_spikes" not in verdict.signals
    )
    assert [f.kind for f in verdict.faults] == ["zero_gradient"]
