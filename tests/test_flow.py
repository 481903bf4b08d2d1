"""The guided diagnosis: next question, don't know, back, stop, resume after a restart, expiry."""

from __future__ import annotations

import datetime as dt

import pytest

from rlmap_bot.core import Core
from rlmap_bot.diagnosis.flow import Flow, FlowError
from rlmap_bot.state.store import StateStore

from support import KNOWLEDGE


@pytest.fixture
def fresh(built_db, state_url):
    """A core with its own state store (SQLite and PostgreSQL), so each test starts with no sessions."""
    core = Core(KNOWLEDGE, built_db, state_url=state_url)
    yield core
    core.state.close()


def answer_from(step, values):
    """Answer the current question from a dict of 'true' values, else don't know."""
    return step.question.signal in values


def run_to_verdict(flow, step, truth):
    asked = []
    while step.question is not None:
        sid = step.question.signal
        asked.append(sid)
        step = flow.answer(step.session.id, sid, truth[sid]) if sid in truth else flow.skip(step.session.id, sid)
    return step, asked


def test_first_question_is_the_most_informative(fresh):
    step = fresh.flow.start(user="U1")
    best = fresh.engine.information({})[0]
    assert step.question.signal == best.signal
    assert step.question.number == 1 and not step.question.can_go_back
    assert step.question.presets, "questions offer ready-made answers"


def test_guided_flow_reaches_the_reward_verdict(fresh):
    truth = {"proxy_reward_trend": "rising", "heldout_score_trend": "falling", "reward_audit_error_rate": 0.3,
             "kl_to_reference": 40, "length_growth": 2.0}
    step, asked = run_to_verdict(fresh.flow, fresh.flow.start(user="U1"), truth)
    assert step.verdict.binding_stage == "reward"
    assert step.session.status == "done"
    assert len(asked) <= fresh.engine.settings.max_questions
    # It stopped because the verdict was clear, not because it ran out of questions.
    assert fresh.engine.is_settled(step.session.answers)


def test_dont_know_everything_ends_without_a_verdict(fresh):
    step, asked = run_to_verdict(fresh.flow, fresh.flow.start(user="U1"), {})
    assert step.verdict.binding_stage is None
    assert len(asked) == fresh.engine.settings.max_questions
    assert len(set(asked)) == len(asked), "a skipped question is not asked again"


def test_back_undoes_the_last_answer(fresh):
    flow = fresh.flow
    step = flow.start(user="U1")
    first = step.question.signal
    value = step.question.presets[0].value
    step = flow.answer(step.session.id, first, value)
    second = step.question.signal
    step = flow.back(step.session.id)
    assert step.question.signal == first and first not in step.session.answers
    with pytest.raises(FlowError, match="first question"):
        flow.back(step.session.id)
    assert second != first


def test_stale_and_bad_answers_are_refused_without_change(fresh):
    flow = fresh.flow
    step = flow.start(user="U1")
    sid = step.question.signal
    with pytest.raises(FlowError, match="already answered"):
        flow.answer(step.session.id, "not_the_current_one", 1)
    bad = "nonsense" if step.question.type != "choice" else "sideways"
    with pytest.raises(FlowError):
        flow.answer(step.session.id, sid, bad)
    again = flow.resume(step.session.id)
    assert again.question.signal == sid and again.session.answers == {}


def test_stop_gives_the_verdict_so_far(fresh):
    flow = fresh.flow
    step = flow.start(user="U1")
    step = flow.stop(step.session.id)
    assert step.verdict is not None and step.session.status == "stopped"
    with pytest.raises(FlowError, match="stopped"):
        flow.skip(step.session.id)


def test_survives_a_restart_and_lists_open_sessions(built_db, state_url):
    state = state_url
    first = Core(KNOWLEDGE, built_db, state_url=state)
    step = first.flow.start(user="U1", team="T1", channel="C1", thread_ts="111.222")
    sid = step.question.signal
    step = first.flow.answer(step.session.id, sid, step.question.presets[0].value)
    pending = step.question.signal
    first.state.close()
    del first
    # A new process: new Core, new state store on the same file.
    second = Core(KNOWLEDGE, built_db, state_url=state)
    resumed = second.flow.resume(step.session.id)
    assert resumed.question.signal == pending
    assert sid in resumed.session.answers
    found = second.state.sessions.find("T1", "C1", "111.222")
    assert found.id == step.session.id
    assert [s.id for s in second.state.sessions.list(team="T1", user="U1")] == [step.session.id]


def test_sessions_expire(built_db, state_url):
    core = Core(KNOWLEDGE, built_db, state_url=state_url)
    flow = Flow(core.engine, core.state, ttl=dt.timedelta(seconds=0))
    step = flow.start(user="U1")
    with pytest.raises(FlowError, match="expired"):
        flow.skip(step.session.id)
    assert core.state.sessions.get(step.session.id).status == "expired"
    old = core.flow.start(user="U2")
    assert core.state.sessions.expire(dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=1)) == 1
    assert core.state.sessions.get(old.session.id).status == "expired"


def test_concurrent_moves_do_not_both_apply(fresh):
    flow = fresh.flow
    step = flow.start(user="U1")
    stale = fresh.state.sessions.get(step.session.id)
    flow.skip(step.session.id)
    from rlmap_bot.state.store import ConflictError

    with pytest.raises(ConflictError):
        fresh.state.sessions.save(stale.model_copy(update={"answers": {"x": 1}}))
