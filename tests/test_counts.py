"""One count everywhere (issue 36, item 7), and no percentage without evidence (item 1).

The family: ``diagnose --run examples/grpo-run.log`` read 201 steps and ``watch --once`` 200 (the
one counted distinct steps, the other its densest metric's points, and verl's step 0 holds only
the evaluation before training); "on 3 pieces of evidence" (rules fired) stood above four bullets
(values read); "1 passes over the prompts".  Members: the example log, a run restarted from a
checkpoint, a TRL-style log whose evaluations are records of their own; each planted run's
"on N readings" against its list; every place a count meets a noun.  And a multi-run CSV in
which nothing is read was "60% sure" that "the answers so far point at no stage".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlmap_bot.runs.growing.kept import KeptRun
from rlmap_bot.runs.incremental import RunReader
from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from rlmap_bot.runs.verdict import verdict_for
from rlmap_bot.wording import counted
from rlmap_bot.wording.verdicts import opening
from support import runlogs as rl
from support.cli import run_cli

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "grpo-run.log"


def _kept_steps(path: Path, aliases, pieces: int = 3) -> int:
    """The steps a watch counts, the log read as it grows in ``pieces``."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    grown = path.with_name("grown-" + path.name)
    cut = len(lines) // pieces + 1
    grown.write_text("".join(lines[:cut]), encoding="utf-8")
    reader, kept = RunReader(grown, aliases=aliases), KeptRun()
    kept.absorb(reader.read_new())
    for start in range(cut, len(lines), cut):
        with open(grown, "a", encoding="utf-8") as f:
            f.writelines(lines[start : start + cut])
        kept.absorb(reader.read_new())
    return KeptRun.loads(kept.dumps()).steps  # as stored between checks


def test_diagnose_and_the_watch_count_the_example_run_alike(tmp_path, aliases):
    copy = tmp_path / "grpo-run.log"
    copy.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    read = read_source(copy, aliases=aliases)
    assert read.step_count == 201  # steps 0-200: step 0 is the evaluation before training
    assert _kept_steps(copy, aliases) == 201


@pytest.mark.parametrize(
    "records",
    [
        rl.restarted(rl.named(rl.curves("healthy"), "verl")),  # resumed from step 101
        rl.named(rl.curves("healthy", eval_every=7), "verl"),  # evaluations off the grid
    ],
    ids=["restarted", "sparse-evals"],
)
def test_a_watch_counts_what_diagnose_counts(records, tmp_path, aliases):
    path = rl.write_verl_console(tmp_path / "run.log", records)
    assert _kept_steps(path, aliases) == read_source(path, aliases=aliases).step_count


def test_the_terminal_and_json_say_the_same_step_count(env):
    text = run_cli(["diagnose", "--run", str(EXAMPLE)], env).stdout
    data = json.loads(run_cli(["diagnose", "--run", str(EXAMPLE), "--json"], env).stdout)
    assert data["run"]["steps"] == 201 and "Read 201 steps (steps 0-200)" in text


@pytest.mark.parametrize("pattern", ["reward_hacking", "length_explosion", "saturated"])
def test_on_n_readings_counts_the_readings_listed_under_it(pattern, tmp_path, aliases, core):
    from rlmap_bot.cli.render_diagnosis import run_text

    path = rl.write_verl_jsonl(tmp_path / "run.jsonl", rl.named(rl.curves(pattern), "verl"))
    result = verdict_for(core.engine, derive_signals(read_source(path, aliases=aliases), aliases))
    assert result.binding_stage, (pattern, result.summary)
    text = run_text(result)
    listed = text.split("  On:\n", 1)[1].split("  (Below:", 1)[0]
    bullets = [line for line in listed.splitlines() if line.startswith("    - ")]
    said = f"on {counted(len(bullets), 'reading')}"
    assert said in result.summary and said in opening(result)[1], (result.summary, bullets)


def test_a_count_and_its_noun_agree():
    assert [counted(n, "step") for n in (0, 1, 2)] == ["0 steps", "1 step", "2 steps"]
    assert counted(1.0, "pass") == "1 pass" and counted(2.5, "pass") == "2.5 passes"
    assert counted(1, "reading") == "1 reading" and counted(3, "entry") == "3 entries"
    assert counted(1_319, "problem") == "1,319 problems"


def test_one_pass_over_the_prompts_is_one_pass(tmp_path, aliases):
    path = rl.write_verl_jsonl(tmp_path / "run.jsonl", rl.named(rl.curves("healthy"), "verl"))
    d = derive_signals(read_source(path, aliases=aliases), aliases)
    detail = d.signal_sources["task_repeat_epochs"].detail
    assert "1 passes" not in detail and "pass(es)" not in detail, detail


def test_a_multi_run_csv_with_nothing_read_gives_no_percentage(env, tmp_path):
    # Two runs of a debate task: only the responses' length is read, and it moves no stage.
    rows = ["run,step,response_length,debate/agreement"]
    rows += [f"{run},{step},{300 + step % 3},{0.1 * step:.2f}" for run in "ab" for step in range(8)]
    path = tmp_path / "metrics_all_runs.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = run_cli(["diagnose", "--run", str(path)], env)
    assert out.returncode == 0, out.stderr
    head = out.stdout.split("From the logs", 1)[0]
    assert "%" not in head.split("Read ", 1)[0], head  # the opening states no percentage
    assert "no percentage" in head.lower() and "answers so far" not in head, head
    assert "These would settle it" in head or "Start with" in head, head


def _nothing_read(tmp_path: Path) -> Path:
    """A run whose only curve read is a KL that moves no stage: nothing bears on a stage."""
    rows = ["step,kl"] + [f"{step},{0.01 + 0.0001 * (step % 7):.5f}" for step in range(1, 101)]
    path = tmp_path / "kl-only.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_an_abstaining_verdict_has_no_confidence_in_json_terminal_or_slack(
    env, tmp_path, core, aliases
):
    """The terminal said "no percentage" while `--json` carried confidence 0.94: the model is the
    truth now (None), and every renderer says it alike."""
    from rlmap_bot.slack.blocks.runs import run_blocks

    path = _nothing_read(tmp_path)
    data = json.loads(run_cli(["diagnose", "--run", str(path), "--json"], env).stdout)
    assert data["binding_stage"] is None and data["tied"] == [], data["summary"]
    assert data["confidence"] is None, data["confidence"]
    text = run_cli(["diagnose", "--run", str(path)], env).stdout
    assert "no percentage" in text.lower() and "% sure" not in text, text
    result = verdict_for(core.engine, derive_signals(read_source(path, aliases=aliases), aliases))
    assert result.confidence is None
    blocks, note = run_blocks(result, path.name)
    card = json.dumps([b.to_dict() for b in blocks])
    assert "% sure" not in card and "% sure" not in note, card
    assert "no percentage" in card.lower(), card


def test_an_alert_on_an_abstaining_verdict_states_no_percentage():
    from rlmap_bot.results.faults import NanFinding
    from rlmap_bot.results.watch import Alert, FaultOpened
    from rlmap_bot.wording.posts import alert_opening

    fault = NanFinding(first_step=40, last_step=60, metrics=["actor/pg_loss"], clear_after=5)
    alert = Alert(
        watch_id="w1",
        kind="alert",
        conditions=["fault:nan"],
        changes=[FaultOpened(fault=fault)],
        path="run.log",
        confidence=None,
    )
    second = alert_opening(alert)[1]
    assert "no percentage" in second and "%" not in second, second
