"""Every diagnosis rule rests on a fact of a catalog paper, or says what is judgement.

A threshold in a rule must either appear in the cited fact or be covered by the rule's
``judgement`` text; points follow the catalog's scale; presets reach every single-signal rule.
"""

from __future__ import annotations

import ast
import re

from rlmap_bot.knowledge.schema import Paper

SCALE = {
    5.0,
    3.5,
    2.0,
    1.0,
    0.5,
}  # decisive, strong, moderate, weak, hint (see knowledge/catalog.yaml)


def all_rules(catalog):
    for signal in catalog.signals:
        for i, rule in enumerate(signal.rules):
            yield signal, i, rule


def thresholds(when: str) -> set[float]:
    """Numbers a condition compares against (not 0, 1, 2 or 3 inside formulas like sqrt(2 / n))."""
    tree = ast.parse(when, mode="eval")
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                if (
                    isinstance(side, ast.Constant)
                    and isinstance(side.value, (int, float))
                    and not isinstance(side.value, bool)
                ):
                    found.add(float(side.value))
    return found - {0.0}


def test_every_rule_names_a_supporting_fact_or_judgement(catalog):
    missing = []
    for signal, _, rule in all_rules(catalog):
        paper = catalog.entries[rule.source]
        assert isinstance(paper, Paper), f"{signal.id}.{rule.id} cites a {paper.kind}"
        if rule.fact is None:
            if not rule.judgement:
                missing.append(f"{signal.id}.{rule.id}")
            continue
        assert rule.fact < len(paper.facts), (
            f"{signal.id}.{rule.id}: {rule.source} has no fact {rule.fact}"
        )
        assert paper.facts[rule.fact].strip()
    assert not missing, f"rules with neither a fact nor a judgement: {missing}"


def test_thresholds_come_from_the_fact_or_are_marked_judgement(catalog):
    unsourced = []
    for signal, _, rule in all_rules(catalog):
        numbers = thresholds(rule.when)
        if not numbers or rule.judgement:
            continue
        fact = catalog.entries[rule.source].facts[rule.fact] if rule.fact is not None else ""
        in_fact = {float(x) for x in re.findall(r"\d+(?:\.\d+)?", fact)}
        percent = {float(x) / 100 for x in re.findall(r"(\d+(?:\.\d+)?)\s*%", fact)}
        stray = numbers - in_fact - percent
        if stray:
            unsourced.append(
                f"{signal.id}.{rule.id}: {sorted(stray)} not in {rule.source} fact {rule.fact}"
            )
    assert not unsourced, (
        "thresholds neither in the cited fact nor marked judgement:\n" + "\n".join(unsourced)
    )


def test_points_follow_the_scale(catalog):
    off = [
        f"{s.id}.{r.id}: {stage} {pts}"
        for s, _, r in all_rules(catalog)
        for stage, pts in r.points.items()
        if pts > 0 and pts not in SCALE
    ]
    assert not off, f"positive points off the scale {sorted(SCALE)}: {off}"


def test_judgements_say_something(catalog):
    for signal, _, rule in all_rules(catalog):
        if rule.judgement is not None:
            assert len(rule.judgement.split()) >= 4, (
                f"{signal.id}.{rule.id}: a judgement needs its reason"
            )


def test_presets_reach_every_rule_on_their_own_signal(catalog):
    """A rule that reads only its signal must fire for
    at least one preset, so buttons match the bands.
    """
    unreachable = []
    for signal in catalog.signals:
        values = [signal.coerce(p.value) for p in signal.presets]
        for rule in signal.rules:
            if rule.expr.names != {signal.id}:
                continue
            if not any(rule.expr.holds({signal.id: v}) for v in values):
                unreachable.append(f"{signal.id}.{rule.id}")
    assert not unreachable, f"no preset reaches: {unreachable}"


def test_signals_say_what_answering_costs(catalog):
    for signal in catalog.signals:
        assert "cost" in signal.model_fields_set, f"{signal.id} does not set its cost tier"
        assert signal.cost_note, f"{signal.id} does not say where the number comes from"


def test_reviewed_rules_are_gone_or_fixed(catalog):
    """The rules the source review found unsupported do not come back."""
    rules = {f"{s.id}.{r.id}": r for s, _, r in all_rules(catalog)}
    for gone in (
        "kl_to_reference.kl_dominated_stall",
        "kl_to_reference.high",
        "kl_to_reference.length_drift",
        "loss_divergence.mismatch_divergence",
        "eval_improvement.within_one_std",
    ):
        assert gone not in rules, gone
    assert "heldout_score_trend" in rules["length_growth.long_without_transfer"].when
    assert "zero_advantage_fraction" in rules["train_solve_rate.frontier"].when
    assert "rollout_wait_fraction" in rules["env_time_fraction.environment_bound"].when
    assert "sqrt(2 / eval_num_seeds)" in rules["eval_improvement.within_noise"].when
    assert "rollouts" not in rules["batch_doubling_speedup.poor"].points
    assert rules["proxy_reward_trend.falling"].points != rules["proxy_reward_trend.plateau"].points
    assert "logprob_mismatch_trend" in rules["logprob_mismatch_trend.widening_unstable"].when
    for sid in (
        "truncation_rate",
        "incorrect_length_ratio",
        "passk_vs_base",
        "group_size",
        "logprob_mismatch_trend",
        "kl_loss_share",
    ):
        assert any(k.startswith(sid + ".") for k in rules), f"{sid} has no rule"
