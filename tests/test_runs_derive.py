"""Deriving signals from planted patterns: values, provenance, engine validity, mapping, windows."""

from __future__ import annotations

import re
import shutil

import pytest

from rlmap_bot.diagnosis.engine import Engine
from rlmap_bot.knowledge.loader import load_catalog
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.signals import NOT_FROM_LOGS, derive_signals
from rlmap_bot.runs.sources import read_source
from support import KNOWLEDGE
from support import runlogs as rl


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    # The catalog loader of this checkout reads every YAML file under knowledge/, so the
    # alias files (not catalog entries) are left out of the copy it loads.
    root = tmp_path_factory.mktemp("catalog") / "knowledge"
    shutil.copytree(KNOWLEDGE, root, ignore=shutil.ignore_patterns("metrics"))
    return Engine(load_catalog(root))


@pytest.fixture(scope="module")
def derived(tmp_path_factory, aliases):
    """Each planted pattern as a verl console log (saturated as a TRL run), derived once."""
    out = {}
    folder = tmp_path_factory.mktemp("planted")
    for pattern in rl.PATTERNS:
        if pattern == "saturated":
            path = rl.write_trl_output(folder / pattern, rl.named(rl.curves(pattern), "trl"))
        else:
            path = rl.write_verl_console(
                folder / f"{pattern}.log", rl.named(rl.curves(pattern), "verl")
            )
        out[pattern] = derive_signals(read_source(path, aliases=aliases), aliases)
    return out


def test_every_derived_value_is_valid_for_the_engine(derived, engine):
    for pattern, d in derived.items():
        assert engine.validate(d.signals) == d.signals, pattern
        assert set(d.signals) == set(d.signal_sources), pattern
        assert not set(d.signals) & set(d.missing), pattern
        assert set(d.missing) == set(d.missing_reasons), pattern
        assert set(d.signals) | set(d.missing) == set(engine.signals), pattern
        engine.diagnose(d.signals)


def test_healthy_run(derived):
    s = derived["healthy"].signals
    assert s["proxy_reward_trend"] == "rising" and s["heldout_score_trend"] == "rising"
    # 0.6 -> 0.4 over the run: a third spent, the usual course of RL (declined, a hint, not a fault)
    assert (
        s["entropy_trend"] == "declined"
        and s["grad_norm_spikes"] is False
        and s["loss_divergence"] is False
    )
    assert s["rollout_wait_fraction"] == pytest.approx(0.15, abs=0.01)
    assert 1.1 < s["length_growth"] < 1.25 and s["truncation_rate"] < 0.02
    assert 0.5 < s["train_solve_rate"] < 0.75
    assert s["eval_improvement"] > 40  # 0.05 before training -> about 0.54, in points
    assert derived["healthy"].run.framework.startswith("verl")


def test_entropy_collapse_is_judged_against_the_first_level(derived):
    d = derived["entropy_collapse"]
    assert d.signals["entropy_trend"] == "collapsed"  # fell early to a small fraction, now flat
    src = d.signal_sources["entropy_trend"]
    assert src.metric == "actor/entropy"
    assert "of the first" in src.detail and "recent trend flat" in src.detail
    assert (
        src.first_start == 1 and src.first_end == 3 and src.first_level > 0.35
    )  # the start, warm-up included
    assert src.level < 0.25 * src.first_level
    assert src.baseline_start == 6 and src.baseline_end == 15  # the early level still skips warm-up
    assert src.start == 152 and src.end == 200


def test_late_length_explosion(derived):
    s = derived["length_explosion"].signals
    assert s["length_growth"] > 2.0 and s["truncation_rate"] > 0.1
    src = derived["length_explosion"].signal_sources["length_growth"]
    assert "tokens" in src.detail and src.metric == "response_length/mean"


def test_training_reward_up_while_heldout_falls(derived):
    d = derived["reward_hacking"]
    assert d.signals["proxy_reward_trend"] == "rising"
    assert d.signals["heldout_score_trend"] == "falling"
    src = d.signal_sources["heldout_score_trend"]
    assert src.metric == "val-core/openai/gsm8k/reward/mean@1" and "evaluations" in src.window


def test_rollout_bound_timing(derived):
    d = derived["rollout_bound"]
    assert d.signals["rollout_wait_fraction"] == pytest.approx(0.7, abs=0.01)
    assert d.signal_sources["rollout_wait_fraction"].metric == "timing_s/gen / timing_s/step"


def test_gradient_spikes_are_found_where_planted(derived):
    d = derived["grad_spikes"]
    assert d.signals["grad_norm_spikes"] is True
    assert d.signal_sources["grad_norm_spikes"].marks == list(rl.SPIKE_STEPS)
    # Each planted spike is 10x the base level (5.0 over
    # about 0.5): the detail names its step, value and ratio.
    found = re.findall(
        r"step (\d+): ([\d.]+) \(([\d.]+)x the rolling median\)",
        d.signal_sources["grad_norm_spikes"].detail,
    )
    assert [int(step) for step, _, _ in found] == list(rl.SPIKE_STEPS)
    assert all(float(value) == 5.0 and 8.0 <= float(ratio) <= 12.5 for _, value, ratio in found), (
        found
    )
    for other in ("healthy", "entropy_collapse", "length_explosion", "rollout_bound"):
        assert derived[other].signals["grad_norm_spikes"] is False, other


def test_one_nan_step_is_a_skipped_update_and_a_note_not_divergence(derived):
    d = derived["nan_step"]
    assert d.signals["loss_divergence"] is False
    assert "1 non-finite step skipped (a note)" in d.signal_sources["loss_divergence"].detail
    assert any(f"actor/pg_loss logs NaN at step {rl.NAN_STEP} only" in w for w in d.warnings)
    assert d.signals["grad_norm_spikes"] is False  # an inf is divergence, not a spike


def test_saturated_task_pool(derived):
    s = derived["saturated"].signals
    assert s["train_solve_rate"] > 0.9 and s["proxy_reward_trend"] == "flat"
    assert s["zero_advantage_fraction"] == pytest.approx(0.85, abs=0.02)
    assert s["task_repeat_epochs"] == pytest.approx(8.0)
    assert derived["saturated"].run.framework == "trl"


def test_what_one_run_cannot_give_is_missing_with_reasons(derived):
    d = derived["healthy"]
    for signal in NOT_FROM_LOGS:
        assert signal in d.missing and d.missing_reasons[signal]
    assert "reward_audit_error_rate" in d.missing and "batch_doubling_speedup" in d.missing
    # verl's actor/ppo_kl is old-vs-new policy, never the reference KL
    assert "actor/ppo_kl" not in d.signal_sources["kl_to_reference"].metric
    # The KL per token times the mean response length, said with both factors.
    said = d.signal_sources["kl_to_reference"].detail
    per_token, length = re.fullmatch(r"([\d.]+) nats/token x ([\d.]+) tokens", said).groups()
    assert d.signals["kl_to_reference"] == pytest.approx(float(per_token) * float(length), rel=0.01)


def test_a_restarted_run_derives_as_the_clean_one(tmp_path, aliases):
    records = rl.named(rl.curves("reward_hacking"), "verl")
    clean = derive_signals(
        read_source(rl.write_verl_console(tmp_path / "a.log", records), aliases=aliases), aliases
    )
    again = derive_signals(
        read_source(
            rl.write_verl_console(tmp_path / "b.log", rl.restarted(records)), aliases=aliases
        ),
        aliases,
    )
    assert again.signals == clean.signals
    assert any("restart seen" in w for w in again.warnings)


def test_mapping_a_metric_the_table_does_not_know(tmp_path, aliases):
    records = [
        (s, {"my/success": r["reward"], "my/ent": r["entropy"]})
        for s, r in rl.curves("entropy_collapse")
        if s > 0
    ]
    path = rl.write_csv(tmp_path / "custom.csv", records)
    run = read_source(path, aliases=aliases, extra_metrics=["my/success", "my/ent"])
    d = derive_signals(
        run, aliases, mapping={"entropy_trend": "my/ent", "train_solve_rate": "my/success"}
    )
    assert d.signals["entropy_trend"] in ("collapsing", "collapsed")
    assert d.signal_sources["entropy_trend"].metric == "my/ent"
    assert 0.5 < d.signals["train_solve_rate"] < 0.75
    assert "[mapped by you]" in d.quantities["entropy"]
    # A mapping that names nothing is refused in one line, not noted in the middle of the output.
    with pytest.raises(RunReadError, match="'nonsense_signal' is neither a signal"):
        derive_signals(run, aliases, mapping={"nonsense_signal": "my/ent"})
    with pytest.raises(
        RunReadError, match="no metric 'my/sucess' in this run; did you mean 'my/success'"
    ):
        derive_signals(run, aliases, mapping={"train_solve_rate": "my/sucess"})


def test_window_sets_the_recent_window(derived, tmp_path, aliases):
    path = rl.write_verl_console(
        tmp_path / "h.log", rl.named(rl.curves("length_explosion"), "verl")
    )
    run = read_source(path, aliases=aliases)
    wide = derive_signals(run, aliases, window=100)
    narrow = derive_signals(run, aliases, window=20)
    assert (
        wide.signal_sources["length_growth"].start == 101
        and narrow.signal_sources["length_growth"].start == 181
    )
    assert narrow.signals["length_growth"] > wide.signals["length_growth"]
    share = derive_signals(run, aliases, window=0.5)
    assert share.signal_sources["length_growth"].start == pytest.approx(103, abs=2)


def test_rewards_outside_0_1_are_not_a_solve_rate(tmp_path, aliases):
    records = [
        (s, {**r, "reward": r["reward"] * 4 - 1}) for s, r in rl.curves("healthy") if "reward" in r
    ]
    run = read_source(
        rl.write_verl_console(tmp_path / "x.log", rl.named(records, "verl")), aliases=aliases
    )
    d = derive_signals(run, aliases)
    assert (
        "train_solve_rate" in d.missing
        and "not a 0-1 pass rate" in d.missing_reasons["train_solve_rate"]
    )
    assert d.signals["proxy_reward_trend"] == "rising"


def test_prime_rl_combinations(tmp_path, aliases):
    records = rl.named(rl.curves("saturated"), "prime-rl")
    d = derive_signals(
        read_source(rl.write_jsonl(tmp_path / "p.jsonl", records), aliases=aliases), aliases
    )
    assert d.run.framework == "prime-rl"
    assert d.signals["zero_advantage_fraction"] == pytest.approx(
        0.85, abs=0.02
    )  # solve_none + solve_all
    assert (
        d.signal_sources["zero_advantage_fraction"].metric == "batch/solve_none + batch/solve_all"
    )
    assert d.signals["logprob_mismatch_trend"] == "widening"  # mismatch_kl grows over the run


def test_a_sustained_loss_jump_is_divergence(tmp_path, aliases):
    records = []
    for s, r in rl.curves("healthy"):
        if s >= 150 and "pg_loss" in r:
            r = {**r, "pg_loss": r["pg_loss"] + 2.0}
        records.append((s, r))
    d = derive_signals(
        read_source(
            rl.write_verl_jsonl(tmp_path / "j.jsonl", rl.named(records, "verl")), aliases=aliases
        ),
        aliases,
    )
    assert d.signals["loss_divergence"] is True
    assert d.signal_sources["loss_divergence"].marks == [150]
