"""The guided flow builds on the complaint a team picks (issue 36, item 4).

What the complaint says is an answer: a signal it states is never asked, a signal it narrows is
asked with the choices left and counts as "one of these" meanwhile, and the verdict says what it
took "from what you said". When the team does not know what is asked, the pause names the checks
that would separate the explanations of that complaint, not the readings decisive in general.
"""

from __future__ import annotations

import pytest

from rlmap_bot.diagnosis.engine import Engine
from rlmap_bot.diagnosis.flow import Flow
from rlmap_bot.diagnosis.memory import MemoryState
from rlmap_bot.diagnosis.simulate import simulate
from rlmap_bot.knowledge.loader import load_catalog
from support import KNOWLEDGE

# Readings decisive for a stage whatever the team sees: the pause used to offer these three
# after every complaint but "unstable" (issue 36).
UNRELATED = {"loss_divergence", "logprob_mismatch_trend", "contamination_suspected"}


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(load_catalog(KNOWLEDGE))


def flow_of(engine: Engine) -> Flow:
    return Flow(engine, MemoryState())


def bearing_on(engine: Engine, complaint_id: str) -> set[str]:
    """Every signal read by a rule that reads one of the complaint's listed signals: the readings
    that could explain it, or count against an explanation of it."""
    listed = set(engine.complaints[complaint_id].signals)
    return {
        name
        for sid in listed
        for rule in engine.rules.by_signal.get(sid, ())
        for name in rule.names
    }


def to_the_pause(engine: Engine, complaint_id: str):
    """Pick the complaint, then say "don't know" until the flow pauses."""
    flow = flow_of(engine)
    step = flow.start(user="U1")
    step = flow.answer(step.session.id, "complaint", [complaint_id])
    asked = []
    while step.question is not None and not step.paused:
        asked.append(step.question.signal)
        step = flow.skip(step.session.id, step.question.signal)
    return step, asked


def test_the_reward_a_team_says_rises_is_not_asked_again(engine):
    """A team sees its training reward climb while its eval stands still; it knows the held-out
    score is flat and that each task has come round 12 times at a 92% solve rate. It is not asked
    whether the reward rises (it said so), and the memorised pool is named on what it said."""
    result = simulate(
        engine,
        {
            "complaint": ["reward_up_eval_flat"],
            "heldout_score_trend": "flat",
            "task_repeat_epochs": 12,
            "train_solve_rate": 0.92,
        },
    )
    assert "proxy_reward_trend" not in result["asked"], result["asked"]
    assert result["binding_stage"] == "environments", result["summary"]
    assert result["said"] == {"proxy_reward_trend": "rising"}
    assert "From what you said: Training reward trend: rising." in result["summary"]


def test_a_stall_counts_even_when_the_team_cannot_say_flat_or_falling(engine):
    """A team says training has stalled, cannot tell whether the reward is flat or sliding, and
    knows the KL term is 65% of its loss. "Stalled" says the reward no longer rises, which is
    all the KL-dominated-stall reading needs, so the verdict comes without the trend."""
    flow = flow_of(engine)
    step = flow.start(user="U1")
    step = flow.answer(step.session.id, "complaint", ["stalled"])
    assert step.question.signal == "proxy_reward_trend"
    assert [p.value for p in step.question.presets] == ["flat", "falling"]
    assert step.question.choices == ["flat", "falling"]
    assert step.question.answer_hint == "one of: flat, falling"
    result = simulate(engine, {"complaint": ["stalled"], "kl_loss_share": 0.65})
    assert result["binding_stage"] == "optimization", result["summary"]
    stall = next(e for e in result["evidence"] if e["rule"] == "kl_loss_share.kl_dominates_stall")
    assert stall["signals"]["proxy_reward_trend"] == ["flat", "falling"]
    assert "Training reward trend: flat or falling" in result["summary"]


def test_gains_that_do_not_carry_over_pause_on_what_could_explain_them(engine):
    """A team whose gains stay in training knows none of the readings asked: the three checks
    offered are readings that bear on a train/held-out gap, not a diverged loss or an engine
    mismatch."""
    step, asked = to_the_pause(engine, "no_transfer")
    checks = {c.signal for c in step.paused}
    assert "proxy_reward_trend" not in asked
    assert len(checks) == engine.settings.pause_checks
    assert checks <= bearing_on(engine, "no_transfer"), checks
    assert not checks & {"loss_divergence", "logprob_mismatch_trend"}, checks


def test_slow_training_pauses_on_where_the_time_goes(engine):
    """A team whose training is slow and that cannot say how long its trainer waits is told to
    measure where the time goes (generation, environments, stragglers), not to check its loss for
    NaNs or its benchmark for leaks."""
    step, _ = to_the_pause(engine, "slow")
    checks = {c.signal for c in step.paused}
    assert checks <= bearing_on(engine, "slow") and not checks & UNRELATED, checks
    # Each check is one whose answer could move the verdict between stages the slowness leaves
    # open (rollouts, environments, optimization), so the list is not the complaint's own.
    timing = {"env_time_fraction", "generation_utilization", "length_tail_ratio"}
    assert checks & timing, checks


@pytest.mark.parametrize(
    "complaint_id",
    [
        "reward_up_eval_flat",
        "stalled",
        "slow",
        "unstable",
        "long_outputs",
        "eval_unsure",
        "no_transfer",
    ],
)
def test_every_complaint_is_built_on(engine, complaint_id):
    """The family, over every complaint of the catalog: what it states is never asked, what it
    narrows is offered with the choices left, and the pause's checks bear on it."""
    assert complaint_id in engine.complaints  # the catalog still offers it
    step, asked = to_the_pause(engine, complaint_id)
    checks = {c.signal for c in step.paused}
    assert checks and checks <= bearing_on(engine, complaint_id), checks
    if complaint_id != "unstable":  # a diverged loss is one way a run is unstable
        assert not checks & UNRELATED, checks
    complaint = engine.complaints[complaint_id]
    stated = {sid for sid, v in complaint.states.items() if not isinstance(v, list)}
    assert not stated & set(asked), asked
    for sid, value in complaint.states.items():
        if isinstance(value, list) and sid in asked:
            flow = flow_of(engine)
            first = flow.answer(flow.start(user="U1").session.id, "complaint", [complaint_id])
            while first.question.signal != sid:
                first = flow.skip(first.session.id, first.question.signal)
            assert first.question.choices == value


def test_going_back_to_the_opening_question_takes_what_it_said_back(engine):
    """A team picks "reward rises, the eval does not", goes back and picks "stalled" instead: the
    reward is no longer taken as rising, and the trend question offers flat or falling."""
    flow = flow_of(engine)
    step = flow.start(user="U1")
    step = flow.answer(step.session.id, "complaint", ["reward_up_eval_flat"])
    assert flow.guide.said(step.session)["proxy_reward_trend"] == "rising"
    step = flow.back(step.session.id)
    assert step.question.signal == "complaint" and not flow.guide.said(step.session)
    step = flow.answer(step.session.id, "complaint", ["stalled"])
    assert step.question.signal == "proxy_reward_trend"
    assert step.question.choices == ["flat", "falling"]
    # 'b' is the second choice offered (falling), not the signal's second preset (flat)
    step = flow.reply(step.session.id, "b")
    assert step.session.answers["proxy_reward_trend"] == "falling"


def test_an_answer_the_team_gives_wins_over_what_the_complaint_said(engine):
    """Values read from the run's logs after the complaint replace what the complaint said."""
    flow = flow_of(engine)
    step = flow.start(user="U1")
    step = flow.answer(step.session.id, "complaint", ["reward_up_eval_flat"])
    step = flow.absorb(step.session.id, {"heldout_score_trend": "rising"})
    values = flow.guide.signal_answers(step.session)
    assert values["heldout_score_trend"] == "rising" and values["proxy_reward_trend"] == "rising"
    step = flow.stop(step.session.id)
    assert step.verdict.said == {"proxy_reward_trend": "rising"}


def test_two_complaints_leave_what_both_allow(engine):
    """ "Reward rises, eval does not" and "gains do not carry over" say the same; both together
    still narrow the held-out score to flat or falling."""
    flow = flow_of(engine)
    step = flow.start(user="U1")
    step = flow.answer(step.session.id, "complaint", ["reward_up_eval_flat", "no_transfer"])
    said = flow.guide.said(step.session)
    assert said["proxy_reward_trend"] == "rising"
    assert sorted(said["heldout_score_trend"]) == ["falling", "flat"]
    # "stalled" says the reward does not rise: with "reward rises" nothing is left, so neither
    # is taken and the question is asked whole.
    both = flow.answer(
        flow.start(user="U1").session.id, "complaint", ["reward_up_eval_flat", "stalled"]
    )
    assert "proxy_reward_trend" not in flow.guide.said(both.session)
