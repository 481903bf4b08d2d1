"""The diagnosis engine on the bundled signals: clear, mixed, combined and no-verdict cases."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rlmap_bot.diagnosis.engine import DiagnosisInputError

TESTS = Path(__file__).parent

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
    assert {r.stage for r in verdict.ranking} == {
        "environments",
        "rollouts",
        "reward",
        "optimization",
        "evaluation",
    }
    backing = [e for e in verdict.evidence if e.supports(stage)]
    assert backing and all(e.why and e.source.id for e in backing)
    assert verdict.papers and all(core.get(p.id).kind == "paper" for p in verdict.papers)
    # Each rule names its source entry, and the verdict recommends what the evidence cites.
    assert backing[0].source.id in {p.id for p in verdict.papers}


@pytest.mark.parametrize(
    "stage, signals",
    [
        (
            "reward",
            {
                "proxy_reward_trend": "rising",
                "heldout_score_trend": "falling",
                "length_growth": 2.5,
                "clip_fraction": 0.08,
            },
        ),
        (
            "rollouts",
            {
                "rollout_wait_fraction": 0.6,
                "generation_utilization": 0.3,
                "zero_advantage_fraction": 0.3,
                "eval_num_seeds": 2,
            },
        ),
    ],
)
def test_mixed_cases_where_one_stage_dominates(core, stage, signals):
    verdict = core.diagnose(signals)
    assert verdict.binding_stage == stage
    others = [r for r in verdict.ranking if r.stage != stage]
    assert any(r.score > 0 for r in others), (
        "the mixed case should carry evidence for another stage too"
    )


def test_no_evidence_names_signals_that_would_settle_it(core):
    verdict = core.diagnose({})
    assert verdict.binding_stage is None
    assert verdict.evidence == []
    assert len(verdict.next_checks) == 3
    assert all(c.signal in verdict.summary for c in verdict.next_checks)


def test_healthy_run_has_no_verdict(core):
    healthy = {
        "zero_advantage_fraction": 0.05,
        "train_solve_rate": 0.5,
        "rollout_wait_fraction": 0.05,
        "generation_utilization": 0.9,
        "proxy_reward_trend": "rising",
        "heldout_score_trend": "rising",
        "reward_audit_error_rate": 0.01,
        "entropy_trend": "stable",
        "grad_norm_spikes": False,
        "loss_divergence": False,
        "eval_seed_std": 0.5,
        "eval_improvement": 5,
        "eval_num_seeds": 10,
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
    combo = [
        e for e in both.evidence if set(e.signals) == {"proxy_reward_trend", "heldout_score_trend"}
    ]
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
    verdict = core.engine.diagnose(
        {"proxy_reward_trend": "rising"}, exclude=["heldout_score_trend"]
    )
    ids = [c.signal for c in verdict.next_checks]
    assert "proxy_reward_trend" not in ids and "heldout_score_trend" not in ids


def test_a_verdicts_next_checks_are_about_that_verdict(core):
    # Ranked by information alone, the same silent problems (a log-prob mismatch, contamination, a
    # saturated benchmark) led nearly every verdict's list: "looks generic" (a newcomer pass).
    overopt = core.diagnose(
        {"proxy_reward_trend": "rising", "heldout_score_trend": "falling", "kl_to_reference": 40}
    )
    assert overopt.binding_stage == "reward"
    # Training reward up and held-out down is also what
    # a memorised prompt pool looks like (Cobbe et al.):
    # the checks that would tell the two apart come first, not a log-prob mismatch.
    checks = [c.signal for c in overopt.next_checks]
    assert "task_repeat_epochs" in checks and "logprob_mismatch_trend" not in checks, checks
    seen: dict[str, int] = {}
    verdicts = 0
    for bank in ("scenarios_locked.yaml", "scenarios_heldout.yaml", "scenarios_tuning.yaml"):
        for profile in yaml.safe_load((TESTS / bank).read_text()):
            known = {k: v for k, v in profile["signals"].items() if k in core.engine.signals}
            verdict = core.engine.diagnose(known)
            if verdict.binding_stage is None:
                continue
            verdicts += 1
            for check in verdict.next_checks:
                seen[check.signal] = seen.get(check.signal, 0) + 1
    # Before: one check in 158 of 192 verdicts' lists; after, none in more than 57 (2026-12-03).
    assert verdicts > 150 and max(seen.values()) < verdicts / 2, sorted(
        seen.items(), key=lambda kv: -kv[1]
    )[:3]


@pytest.mark.parametrize(
    "signals, message",
    [
        (
            {"zero_advantage_fractoin": 0.3},
            "unknown signal 'zero_advantage_fractoin'; did you mean 'zero_advantage_fraction'?",
        ),
        ({"zero_advantage_fraction": 1.5}, "zero_advantage_fraction must be at most 1"),
        ({"zero_advantage_fraction": "lots"}, "zero_advantage_fraction takes a number"),
        ({"length_tail_ratio": 0.5}, "length_tail_ratio must be at least 1"),
        ({"eval_num_seeds": 2.5}, "eval_num_seeds takes a whole number"),
        ({"batch_doubling_speedup": 0}, "batch_doubling_speedup must be above 0"),
        ({"proxy_reward_trend": "up"}, "proxy_reward_trend takes one of rising, flat, falling"),
        (
            {"entropy_trend": "falling"},
            "entropy_trend takes one of collapsing, collapsed, declined, stable, rising",
        ),
        ({"grad_norm_spikes": "sometimes"}, "grad_norm_spikes takes yes/no"),
        ({"loss_divergence": 3}, "loss_divergence takes yes/no"),
    ],
)
def test_bad_input_is_refused_whole(core, signals, message):
    with pytest.raises(DiagnosisInputError) as info:
        core.diagnose({"proxy_reward_trend": "rising", **signals})
    assert message in str(info.value)


def test_values_are_coerced(core):
    verdict = core.diagnose(
        {
            "reward_audit_error_rate": "30%",
            "grad_norm_spikes": "yes",
            "proxy_reward_trend": "Rising",
        }
    )
    assert verdict.signals == {
        "reward_audit_error_rate": 0.3,
        "grad_norm_spikes": True,
        "proxy_reward_trend": "rising",
    }


def test_a_tie_between_strong_stages_is_named(core):
    verdict = core.diagnose(
        {
            "policy_lag_steps": 16,
            "clip_fraction": 0.3,
            "grad_norm_spikes": True,
            "loss_divergence": True,
        }
    )
    assert verdict.binding_stage is None
    assert sorted(verdict.tied) == ["optimization", "rollouts"]
    assert "Optimization and Rollout generation both have strong evidence" in verdict.summary
    assert verdict.confidence > 0.9, "confidence is that it is one of the tied stages"


@pytest.mark.parametrize(
    "stage, signals",
    [
        ("evaluation", {"contamination_suspected": True}),
        ("evaluation", {"benchmark_ceiling_fraction": 0.92}),
        ("optimization", {"loss_divergence": True}),
        ("optimization", {"batch_doubling_speedup": 1.1, "rollout_wait_fraction": 0.05}),
        ("optimization", {"grad_norm_spikes": True, "clip_fraction": 0.2}),
        ("rollouts", {"logprob_mismatch_trend": "widening", "policy_lag_steps": 0}),
    ],
)
def test_a_decisive_symptom_alone_is_enough(core, stage, signals):
    verdict = core.diagnose(signals)
    assert verdict.binding_stage == stage
    assert verdict.confidence >= 0.9


def test_weak_readings_elsewhere_do_not_cancel_a_strong_one(core):
    # Eval noise (strong) against several weak optimization
    # readings: the strongest reading counts in full,
    # the rest at the corroboration weight, so the pile does not outvote it.
    signals = {
        "eval_improvement": 1,
        "eval_seed_std": 3,
        "eval_num_seeds": 3,
        "clip_fraction": 0.1,
        "entropy_trend": "rising",
        "proxy_reward_trend": "flat",
    }
    assert core.diagnose(signals).binding_stage == "evaluation"


def test_memorisation_explains_away_the_overoptimization_reading(core):
    verdict = core.diagnose(
        {
            "proxy_reward_trend": "rising",
            "heldout_score_trend": "falling",
            "task_repeat_epochs": 12,
            "train_solve_rate": 0.93,
        }
    )
    assert verdict.binding_stage == "environments"
    rules = {e.rule: e for e in verdict.evidence}
    assert "heldout_score_trend.overoptimization" not in rules
    assert (
        "heldout_score_trend.overoptimization"
        in rules["task_repeat_epochs.memorised_pool"].explains_away
    )
    # On the first pass the same trends are the reward's.
    assert (
        core.diagnose(
            {
                "proxy_reward_trend": "rising",
                "heldout_score_trend": "falling",
                "task_repeat_epochs": 0.5,
            }
        ).binding_stage
        == "reward"
    )


def test_healthy_long_reasoning_is_not_blamed(core):
    for signals in (
        {"proxy_reward_trend": "rising", "heldout_score_trend": "rising", "length_growth": 8},
        {
            "proxy_reward_trend": "rising",
            "heldout_score_trend": "rising",
            "kl_to_reference": 60,
            "length_growth": 5,
        },
    ):
        verdict = core.diagnose(signals)
        assert verdict.binding_stage is None
        assert all(r.score <= 0 for r in verdict.ranking), verdict.ranking


def test_kl_stall_needs_the_kl_term_to_dominate(core):
    stall = {"proxy_reward_trend": "flat", "heldout_score_trend": "flat"}
    assert core.diagnose({**stall, "kl_to_reference": 25}).binding_stage is None
    assert (
        core.diagnose({**stall, "kl_loss_share": 0.0}).binding_stage is None
    )  # a KL-free recipe (DAPO)
    assert core.diagnose({**stall, "kl_loss_share": 0.6}).binding_stage == "optimization"


def test_environment_time_binds_only_when_the_trainer_waits(core):
    assert (
        core.diagnose({"env_time_fraction": 0.8, "rollout_wait_fraction": 0.02}).binding_stage
        is None
    )
    assert (
        core.diagnose({"env_time_fraction": 0.8, "rollout_wait_fraction": 0.5}).binding_stage
        == "environments"
    )


def test_mismatch_is_judged_at_zero_lag_and_explains_instability(core):
    verdict = core.diagnose(
        {"logprob_mismatch_trend": "widening", "loss_divergence": True, "policy_lag_steps": 0}
    )
    assert verdict.binding_stage == "rollouts"
    assert not any(e.rule == "loss_divergence.diverged" for e in verdict.evidence)


def test_a_split_pool_is_not_a_frontier(core):
    split = core.diagnose(
        {"train_solve_rate": 0.5, "zero_advantage_fraction": 0.7, "group_size": 16}
    )
    assert split.binding_stage == "environments"
    assert not any(e.rule == "train_solve_rate.frontier" for e in split.evidence)
    frontier = core.diagnose({"train_solve_rate": 0.5, "zero_advantage_fraction": 0.1})
    assert any(e.rule == "train_solve_rate.frontier" for e in frontier.evidence)
    assert (
        core.diagnose(
            {"train_solve_rate": 0.5, "zero_advantage_fraction": 0.55, "group_size": 2}
        ).binding_stage
        == "optimization"
    )


def test_eval_noise_compares_two_arms(core):
    # At n = 10 the standard error of a difference is
    # sigma*sqrt(2/10) = 0.45 sigma: a gain of 1.1 sigma
    # is more than two of them, so neither "within noise" nor "clear" cancels the other.
    verdict = core.diagnose({"eval_improvement": 1.1, "eval_seed_std": 1, "eval_num_seeds": 10})
    fired = {e.rule for e in verdict.evidence}
    assert (
        "eval_improvement.within_noise" not in fired
        and "eval_improvement.clear_of_noise" not in fired
    )
    assert (
        core.diagnose(
            {"eval_improvement": 0.8, "eval_seed_std": 1, "eval_num_seeds": 10}
        ).binding_stage
        == "evaluation"
    )


def test_batch_bands_are_contiguous_and_poor_scaling_spares_rollouts(core):
    for value in (1.0, 1.2, 1.25, 1.6, 1.65, 1.7, 2.0):
        fired = [e.rule for e in core.diagnose({"batch_doubling_speedup": value}).evidence]
        assert len(fired) == 1, (value, fired)
    poor = core.diagnose({"batch_doubling_speedup": 1.0})
    assert next(r for r in poor.ranking if r.stage == "rollouts").score == 0


def test_a_falling_training_reward_is_instability_not_a_plateau(core):
    falling = core.diagnose({"proxy_reward_trend": "falling"})
    flat = core.diagnose({"proxy_reward_trend": "flat"})
    assert falling.binding_stage == "optimization" and flat.binding_stage is None


def test_evidence_names_its_fact_and_papers_follow_the_evidence(core):
    verdict = core.diagnose(
        {"proxy_reward_trend": "rising", "heldout_score_trend": "falling", "kl_to_reference": 35}
    )
    top = verdict.evidence[0]
    paper = core.get(top.source.id)
    assert top.fact in paper.facts
    assert verdict.papers[0].id == top.source.id
    backing = {e.source.id for e in verdict.evidence if e.supports("reward")}
    assert {p.id for p in verdict.papers} == backing, "only papers behind the evidence, no padding"
    assert core.diagnose({}).papers == []


def test_confidence_tracks_the_strength_of_the_evidence(core):
    decisive = core.diagnose({"contamination_suspected": True}).confidence
    strong = core.diagnose({"passk_vs_base": "below"}).confidence
    corroborated = core.diagnose(
        {"passk_vs_base": "below", "entropy_trend": "collapsing"}
    ).confidence
    moderate = core.diagnose({"zero_advantage_fraction": 0.7})
    assert decisive > corroborated > strong > 0.7
    # A moderate reading alone is as likely as "no single
    # stage": no verdict, and "none" is what is said.
    assert moderate.binding_stage is None and moderate.confidence < 0.6


@pytest.mark.parametrize(
    "signals, expected",
    [
        ({"length_growth": "3.5x"}, {"length_growth": 3.5}),
        ({"batch_doubling_speedup": "1.1×"}, {"batch_doubling_speedup": 1.1}),
        ({"clip_fraction": "12%"}, {"clip_fraction": 0.12}),
        ({"kl_to_reference": "5 nats"}, {"kl_to_reference": 5.0}),
        ({"loss_divergence": "n"}, {"loss_divergence": False}),
    ],
)
def test_answers_as_people_write_them(core, signals, expected):
    assert core.diagnose(signals).signals == expected


@pytest.mark.parametrize(
    "signals, message",
    [
        ({"length_growth": "350%"}, "'%' is only for shares"),
        ({"eval_improvement": "2%"}, "'%' is only for shares"),
        ({"task_repeat_epochs": "3x"}, "task_repeat_epochs takes a number"),
    ],
)
def test_units_that_do_not_fit_are_refused(core, signals, message):
    with pytest.raises(DiagnosisInputError, match=message):
        core.diagnose(signals)
