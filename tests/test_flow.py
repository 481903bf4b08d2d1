"""The guided diagnosis: the opening complaint, next questions,
typed answers, help, back, stop, restart, expiry.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest

from rlmap_bot.core import Core
from rlmap_bot.diagnosis.engine import DiagnosisInputError
from rlmap_bot.diagnosis.flow import Flow, FlowError, SupersededError
from rlmap_bot.diagnosis.replies import CONTROL_WORDS, control_word
from rlmap_bot.diagnosis.simulate import simulate
from support import KNOWLEDGE


@pytest.fixture
def fresh(built_db, state_url):
    """A core with its own state store (SQLite and
    PostgreSQL), so each test starts with no sessions.
    """
    core = Core(KNOWLEDGE, built_db, state_url=state_url)
    yield core
    core.state.close()


def run_to_verdict(flow, step, truth):
    """Answer every question from ``truth`` (the complaint
    under the key 'complaint'), else don't know; offered the readings list at a pause, pick those
    ``truth`` holds ("none of these" if none).
    """
    asked = []
    while step.question is not None:
        sid = step.question.signal
        asked.append(sid)
        if sid == "readings":
            have = [p.value for p in step.question.presets if p.value in truth]
            step = (
                flow.answer(step.session.id, sid, have) if have else flow.skip(step.session.id, sid)
            )
            continue
        step = (
            flow.answer(step.session.id, sid, truth[sid])
            if sid in truth
            else flow.skip(step.session.id, sid)
        )
    return step, asked


def at(flow, signal_id):
    """A new session whose current question is ``signal_id`` (past the opening question)."""
    step = flow.start(user="U1")
    session = flow.store.sessions.save(
        step.session.model_copy(
            update={"history": ["complaint"], "skipped": ["complaint"], "current": signal_id}
        )
    )
    return flow.resume(session.id)


def test_opens_with_what_the_team_sees(fresh):
    step = fresh.flow.start(user="U1")
    q = step.question
    assert q.kind == "complaint" and q.signal == "complaint" and q.multiple
    complaints = fresh.engine.settings.complaints
    assert [p.value for p in q.presets] == [c.id for c in complaints] and len(complaints) >= 7
    assert {
        "reward_up_eval_flat",
        "stalled",
        "slow",
        "unstable",
        "long_outputs",
        "eval_unsure",
        "no_transfer",
    } <= set(q.choices)
    assert q.number == 1 and not q.can_go_back
    total = fresh.engine.settings.max_asked
    assert total <= 12, "nobody answers more than 12 questions"
    assert q.max_questions == total and q.progress == f"question 1 of at most {total}"
    assert "letters" in q.answer_hint


def test_a_complaint_puts_its_signals_first(fresh):
    flow = fresh.flow
    step = flow.start(user="U1")
    step = flow.reply(step.session.id, "stalled, slow")
    assert step.session.answers["complaint"] == ["stalled", "slow"]
    listed = {
        sid
        for c in fresh.engine.settings.complaints
        if c.id in {"stalled", "slow"}
        for sid in c.signals
    }
    assert step.question.kind == "signal" and step.question.signal in listed
    assert step.question.progress.startswith("question 2 of at most")


@pytest.mark.parametrize(
    "typed, chosen",
    [
        ("a c", ["reward_up_eval_flat", "slow"]),
        ("2,3", ["stalled", "slow"]),
        ("unstable", ["unstable"]),
        (["eval_unsure"], ["eval_unsure"]),
    ],
)
def test_several_complaints_as_letters_numbers_or_ids(fresh, typed, chosen):
    step = fresh.flow.start(user="U1")
    step = fresh.flow.answer(step.session.id, "complaint", typed)
    assert step.session.answers["complaint"] == chosen


def test_a_wrong_complaint_is_refused_and_none_means_skip(fresh):
    flow = fresh.flow
    step = flow.start(user="U1")
    with pytest.raises(FlowError, match="not one of the options"):
        flow.reply(step.session.id, "everything is on fire")
    step = flow.reply(step.session.id, "none")
    assert "complaint" in step.session.skipped and step.question.kind == "signal"


def test_with_no_complaint_the_readings_that_decide_a_stage_alone_come_first(fresh):
    """With nothing named, the first question is the one of highest expected information gain
    over all stages, and each of the first few, answered, could alone make a stage bind."""
    step = fresh.flow.start(user="U1")
    step = fresh.flow.skip(step.session.id)  # nothing seen
    engine = fresh.engine
    assert step.question.signal == engine.information({})[0].signal
    asked = []
    for _ in range(engine.settings.pause_after_unknowns):
        sid = step.question.signal
        asked.append(sid)
        assert any(
            engine.binding_of({sid: option})[0] is not None
            for option in engine.candidate_values(engine.signals[sid])
        ), f"{sid} alone can settle no stage"
        step = fresh.flow.skip(step.session.id)
    assert len(set(asked)) == len(asked)


def test_guided_flow_reaches_the_reward_verdict_and_stops_early(fresh):
    truth = {
        "proxy_reward_trend": "rising",
        "heldout_score_trend": "falling",
        "reward_audit_error_rate": 0.3,
        "kl_to_reference": 40,
        "length_growth": 2.0,
    }
    step, asked = run_to_verdict(fresh.flow, fresh.flow.start(user="U1"), truth)
    assert step.verdict.binding_stage == "reward"
    assert step.session.status == "done"
    assert len(asked) < fresh.engine.settings.max_asked
    # Before stopping it asked whether many passes over the pool explain the trends instead.
    assert "task_repeat_epochs" in asked
    assert fresh.engine.is_settled(fresh.flow.guide.signal_answers(step.session))


def test_a_begun_combination_is_followed_up(fresh):
    """The eval gain alone says nothing; once known, the spread and the seed count come next."""
    step = fresh.flow.answer(at(fresh.flow, "eval_improvement").session.id, "eval_improvement", 1.5)
    assert step.question.signal in {"eval_seed_std", "eval_num_seeds"}


def test_dont_know_everything_ends_without_a_verdict(fresh):
    step, asked = run_to_verdict(fresh.flow, fresh.flow.start(user="U1"), {})
    assert step.verdict.binding_stage is None
    assert asked[0] == "complaint"
    pause = fresh.engine.settings.pause_after_unknowns
    assert asked[1 : pause + 1] == [q for q in asked if q not in {"complaint", "readings"}]
    assert asked[-1] == "readings" and len(asked) == pause + 2, "none of the readings: it ends"
    assert len(set(asked)) == len(asked), "a skipped question is not asked again"


def test_help_gives_how_to_measure_without_moving(fresh):
    flow = fresh.flow
    step = at(flow, "rollout_wait_fraction")
    helped = flow.reply(step.session.id, "help")
    assert helped.help == fresh.engine.signals["rollout_wait_fraction"].how_to_measure
    assert helped.question.signal == "rollout_wait_fraction" and helped.session.answers == {}
    assert flow.resume(step.session.id).session.version == helped.session.version


@pytest.mark.parametrize(
    "signal, typed, value",
    [
        ("length_growth", "3.5x", 3.5),
        ("length_growth", "3.5", 3.5),
        ("rollout_wait_fraction", "40%", 0.4),
        ("rollout_wait_fraction", "0.4", 0.4),
        ("loss_divergence", "y", True),
        ("loss_divergence", "n", False),
        ("kl_to_reference", "5 nats", 5.0),
        ("eval_improvement", "+2.5 points", 2.5),
        ("entropy_trend", "a", "collapsing"),
        # A choice in everyday words (knowledge/catalog.yaml: answer_words), as a person types it.
        ("proxy_reward_trend", "going up", "rising"),
        ("proxy_reward_trend", "Going up!", "rising"),
        ("heldout_score_trend", "dropping", "falling"),
        ("heldout_score_trend", "plateaued", "flat"),
        ("logprob_mismatch_trend", "growing", "widening"),
        ("passk_vs_base", "lower", "below"),
        ("entropy_trend", "stable", "stable"),
        ("entropy_trend", "up", "rising"),
        ("entropy_trend", "steady", "stable"),
    ],
)
def test_typed_answers_as_people_write_them(fresh, signal, typed, value):
    step = fresh.flow.reply(at(fresh.flow, signal).session.id, typed)
    assert step.session.answers[signal] == value


@pytest.mark.parametrize(
    "signal, typed, message",
    [
        ("length_growth", "350%", "'%' is only for shares"),
        ("rollout_wait_fraction", "40", "fraction from 0 to 1"),
        ("loss_divergence", "sometimes", "takes yes/no"),
        # "down" could be a collapse or a decline: the entropy question does not guess.
        ("entropy_trend", "down", "takes one of collapsing, collapsed, declined, stable, rising"),
        ("proxy_reward_trend", "sideways", "takes one of rising, flat, falling"),
    ],
)
def test_typed_answers_that_do_not_fit_are_refused(fresh, signal, typed, message):
    with pytest.raises(FlowError, match=message) as refused:
        fresh.flow.reply(at(fresh.flow, signal).session.id, typed)
    # Named by the question's title, as the card shows it, not by the signal's id.
    assert str(refused.value).startswith(fresh.engine.signals[signal].title), str(refused.value)
    assert signal not in str(refused.value)


def test_questions_carry_what_front_ends_render(fresh):
    step = at(fresh.flow, "length_growth")
    q = step.question
    assert q.kind == "signal" and q.cost == "dashboard"
    ratio = re.fullmatch(r"a ratio like ([\d.]+)x", q.answer_hint)
    assert ratio and float(ratio[1]) in [p.value for p in q.presets], "an answer the card offers"
    assert at(fresh.flow, "clip_fraction").question.answer_hint.startswith("a share like")
    assert at(fresh.flow, "grad_norm_spikes").question.answer_hint == "yes or no (y/n)"
    assert q.progress == f"question 2 of at most {fresh.engine.settings.max_asked}"


def test_back_undoes_the_last_answer(fresh):
    flow = fresh.flow
    step = flow.start(user="U1")
    step = flow.answer(step.session.id, "complaint", "unstable")
    first = step.question.signal
    value = step.question.presets[0].value
    step = flow.answer(step.session.id, first, value)
    second = step.question.signal
    step = flow.back(step.session.id)
    assert step.question.signal == first and first not in step.session.answers
    step = flow.back(step.session.id)
    assert step.question.kind == "complaint" and "complaint" not in step.session.answers
    with pytest.raises(FlowError, match="first question"):
        flow.back(step.session.id)
    assert second != first


def test_stale_and_bad_answers_are_refused_without_change(fresh):
    flow = fresh.flow
    step = flow.skip(flow.start(user="U1").session.id)
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
    assert sid == "complaint" and pending != sid
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
    assert core.state.sessions.expire(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)) == 1
    assert core.state.sessions.get(old.session.id).status == "expired"


def test_concurrent_moves_do_not_both_apply(fresh):
    flow = fresh.flow
    step = flow.start(user="U1")
    stale = fresh.state.sessions.get(step.session.id)
    flow.skip(step.session.id)
    from rlmap_bot.state.store import ConflictError

    with pytest.raises(ConflictError):
        fresh.state.sessions.save(stale.model_copy(update={"answers": {"x": 1}}))


def test_a_reply_a_later_one_overtook_changes_nothing(fresh):
    """``stale`` is asked of the applied keys; a reply it refuses leaves the session as it was."""
    flow = fresh.flow
    step = flow.start(user="U1")
    flow.reply(step.session.id, "?", key="k2")
    before = fresh.state.sessions.get(step.session.id)
    with pytest.raises(SupersededError):
        flow.reply(step.session.id, "?", key="k1", stale=lambda moves: "k2" in moves)
    after = fresh.state.sessions.get(step.session.id)
    assert (after.current, after.skipped, after.moves) == (before.current, before.skipped, ["k2"])
    assert flow.reply(step.session.id, "?", key="k2", stale=lambda moves: True).replayed, (
        "a replay is not stale"
    )


def test_control_words_front_ends_can_recognise():
    assert {control_word(w) for w in ("?", "skip", "back", "stop", "help", "HELP ")} == {
        "skip",
        "back",
        "stop",
        "help",
    }
    assert set(CONTROL_WORDS.values()) == {"skip", "back", "stop", "help"}
    assert control_word("0.4") is None and control_word("a") is None


def test_simulation_answers_truthfully_through_the_flow(core):
    truth = {"complaint": ["slow"], "rollout_wait_fraction": 0.7, "generation_utilization": 0.9}
    result = simulate(core.engine, truth)
    assert (
        result["binding_stage"]
        == "rollouts"
        == core.diagnose({k: v for k, v in truth.items() if k != "complaint"}).binding_stage
    )
    # The wait first, then what would place it (busy generators, slow environments, stragglers).
    assert result["asked"][0] == "rollout_wait_fraction" and result["complaint_asked"]
    assert result["asked"][1] in {
        "generation_utilization",
        "env_time_fraction",
        "length_tail_ratio",
    }
    assert "generation_utilization" in result["asked"][:4]
    assert {
        "binding_stage",
        "binding_title",
        "tied",
        "confidence",
        "summary",
        "ranking",
        "evidence",
        "next_checks",
        "papers",
        "signals",
    } <= set(result)
    assert result["signals"] == {"rollout_wait_fraction": 0.7, "generation_utilization": 0.9}


def test_simulation_asks_the_same_questions_as_the_stored_flow(fresh):
    truth = {"proxy_reward_trend": "rising", "heldout_score_trend": "flat", "task_repeat_epochs": 9}
    step, asked = run_to_verdict(fresh.flow, fresh.flow.start(user="U1"), truth)
    result = simulate(fresh.engine, truth)
    assert result["asked"] == [sid for sid in asked if sid != "complaint"]
    assert result["binding_stage"] == step.verdict.binding_stage == "environments"


@pytest.mark.parametrize(
    "truth, message",
    [
        ([1, 2], "needs a JSON object"),
        ({"complaint": "slow"}, "complaint must be a list"),
        ({"complaint": ["sluggish"]}, "unknown complaint 'sluggish'"),
        ({"clip_fractoin": 0.1}, "did you mean 'clip_fraction'"),
        ({"clip_fraction": 3}, "clip_fraction must be at most 1"),
    ],
)
def test_simulation_input_errors_are_one_line(core, truth, message):
    with pytest.raises(DiagnosisInputError) as info:
        simulate(core.engine, truth)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_notes_name_questions_as_the_card_does(core):
    """The line under a card says what just happened in words a person saw, never a curator's id."""
    flow = core.flow
    step = flow.reply(flow.start(user="U1").session.id, "a")
    complaint = core.engine.settings.complaints[0]
    # what the complaint answers is said with it, by the questions' titles
    assert step.note == (
        f"you see: {complaint.label} (taken as Training reward trend: rising; Held-out score "
        f"trend: flat or falling)"
    )
    asked = core.engine.signals[step.question.signal]
    skipped = flow.reply(step.session.id, "?")
    assert skipped.note == f"skipped: {asked.title}" and asked.id not in skipped.note
    assert flow.reply(step.session.id, "back").note == f"back to: {asked.title}"


def test_one_known_fact_the_picker_reaches_late_is_named_at_the_pause(fresh):
    """A team whose one known fact is an extra experiment (doubling the batch bought 4%) says "don't
    know" to the first readings, names its fact in the list offered at the pause, is asked it next
    and gets the verdict, well within the bound."""
    truth = {"batch_doubling_speedup": 1.04}
    step, asked = run_to_verdict(fresh.flow, fresh.flow.start(user="U1"), truth)
    pause = fresh.engine.settings.pause_after_unknowns
    assert asked.index("readings") == pause + 1
    assert asked[pause + 2] == "batch_doubling_speedup"
    assert step.verdict.binding_stage == "optimization"
    assert len(asked) <= fresh.engine.settings.max_asked


def test_a_lone_moderate_reading_ends_with_a_verdict_on_one_measurement(fresh):
    """Told 0.80 for the trainer's wait (read from the logs) and "don't know" to the rest: the
    verdict names rollouts and says it rests on one measurement."""
    step, asked = run_to_verdict(
        fresh.flow, fresh.flow.start(user="U1", known={"rollout_wait_fraction": 0.8}), {}
    )
    assert step.verdict.binding_stage == "rollouts" and step.verdict.one_measurement
    # The questions that would confirm it come first.
    assert set(asked[:3]) <= {"generation_utilization", "env_time_fraction", "length_tail_ratio"}
    # ... and once the team has said "don't know" to those and one more, the flow stops with it.
    assert len(asked) == fresh.engine.settings.stop_after_unknowns, asked


def test_readings_from_a_run_s_logs_are_weighed_as_a_run_s_in_the_session(fresh):
    """A log's one reading said "may bind, no percentage" on the run card, then "39% sure" in
    the session the same thread opened on it: read from logs (a margin given, even None), the
    session's verdict is a verdict on a run, as diagnose --run's."""
    read = {"rollout_wait_fraction": 0.8}
    started = fresh.flow.start(user="U1", known=read, margins={"rollout_wait_fraction": None})
    assert started.leaning.binding_stage == "rollouts" and started.leaning.confidence is None
    step, _ = run_to_verdict(fresh.flow, started, {})
    assert step.verdict.binding_stage == "rollouts" and step.verdict.confidence is None
    typed = fresh.flow.start(user="U2")
    dropped = fresh.flow.absorb(typed.session.id, read, margins={"rollout_wait_fraction": None})
    assert dropped.leaning.binding_stage == "rollouts" and dropped.leaning.confidence is None
    assert dropped.session.from_logs == {"rollout_wait_fraction": None}
    # Typed by a person, the same value keeps the engine's own probability.
    by_hand, _ = run_to_verdict(fresh.flow, fresh.flow.start(user="U3"), read)
    assert by_hand.verdict.confidence is not None


def test_a_reading_named_at_the_pause_is_asked_and_the_unnamed_are_not(fresh):
    """Told 0.80 for the trainer's wait and naming only that at the pause: the flow asks it and
    nothing the team said it cannot read, and ends with the verdict on one measurement."""
    step, asked = run_to_verdict(
        fresh.flow, fresh.flow.start(user="U1"), {"rollout_wait_fraction": 0.8}
    )
    assert asked[-1] == "rollout_wait_fraction" and asked[-2] == "readings"
    assert step.verdict.binding_stage == "rollouts" and step.verdict.one_measurement


def test_stopping_without_a_verdict_still_says_what_the_team_sees(fresh):
    """A newcomer picked "training reward rises, the eval does not" and stopped: the verdict read
    "Nothing you reported points at a binding stage", as if unheard. (The complaint now answers
    the reward's trend itself, so the stop comes at the next question.)"""
    step = fresh.flow.start(user="U1")
    step = fresh.flow.reply(step.session.id, "a")  # the first complaint
    step = fresh.flow.reply(step.session.id, "stop")
    assert step.verdict.binding_stage is None
    summary = step.verdict.summary
    assert summary.startswith(
        "You see: “Training reward rises, the eval does not”. The answers so far point"
    ), summary
    checks = [c.signal for c in step.verdict.next_checks]
    assert "heldout_score_trend" in checks and f"check: {', '.join(checks)}." in summary, (
        "one list, not two"
    )


def test_three_dont_knows_without_a_verdict_pause_with_the_checks_that_tell_most(fresh):
    flow = fresh.flow
    step = flow.start(user="U1")
    step = flow.skip(step.session.id)  # the opening question: nothing seen
    for _ in range(2):
        step = flow.skip(step.session.id)
        assert not step.paused and step.question is not None
    step = flow.skip(step.session.id)
    assert step.verdict is None and step.question is not None and step.session.status == "open"
    assert len(step.paused) == fresh.engine.settings.pause_checks
    assert all(c.how_to_measure and c.signal not in step.session.history for c in step.paused)
    assert len({c.signal for c in step.paused}) == len(step.paused)
    # The question left open asks which readings the team has: the checks offered first among
    # them, then every other reading still worth asking, none already asked.
    q = step.question
    offered = [p.value for p in q.presets]
    assert q.kind == "readings" and q.multiple
    assert set(offered[:10]) >= {c.signal for c in step.paused}
    assert not set(offered) & set(step.session.history) and len(set(offered)) == len(offered)
    worth = fresh.engine.settings.min_gain
    unasked = [c for c in fresh.engine.information({}, exclude=step.session.history)]
    assert offered == [c.signal for c in unasked if c.gain > worth] and len(offered) >= 20
    # Picking two (by letter, as typed) asks those two next, best first, and nothing else.
    picked = [offered[-1], step.paused[0].signal]
    answered = flow.reply(step.session.id, f"{chr(ord('a') + len(offered) - 1)} a")
    assert not answered.paused and answered.session.answers["readings"] == picked
    assert answered.question.signal == step.paused[0].signal
    then = flow.skip(answered.session.id)
    assert then.question.signal == offered[-1]
    done = flow.skip(then.session.id)
    assert done.question is None and done.verdict is not None


def test_a_verdict_in_hand_is_never_paused(fresh):
    flow = fresh.flow
    step = flow.start(
        user="U1", known={"proxy_reward_trend": "rising", "heldout_score_trend": "falling"}
    )
    while step.question is not None:
        step = flow.skip(step.session.id)
        assert not step.paused
    assert step.verdict is not None and step.verdict.binding_stage == "reward"


def test_a_simulated_team_that_knows_nothing_stops_at_the_pause(fresh):
    result = simulate(fresh.engine, {})
    assert (
        len(result["asked"]) == fresh.engine.settings.pause_after_unknowns
        and result["complaint_asked"]
    )
    assert result["binding_stage"] is None
    assert result["questions"] == 1 + fresh.engine.settings.pause_after_unknowns <= 4


def healthy_run(engine) -> dict:
    """Every signal at the candidate answer that weighs least on any stage (most against)."""
    truth = {}
    for sid, signal in engine.signals.items():
        options = engine.candidate_values(signal)
        scores = [engine.scoring.evaluate({sid: v})[2] for v in options]
        best = min(
            range(len(options)), key=lambda i: (max(scores[i].values()), sum(scores[i].values()))
        )
        truth[sid] = options[best]
    return truth


def test_a_healthy_run_gets_nothing_binds_within_eight_questions(fresh):
    truth = healthy_run(fresh.engine)
    assert fresh.engine.diagnose(truth).binding_stage is None
    result = simulate(fresh.engine, truth)
    assert result["binding_stage"] is None and not result["tied"]
    assert result["questions"] <= 8, result["asked"]
    # It stopped as soon as "no single stage" was as sure as a verdict must be, and not before.
    answers = {sid: truth[sid] for sid in result["asked"]}
    assert fresh.engine.none_probability(answers) >= fresh.engine.settings.stop_confidence
    assert fresh.engine.none_probability(dict(list(answers.items())[:-1])) < (
        fresh.engine.settings.stop_confidence
    )


def test_nothing_binds_waits_for_a_named_reading_that_could_still_decide(fresh):
    """A team that names its readings at the pause: its healthy answers make "none" likely, but one
    reading it named (a doubled batch bought 4%) would still settle a stage, so it is asked."""
    truth = {
        "heldout_score_trend": "rising",
        "passk_vs_base": "above",
        "reward_audit_error_rate": 0.02,
        "contamination_suspected": False,
        "benchmark_ceiling_fraction": 0.4,
        "rollout_wait_fraction": 0.05,
        "zero_advantage_fraction": 0.05,
        "batch_doubling_speedup": 1.04,
    }
    result = simulate(fresh.engine, truth)
    assert "batch_doubling_speedup" in result["asked"]
    assert result["binding_stage"] == "optimization" == fresh.engine.diagnose(truth).binding_stage
    assert result["questions"] <= fresh.engine.settings.max_asked


@pytest.mark.parametrize("said", ["no idea", "Not sure.", "don\u2019t know", "dunno", "n/a"])
def test_everyday_ways_of_saying_dont_know_skip_the_question(said):
    assert control_word(said) == "skip"
