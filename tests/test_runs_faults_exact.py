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

import json
import math

import numpy as np
import pytest

from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from rlmap_bot.runs.verdict import verdict_for
from rlmap_bot.wording import verdicts
from rlmap_bot.wording.posts import alert_changes, alert_title
from support import runlogs as rl
from support.steady import steady_run
from support.steady import watch_growing as _watch


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


# -- every fault, and every burst of one, said with the same numbers everywhere -----------------
# The family: the faults were held twice (Readings.faults, one per kind, beside all_faults), a
# metric's second NaN burst was counted but not named ("from step 40 to step 45; still at the last
# logged step, and 51 other steps"), the card's first line named whichever fault came first in the
# code (the loss from step 100 above the gradient norm's from step 40), and a watch counted only
# the burst still open (51 steps against diagnose's 57).  Members: two NaN bursts in one metric;
# NaN in two metrics that began at different steps; a burst that is over before the one open now.
def _two_bursts() -> list[rl.Record]:
    return _records(grad_norm=[*range(40, 46), *range(100, 151)], pg_loss=list(range(100, 151)))


def test_two_nan_bursts_are_one_fault_of_their_metric_named_both_and_first(
    tmp_path, aliases, core, env
):
    from rlmap_bot.slack.blocks.runs import run_blocks
    from support.cli import run_cli

    path = rl.write_verl_jsonl(tmp_path / "run.jsonl", _two_bursts())
    d = _derive(path, aliases)
    grad, loss = d.faults  # the earliest first: the gradient norm's began at step 40
    assert (grad.metric, grad.first_step, grad.count) == ("actor/grad_norm", 40, 57), grad.detail
    assert "from step 40 to step 45" in grad.detail and "from step 100 to step 150" in grad.detail
    assert "57 steps in all" in grad.detail, grad.detail
    assert (loss.metric, loss.first_step, loss.count) == ("actor/pg_loss", 100, 51), loss.detail
    # The terminal, the JSON and the Slack card say the same numbers.
    first = "Fault: NaN/inf logged (actor/grad_norm, from step 40, 57 steps); and 1 more fault"
    text = run_cli(["diagnose", "--run", str(path)], env).stdout
    assert text.startswith(first), text[:200]
    data = json.loads(run_cli(["diagnose", "--run", str(path), "--json"], env).stdout)
    assert [(f["metric"], f["first_step"], f["count"]) for f in data["faults"]] == [
        ("actor/grad_norm", 40, 57),
        ("actor/pg_loss", 100, 51),
    ]
    blocks, note = run_blocks(verdict_for(core.engine, d), path.name)
    assert note.startswith(first), note
    assert first in json.dumps(blocks[0].to_dict()), blocks[0].to_dict()


def test_a_watch_counts_a_burst_that_was_over_before_the_one_open_now(core, tmp_path):
    # The first burst (40-45) is over after 50 finite steps (step 95): the check at 98 says so,
    # the one at 150 opens the second burst.
    posts = _watch(core, tmp_path, _two_bursts(), [30, 60, 98, 150])
    nan = [p for p in posts if "fault:nan" in p.conditions]
    told = [(p.kind, p.conditions, alert_changes(p)) for p in posts]
    assert [p.kind for p in nan] == ["alert", "resolved", "alert"], told
    body = " ".join(alert_changes(nan[-1]))
    assert "from step 100" in body and "6 earlier steps from step 40" in body, body
    assert "57 steps in all" in body, body


# -- collapses, wherever in the run -------------------------------------------------------------
# The family: an output collapse (length about 100 -> 10 tokens, entropy to ~0, a RAGEN run) 55-70%
# of the way through a run that logs on is never named once the run has gone on, and the sharp-
# change check looked only for length going up.  Members: a length collapse at 60% (verl JSONL),
# an entropy blow-up at 45% (verl console), a reward collapse at 40% of a run that logs on twice
# as long (TRL), and a dip the run came back from, which must stay quiet.
def _changed(onset: int, steps: int = 400, until: int | None = None, **change):
    """``test_runs_tail``'s steady run, each named curve set by ``change[name](rng, row)`` from
    ``onset`` (to ``until``, when given)."""
    rng = np.random.default_rng(11)
    out = []
    for step, row in steady_run(seed=3, steps=steps):
        row = dict(row)
        if step >= onset and (until is None or step < until):
            for key, fn in change.items():
                row[key] = float(fn(rng, row))
        out.append((step, row))
    return out


def _short_answers():
    return {
        "length": lambda g, r: 10 + g.normal(0, 1),
        "entropy": lambda g, r: 0.01 + abs(g.normal(0, 0.002)),
    }


def test_an_output_collapse_at_60_percent_is_named_with_its_first_step(tmp_path, aliases, core):
    records = rl.named(_changed(241, **_short_answers()), "verl")
    d = _derive(rl.write_verl_jsonl(tmp_path / "run.jsonl", records), aliases)
    kinds = {f.kind: f for f in d.faults}
    assert {"length_collapse", "entropy_collapse"} <= set(kinds), [f.detail for f in d.faults]
    length = kinds["length_collapse"]
    assert length.first_step == 241 and length.last_step == 400, length.detail
    assert "from step 241" in length.detail and length.metric == "response_length/mean"
    first = verdicts.opening(verdict_for(core.engine, d))[0]
    assert first.startswith("Fault: the") and "from step 241" in first, first


def test_an_entropy_blowup_is_named_too(tmp_path, aliases):
    records = rl.named(_changed(181, entropy=lambda g, r: 2.4 + g.normal(0, 0.05)), "verl")
    d = _derive(rl.write_verl_console(tmp_path / "run.log", records), aliases)
    [fault] = [f for f in d.faults if f.kind == "entropy_blowup"]
    assert fault.first_step == 181 and fault.metric == "actor/entropy"


def test_a_reward_collapse_long_before_the_end_is_still_named(tmp_path, aliases):
    records = rl.named(_changed(321, steps=800, reward=lambda g, r: g.uniform(0.05, 0.2)), "trl")
    d = _derive(rl.write_trl_output(tmp_path / "out", records), aliases)
    [fault] = [f for f in d.faults if f.kind == "reward_collapse"]
    assert fault.first_step == 321 and fault.last_step == 800


def test_a_dip_the_run_came_back_from_is_no_fault(tmp_path, aliases):
    records = rl.named(_changed(200, until=230, **_short_answers()), "verl")
    d = _derive(rl.write_verl_jsonl(tmp_path / "run.jsonl", records), aliases)
    assert [f.detail for f in d.faults] == []


def test_a_watch_checking_once_after_a_late_collapse_names_it(core, tmp_path):
    """`watch --once` on a run that collapsed at 60% and logged on to its end."""
    records = rl.named(_changed(241, **_short_answers()), "verl")
    [alert] = [p for p in _watch(core, tmp_path, records, [400]) if "fault:shift" in p.conditions]
    assert alert_title(alert).startswith("Fault: "), alert_title(alert)
    assert "from step 241" in " ".join(alert_changes(alert)), alert_changes(alert)


# -- collapses the scan had too few points to place -----------------------------------------------
# The family (the population's held-out seed: 5 collapses named by their stage but not as a
# collapse, all TRL runs exported from W&B with their metrics averaged over 5-10 steps; the bank's
# agentic runs verl-agent-opd-60 and opd-262): the scan asked 60 finite points after its warm-up and
# a reference of 10 before any split, so a run logged 22-54 times, or one that collapsed within its
# first dozen steps, was never scanned where it broke.  Members: a W&B export of a TRL run logged
# every 10 steps (30 rows) whose outputs collapse at step 121; a 55-step verl console run whose
# answers shrink from step 37; a verl JSONL run of 250 steps that collapses at step 4 and logs on at
# the floor.  Healthy counterparts that must stay quiet: the same sparse export without the
# collapse, a run whose answers shorten by a third over its first steps (a model learning to be
# brief), and a sparse reward that sits near 0 with batch noise (a pool too hard).
def _collapsed(g: np.random.Generator, row: dict) -> dict:
    return {
        "reward": g.uniform(0.0, 0.06),
        "length": 10 + g.normal(0, 1),
        "entropy": 0.005 + abs(g.normal(0, 0.001)),
    }


def _sparse(records: list[rl.Record], every: int) -> list[rl.Record]:
    """The records as a trainer that logs every ``every`` steps writes them."""
    return [(s, r) for s, r in records if s % every == 0]


def _collapsing(onset: int, steps: int, seed: int = 3) -> list[rl.Record]:
    rng = np.random.default_rng(seed + 100)
    out = []
    for step, row in steady_run(seed=seed, steps=steps):
        out.append((step, {**row, **_collapsed(rng, row)} if step >= onset else row))
    return out


@pytest.mark.parametrize(
    ("name", "write", "onset", "want_first"),
    [
        # a W&B export of a TRL run logged every 10 steps: 30 rows, the collapse at row 12
        (
            "sparse-trl.csv",
            lambda p: rl.write_csv(
                p, rl.named(_sparse(_collapsing(121, 300), 10), "trl"), step_key="_step"
            ),
            121,
            130,
        ),
        # a short verl console run, 55 steps, the answers shrinking from step 37
        (
            "short.log",
            lambda p: rl.write_verl_console(p, rl.named(_collapsing(37, 55), "verl")),
            37,
            37,
        ),
        # collapsed at step 4 of 250, inside what the scan skipped as warm-up
        (
            "early.jsonl",
            lambda p: rl.write_verl_jsonl(p, rl.named(_collapsing(4, 250), "verl")),
            4,
            4,
        ),
    ],
)
def test_a_collapse_with_few_points_before_or_around_it_is_named(
    name, write, onset, want_first, tmp_path, aliases, core
):
    d = _derive(write(tmp_path / name), aliases)
    kinds = {f.kind: f for f in d.faults}
    assert {"reward_collapse", "length_collapse", "entropy_collapse"} <= set(kinds), [
        f.detail for f in d.faults
    ]
    for fault in kinds.values():
        assert onset <= fault.first_step <= want_first + 10, fault.detail
    first = verdicts.opening(verdict_for(core.engine, d))[0]
    assert first.startswith("Fault: the"), first


def _eroding_then(step: int, start: float, floor: float) -> float:
    """A level that erodes by a third over steps 12-32, then falls to ``floor`` over 33-38."""
    if step <= 12:
        return start
    if step <= 32:
        return start * (1 - 0.33 * (step - 12) / 20)
    if step <= 38:
        return start * 0.67 + (floor - start * 0.67) * (step - 32) / 6
    return floor


def test_a_collapse_after_a_slow_decline_is_named(tmp_path, aliases):
    """Answers shortening by a third over 20 steps, then to a few tokens over 6 (the bank's
    verl-agent-opd-60, 59 steps): the decline filled the scan's reference, which it took for a
    trend; entropy doing the same alongside."""
    g = np.random.default_rng(1)
    records = []
    for s, r in steady_run(seed=8, steps=60):
        length = _eroding_then(s, 950, 9) * (1 + g.normal(0, 0.04))
        entropy = _eroding_then(s, 0.4, 0.004) * (1 + g.normal(0, 0.04))
        records.append((s, {**r, "length": length, "entropy": entropy}))
    d = _derive(rl.write_verl_console(tmp_path / "run.log", rl.named(records, "verl")), aliases)
    kinds = {f.kind: f for f in d.faults}
    assert {"length_collapse", "entropy_collapse"} <= set(kinds), [f.detail for f in d.faults]
    assert all(33 <= f.first_step <= 38 for f in kinds.values()), [f.detail for f in d.faults]


def _brief(g: np.random.Generator, step: int) -> float:
    """Answers 900 tokens long at the start, 600 from step 8 on: shorter, not collapsed."""
    return (900 if step < 8 else 600) + g.normal(0, 15)


@pytest.mark.parametrize(
    "records",
    [
        _sparse(steady_run(seed=3, steps=300), 10),
        [
            (s, {**r, "length": _brief(np.random.default_rng(s), s)})
            for s, r in steady_run(seed=5, steps=250)
        ],
        [
            (s, {**r, "reward": float(np.random.default_rng(s).binomial(128, 0.01) / 128)})
            for s, r in _sparse(steady_run(seed=6, steps=300), 10)
        ],
        # entropy decaying from 0.33 to 0.07 over the first 40 of 105 steps, as the bank's healthy
        # verl-tb-asyncreward runs do: a decay through its midpoint, not a step
        [
            (s, {**r, "entropy": 0.07 + 0.26 * np.exp(-s / 12) + 0.003 * np.sin(s)})
            for s, r in steady_run(seed=9, steps=105)
        ],
    ],
    ids=["sparse-steady", "brief-at-start", "sparse-too-hard", "entropy-decays-from-start"],
)
def test_a_healthy_run_with_few_points_or_an_early_move_has_no_collapse(records, tmp_path, aliases):
    path = rl.write_csv(tmp_path / "run.csv", rl.named(records, "trl"), step_key="_step")
    d = _derive(path, aliases)
    assert [f.detail for f in d.faults] == []


def test_a_decay_by_the_same_factor_each_step_is_a_trend_not_a_collapse_step(tmp_path, aliases):
    """Entropy x0.98 a step from step 300 of 450 (down to 0.13x): it falls to a quarter within
    the scan's reference and window, but as a trend, which the entropy signal reads; a sharp
    change is only named once it levels off (tests/test_slack_watch.py, the tie then the fault)."""
    records = rl.named(rl.phased([("healthy", 300), ("saturated_collapse", 150)]), "verl")
    d = _derive(rl.write_verl_console(tmp_path / "run.log", records), aliases)
    assert [f.kind for f in d.faults if f.kind == "entropy_collapse"] == [], [
        f.detail for f in d.faults
    ]
