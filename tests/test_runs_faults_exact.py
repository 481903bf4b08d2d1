"""Faults exact (issue 36, item 3): which metric, which steps, how many; a step the trainer
skipped is a note; a collapse is named with the step it began, wherever in the run.

The NaN family: one NaN/inf gradient norm (or loss) among finite ones is an update verl's actor
skipped (``dp_actor``: zero_grad instead of step), read as "Loss divergence = yes" and
"Optimization binds (92%)" and posted by the watch as ``fault:nan``, under a title that said "the
loss" over a body that said grad_norm.  Members: one inf gradient norm late in a 150-step run; one
NaN loss mid-run; two NaN steps far apart.  The faults beside them: NaN on every step from one on
(sustained), NaN on one step in five (recurring).
"""

from __future__ import annotations

import math

import pytest

from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from rlmap_bot.runs.verdict import verdict_for
from rlmap_bot.wording.posts import alert_changes, alert_title
from support import runlogs as rl
from test_runs_tail import _watch


def _records(steps: int = 150, **bad: list[int]) -> list[rl.Record]:
    """A healthy verl run with the named neutral curves NaN (or inf) at the listed steps."""
    out = []
    for step, row in rl.curves("healthy", steps=steps, seed=4):
        row = dict(row)
        for key, at in bad.items():
            if step in at:
                row[key] = math.inf if key == "grad_norm" else math.nan
        out.append((step, row))
    return rl.named(out, "verl")


def _derive(path, aliases):
    return derive_signals(read_source(path, aliases=aliases), aliases)


@pytest.mark.parametrize(
    "bad",
    [
        {"grad_norm": [138]},  # the issue's: one inf gradient norm at step 138 of 150
        {"pg_loss": [70]},  # one NaN loss mid-run
        {"grad_norm": [40, 121]},  # two, far apart
    ],
)
def test_a_step_the_trainer_skipped_is_a_note_not_divergence(bad, tmp_path, aliases, core):
    clean = _derive(rl.write_verl_jsonl(tmp_path / "clean.jsonl", _records()), aliases)
    d = _derive(rl.write_verl_jsonl(tmp_path / "run.jsonl", _records(**bad)), aliases)
    assert [f for f in d.faults if f.kind == "nan"] == []
    assert d.signals["loss_divergence"] is False
    assert "skipped (a note)" in d.signal_sources["loss_divergence"].detail
    steps = sorted(s for at in bad.values() for s in at)
    [note] = [w for w in d.warnings if "skipped" in w]
    assert all(str(s) in note for s in steps) and "not a divergence" in note, note
    # The verdict is the one the run gets without the skipped step.
    mine, theirs = verdict_for(core.engine, d), verdict_for(core.engine, clean)
    assert (mine.binding_stage, mine.tied) == (theirs.binding_stage, theirs.tied)
    assert mine.binding_stage != "optimization"


def test_nan_on_every_step_from_one_on_is_a_fault_named_with_its_metric_and_step(tmp_path, aliases):
    late = list(range(100, 151))
    d = _derive(
        rl.write_verl_jsonl(tmp_path / "run.jsonl", _records(grad_norm=late, pg_loss=late)),
        aliases,
    )
    nan = {f.metric: f for f in d.faults if f.kind == "nan"}
    assert set(nan) == {"actor/grad_norm", "actor/pg_loss"}
    grad = nan["actor/grad_norm"]
    assert (grad.first_step, grad.last_step, grad.count, grad.pattern) == (
        100,
        150,
        51,
        "sustained",
    )
    assert "from step 100" in grad.detail and not grad.throughout
    assert d.signals["loss_divergence"] is True


def test_nan_on_one_step_in_five_is_a_recurring_fault(tmp_path, aliases):
    every_fifth = list(range(5, 151, 5))
    path = rl.write_verl_jsonl(tmp_path / "run.jsonl", _records(grad_norm=every_fifth))
    d = _derive(path, aliases)
    [fault] = [f for f in d.faults if f.kind == "nan"]
    assert fault.pattern == "recurring" and fault.count == len(every_fifth)
    assert fault.first_step == 5 and fault.last_step == 150
    assert d.signals["loss_divergence"] is True


def test_a_watch_posts_nothing_for_a_skipped_step(core, tmp_path):
    records = _records(grad_norm=[138])
    posts = _watch(core, tmp_path, records, [60, 100, 137, 139, 150])
    assert [p.conditions for p in posts if any("nan" in c for c in p.conditions)] == []


def test_a_watch_names_the_metric_its_nan_alert_is_about(core, tmp_path):
    """Only the gradient norm goes NaN: the title names it, as the body does (not "the loss")."""
    late = list(range(110, 151))
    posts = _watch(core, tmp_path, _records(grad_norm=late), [60, 100, 120, 150])
    [alert] = [p for p in posts if "fault:nan" in p.conditions]
    title, body = alert_title(alert), " ".join(alert_changes(alert))
    assert "actor/grad_norm" in title and "loss" not in title, title
    assert "actor/grad_norm" in body and "from step 110" in body, body
