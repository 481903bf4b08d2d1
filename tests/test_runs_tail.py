"""Judgement at the tail: a sharp change against the run's own recent level reads as what it is.

The family: a long run whose reward sat near 0.7 for 1,180 of 1,300 steps and then fell to
0.2-0.45, with the gradient norm up 10x, read as "flat", because the first and last 20% windows
average the last tenth away.  Members below, each a synthetic log in a real format: a reward
collapse in the last tenth (verl console), a gradient-norm blow-up at the tail (verl JSONL), a
length explosion at the tail (TRL trainer_state.json); and healthy counterparts that must stay
quiet: a noisy but steady run (verl console) and a run with a normal late learning-rate decay
bend (TRL).  The watch raises one alert for the collapse, not one per check.
"""

from __future__ import annotations

import numpy as np

from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from rlmap_bot.runs.verdict import verdict_for
from rlmap_bot.slack.blocks.runs import run_blocks
from rlmap_bot.wording.posts import alert_changes, alert_title
from support import runlogs as rl
from support.cli import run_cli
from support.steady import steady_run as _base
from support.steady import watch_growing as _watch

STEPS, TAIL_FROM = 1300, 1181


def _tail(records: list[rl.Record], seed: int = 2, **change) -> list[rl.Record]:
    """The records with each named curve replaced from
    TAIL_FROM on by ``change[name](rng, row)``.
    """
    rng = np.random.default_rng(seed)
    out = []
    for step, row in records:
        row = dict(row)
        if step >= TAIL_FROM:
            for key, fn in change.items():
                row[key] = float(fn(rng, row))
        out.append((step, row))
    return out


def _collapse(tmp_path):
    records = _tail(
        _base(),
        reward=lambda g, r: g.uniform(0.2, 0.45),
        grad_norm=lambda g, r: r["grad_norm"] * 10,
    )
    return rl.write_verl_console(tmp_path / "collapse.log", rl.named(records, "verl"))


def _derive(path, aliases):
    return derive_signals(read_source(path, aliases=aliases), aliases)


def test_a_reward_collapse_in_the_last_tenth_reads_as_a_collapse_not_flat(tmp_path, aliases):
    d = _derive(_collapse(tmp_path), aliases)
    kinds = [f.kind for f in d.faults]
    assert kinds[:2] == ["reward_collapse", "grad_norm_blowup"], kinds
    collapse = d.faults[0]
    assert collapse.metric == "critic/score/mean" and collapse.first_step >= TAIL_FROM - 70
    assert d.signals["proxy_reward_trend"] == "falling", d.signal_sources[
        "proxy_reward_trend"
    ].detail


def test_a_collapse_is_said_first_in_diagnose_run_output(tmp_path, env):
    out = run_cli(["diagnose", "--run", str(_collapse(tmp_path))], env)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    assert lines[0].startswith("Fault: the task reward collapsed"), lines[:4]
    assert lines[2].startswith("Then: Optimization binds"), lines[:4]
    report = out.stdout.split("Faults (fix these before reading the stage verdict):", 1)[1]
    assert report.index("the task reward collapsed") < report.index("binding constraint")


def test_a_gradient_norm_blowup_at_the_tail_is_a_fault(tmp_path, aliases):
    records = _tail(_base(seed=3), grad_norm=lambda g, r: r["grad_norm"] * 12)
    path = rl.write_verl_jsonl(tmp_path / "run.jsonl", rl.named(records, "verl"))
    d = _derive(path, aliases)
    assert [f.kind for f in d.faults] == ["grad_norm_blowup"], [f.detail for f in d.faults]
    assert "actor/grad_norm" in d.faults[0].detail


def test_a_length_explosion_at_the_tail_is_a_fault(tmp_path, aliases):
    records = _tail(_base(seed=4), length=lambda g, r: 1900 + g.normal(0, 40))
    path = rl.write_trl_output(tmp_path / "out", rl.named(records, "trl"), checkpoints=())
    d = _derive(path, aliases)
    assert [f.kind for f in d.faults] == ["length_explosion"], [f.detail for f in d.faults]


def test_a_noisy_but_steady_run_has_no_tail_fault(tmp_path, aliases):
    rng = np.random.default_rng(7)
    records = [
        (
            s,
            {
                **r,
                "reward": float(np.clip(0.55 + rng.normal(0, 0.12), 0, 1)),
                "grad_norm": float(0.5 * np.exp(rng.normal(0, 0.5))),
            },
        )
        for s, r in _base(seed=7)
    ]
    d = _derive(rl.write_verl_console(tmp_path / "noisy.log", rl.named(records, "verl")), aliases)
    assert d.faults == [], [f.detail for f in d.faults]
    assert d.signals["proxy_reward_trend"] == "flat"


def test_a_late_learning_rate_decay_bend_has_no_tail_fault(tmp_path, aliases):
    """Cosine decay over the last 15%: the reward's climb bends flat, the gradient norm and the
    length settle lower; none of it is a collapse or a blow-up."""
    rng = np.random.default_rng(8)
    records = []
    for step, row in _base(seed=8):
        t = step / STEPS
        decay = 1.0 if t < 0.85 else 0.5 * (1 + np.cos(np.pi * (t - 0.85) / 0.15))
        row = dict(row)
        row["reward"] = float(0.3 + 0.45 * min(t, 0.85) / 0.85 + rng.normal(0, 0.03))
        row["lr"] = float(1e-6 * decay)
        row["grad_norm"] = float(0.4 * (0.6 + 0.4 * decay) * np.exp(rng.normal(0, 0.15)))
        row["length"] = float(520 + 60 * min(t, 0.85) + rng.normal(0, 12))
        records.append((step, row))
    d = _derive(
        rl.write_trl_output(tmp_path / "out", rl.named(records, "trl"), checkpoints=()), aliases
    )
    assert d.faults == [], [f.detail for f in d.faults]


def test_the_run_card_says_the_collapse_first(tmp_path, core, aliases):
    d = _derive(_collapse(tmp_path), aliases)
    blocks, text = run_blocks(verdict_for(core.engine, d), "collapse.log")
    first = blocks[0].to_dict()["text"]["text"]
    assert first.startswith(":rotating_light: Fault: the task reward collapsed"), first
    assert text.startswith("Fault: the task reward collapsed"), text


def test_a_watch_of_a_collapsing_run_alerts_once(core, tmp_path):
    """The run grows in pieces, one check each; the collapse is announced by one alert only."""
    records = rl.named(_tail(_base(), reward=lambda g, r: g.uniform(0.2, 0.45)), "verl")
    posts = _watch(core, tmp_path, records, [1100, 1200, 1230, 1260, 1300])
    raised = [a for a in posts if a.kind == "alert" and "fault:shift" in a.conditions]
    assert len(raised) == 1, [(alert_title(a), a.conditions) for a in posts]
    changes = alert_changes(raised[0])
    said = "the task reward collapsed from step 1181: critic/score/mean went from a level of"
    assert any(change.startswith(said) for change in changes), changes
    assert not [a for a in posts if a.kind == "resolved"], [alert_title(a) for a in posts]


def test_a_watch_of_a_late_decay_bend_stays_quiet(core, tmp_path):
    rng = np.random.default_rng(9)
    records = []
    for step, row in _base(seed=9):
        t = step / STEPS
        decay = 1.0 if t < 0.85 else 0.5 * (1 + np.cos(np.pi * (t - 0.85) / 0.15))
        records.append(
            (
                step,
                {
                    **row,
                    "lr": float(1e-6 * decay),
                    "grad_norm": float(0.4 * (0.6 + 0.4 * decay) * np.exp(rng.normal(0, 0.15))),
                },
            )
        )
    posts = _watch(core, tmp_path, rl.named(records, "verl"), [1100, 1200, 1300])
    assert [alert_title(a) for a in posts if "fault:shift" in a.conditions] == []
