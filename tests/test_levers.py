"""Issue 38: a verdict says one thing to do next, taken from the catalog's levers: the binding
stage's lever that answers what the verdict rests on (knowledge/stages/*.yaml, ``answers``)."""

from __future__ import annotations

import pytest

from rlmap_bot.diagnosis import levers
from rlmap_bot.knowledge.loader import KnowledgeError, load_catalog
from support import KNOWLEDGE


def test_every_rule_that_points_at_a_stage_has_a_lever_that_answers_it():
    catalog = load_catalog(KNOWLEDGE)
    answered = {
        key for stage in catalog.stages for lever in stage.answering_levers for key in lever.answers
    }
    unanswered = [
        f"{signal.id}.{rule.id}"
        for signal in catalog.signals
        for rule in signal.rules
        if any(p > 0 for p in rule.points.values())
        and f"{signal.id}.{rule.id}" not in answered
        and signal.id not in answered
    ]
    assert unanswered == []


@pytest.mark.parametrize(
    "values, stage, words",
    [
        # the training reward climbs while the held-out score falls: stop near the peak
        (
            {"proxy_reward_trend": "rising", "heldout_score_trend": "falling"},
            "reward",
            "Stop early, or bound KL",
        ),
        # a NaN loss: stabilise the update first
        ({"loss_divergence": True}, "optimization", "Stabilise the update"),
        # entropy gone and the held-out score flat: protect entropy
        (
            {"entropy_trend": "collapsed", "heldout_score_trend": "flat"},
            "optimization",
            "Protect entropy",
        ),
        # stragglers make the trainer wait: a rule named exactly wins over its signal's lever
        (
            {"rollout_wait_fraction": 0.5, "length_tail_ratio": 6.0},
            "rollouts",
            "Decouple actors from the learner",
        ),
    ],
)
def test_a_verdict_names_the_binding_stage_s_lever_for_its_evidence(core, values, stage, words):
    verdict = core.diagnose(values)
    assert verdict.binding_stage == stage, verdict.summary
    step = verdict.next_step
    assert step is not None and step.kind == "lever" and step.stage == stage
    assert step.text.startswith(words), step.text
    assert step.reading is not None


def test_a_verdict_that_names_no_stage_says_which_check_tells_most(core):
    verdict = core.diagnose({"eval_num_seeds": 5})
    assert verdict.binding_stage is None
    step = verdict.next_step
    assert step is not None and step.kind == "check"
    assert step.text == verdict.next_checks[0].question


def test_a_fault_has_its_lever(core):
    step = levers.for_fault(core.engine.catalog, "nan")
    assert step is not None and step.stage == "optimization"
    assert step.text.startswith("Stabilise the update")
    assert levers.for_fault(core.engine.catalog, "no_such_fault") is None


def test_a_lever_answering_an_unknown_reading_is_refused(knowledge_copy):
    path = knowledge_copy / "stages" / "reward.yaml"
    path.write_text(path.read_text().replace("answers: [truncation_rate]", "answers: [truncaton]"))
    with pytest.raises(
        KnowledgeError, match=r"entry 'reward': field 'levers\[5\].answers': no signal or rule"
    ):
        load_catalog(knowledge_copy)


def test_a_lever_answering_a_fault_that_does_not_exist_is_refused(knowledge_copy):
    path = knowledge_copy / "stages" / "optimization.yaml"
    path.write_text(path.read_text().replace("fault:nan,", "fault:nann,"))
    with pytest.raises(KnowledgeError, match=r"no fault 'fault:nann'; faults are "):
        load_catalog(knowledge_copy)
