"""The diagnosis engine on the bundled signals: clear, mixed, combined and no-verdict cases."""

from __future__ import annotations

import pytest

from rlmap_bot.diagnosis.engine import DiagnosisInputError

CLEAR = {
    "environments": [
        {"train_solve_rate": 0.95, "task_repeat_epochs": 6},
        {"env_time_fraction": 0.7, "rollout_wait_fraction": 0.5},
    ],
    "rollouts": [
        {"rollout_wait_fraction": 0.6, "generation_utilization": 0.3, "length_tail_ratio": 5},
    ],
    "reward": [
        {"proxy_reward_trend": "rising", "heldout_score_trend": "falling"},
        {"reward_audit_error_rate": 0.3},
    ],
    "optimization": [
        {"entropy_trend": "collapsing", "heldout_score_trend": "flat"},
        {"loss_divergence": True, "grad_norm_spikes": True},
        # Past the critical batch is decisive only while the trainer does not wait for rollouts.
        {"batch_doubling_speedup": 1.05, "rollout_wait_fraction": 0.05},
    ],
    "evaluation": [
        {"eval_seed_std": 3, "eval_improvement": 1, "eval_num_seeds": 3},
        {"benchmark_ceiling_fraction": 0.97, "contamination_suspected": True},
    ],
}


@pytest.mark.parametrize("stage, signals", [(s, v) for s, cases in CLEAR.items() for v in cases])
def test_clear_cases(core, stage, signals):
    verdict = core.diagnose(signals)
    assert verdict.binding_stage == stage
    assert verdict.binding_title == core.get(stage).title
    assert verdict.confidence >= 0.6
    assert verdict.ranking[0].stage == stage
    assert {r.stage for r in verdict.ranking} == {"environments", "rollouts", "reward", "optimization", "evaluation"}
    backing = [e for e in verdict.evidence if e.supports(stage)]
    assert backing and all(e.why and e.source.id for e in backing)
    assert verdict.papers and all(core.get(p.id).kind == "paper" for p in verdict.papers)
    # Each rule names its source entry, and the verdict recommends what the evidence cites.
    assert backing[0].source.id in {p.id for p in verdict.papers}


@pytest.mark.parametrize(
    "stage, signals",
    [
        ("reward", {"proxy_reward_trend": "rising", "heldout_score_trend": "falling", "length_growth": 2.5, "clip_fraction": 0.08}),
        ("rollouts", {"rollout_wait_fraction": 0.6, "generation_utilization": 0.3, "zero_advantage_fraction": 0.3, "eval_num_seeds": 2}),
    ],
)
def test_mixed_cases_where_one_stage_dominates(core, stage, signals):
    verdict = core.diagnose(signals)
    assert verdict.binding_stage == stage
    others = [r for r in verdict.ranking if r.stage != stage]
    assert any(r.score > 0 for r in others), "the mixed case should carry evidence for another stage too"


def test_no_evidence_names_signals_that_would_settle_it(core):
    verdict = core.diagnose({})
    assert verdict.binding_stage is None
    assert verdict.evidence == []
    assert len(verdict.next_checks) == 3
    assert all(c.signal in verdict.summary for c in verdict.next_checks)


def test_healthy_run_has_no_verdict(core):
    healthy = {
        "zero_advantage_fraction": 0.05, "train_solve_rate": 0.5, "rollout_wait_fraction": 0.05,
        "generation_utilization": 0.9, "proxy_reward_trend": "rising", "heldout_score_trend": "rising",
        "reward_audit_error_rate": 0.01, "entropy_trend": "stable", "grad_norm_spikes": False,
        "loss_divergence": False, "eval_seed_std": 0.5, "eval_improvement": 5, "eval_num_seeds": 10,
    }
    verdict = core.diagnose(healthy)
    assert verdict.binding_stage is None
    assert all(r.score <= 0 for r in verdict.ranking)
    assert "no stage looks like the constraint" in verdict.summary
    assert any(e.direction == "against" for e in verdict.evidence)


def test_weak_hint_alone_is_no_verdict(core):
    verdict = core.diagnose({"zero_advantage_fraction": 0.3})
    assert verdict.binding_stage is None
    assert verdict.ranking[0].stage == "optimization" and verdict.ranking[0].score > 0
    assert "not enough" in verdict.summary and verdict.next_checks


def test_trends_matter_only_in_combination(core):
    assert core.diagnose({"proxy_reward_trend": "rising"}).binding_stage is None
    assert core.diagnose({"heldout_score_trend": "falling"}).binding_stage is None
    both = core.diagnose({"proxy_reward_trend": "rising", "heldout_score_trend": "falling"})
    assert both.binding_stage == "reward"
    combo = [e for e in both.evidence if set(e.signals) == {"proxy_reward_trend", "heldout_score_trend"}]
    assert combo and combo[0].source.id == "reward-model-overoptimization"
    healthy = core.diagnose({"proxy_reward_trend": "rising", "heldout_score_trend": "rising"})
    assert healthy.binding_stage is None
    assert next(r for r in healthy.ranking if r.stage == "reward").score < 0


def test_eval_noise_is_judged_against_effect_and_seeds(core):
    noisy = core.diagnose({"eval_seed_std": 3, "eval_improvement": 1, "eval_num_seeds": 3})
    assert noisy.binding_stage == "evaluation"
    # The same spread, with a large effect over many seeds, is no longer a problem.
    solid = core.diagnose({"eval_seed_std": 3, "eval_improvement": 6, "eval_num_seeds": 20})
    assert solid.binding_stage is None
    assert next(r for r in solid.ranking if r.stage == "evaluation").score < 0
    # Spread alone says nothing: it only matters next to the effect.
    assert core.diagnose({"eval_seed_std": 3}).evidence == []


def test_next_checks_skip_what_is_answered_or_unknown(core):
    verdict = core.engine.diagnose({"proxy_reward_trend": "rising"}, exclude=["heldout_score_trend"])
    ids = [c.signal for c in verdict.next_checks]
    assert "proxy_reward_trend" not in ids and "heldout_score_trend" not in ids


@pytest.mark.parametrize(
    "signals, message",
    [
        ({"zero_advantage_fractoin": 0.3}, "unknown signal 'zero_advantage_fractoin'; did you mean 'zero_advantage_fraction'?"),
        ({"zero_advantage_fraction": 1.5}, "zero_advantage_fraction must be at most 1"),
        ({"zero_advantage_fraction": "lots"}, "zero_advantage_fraction takes a number"),
        ({"length_tail_ratio": 0.5}, "length_tail_ratio must be at least 1"),
        ({"eval_num_seeds": 2.5}, "eval_num_seeds takes a whole number"),
        ({"batch_doubling_speedup": 0}, "batch_doubling_speedup must be above 0"),
        ({"proxy_reward_trend": "up"}, "proxy_reward_trend takes one of rising, flat, falling"),
        ({"entropy_trend": "falling"}, "entropy_trend takes one of collapsing, stable, rising"),
        ({"grad_norm_spikes": "sometimes"}, "grad_norm_spikes takes yes/no"),
        ({"loss_divergence": 3}, "loss_divergence takes yes/no"),
    ],
)
def test_bad_input_is_refused_whole(core, signals, message):
    with pytest.raises(DiagnosisInputError) as info:
        core.diagnose({"proxy_reward_trend": "rising", **signals})
    assert message in str(info.value)


def test_values_are_coerced(core):
    verdict = core.diagnose({"reward_audit_error_rate": "30%", "grad_norm_spikes": "yes", "proxy_reward_trend": "Rising"})
    assert verdict.signals == {"reward_audit_error_rate": 0.3, "grad_norm_spikes": True, "proxy_reward_trend": "rising"}


def test_a_tie_between_strong_stages_is_named(core):
    verdict = core.diagnose({"policy_lag_steps": 16, "clip_fraction": 0.3, "grad_norm_spikes": True,
                             "loss_divergence": True})
    assert verdict.binding_stage is None
    assert sorted(verdict.tied) == ["optimization", "rollouts"]
    assert "Optimization and Rollout generation both have strong evidence" in verdict.summary
    assert verdict.confidence > 0.9, "confidence is that it is one of the tied stages"
