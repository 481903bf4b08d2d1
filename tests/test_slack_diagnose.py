"""A whole diagnosis in a Slack thread: buttons, typed
numbers, the card updated in place, the verdict.
"""

from __future__ import annotations

import json
import threading
import time

from support.bot import start_bot
from support.slackio import blocks_of, start, text_of
from support.standin import mention

TRUTH = {  # a run whose reward model is being over-optimised
    "proxy_reward_trend": "rising",
    "heldout_score_trend": "falling",
    "reward_audit_error_rate": 0.3,
    "kl_to_reference": 40,
    "length_growth": 2.0,
    "entropy_trend": "stable",
}


def test_slash_diagnose_opens_a_thread_with_the_first_question(bot, standin):
    card = start(bot, standin)
    root = standin.of("chat.postMessage")[0]
    assert root.args["channel"] == "C1" and not root.args.get("thread_ts")
    assert "started a diagnosis" in text_of(blocks_of(root))
    assert card.thread == standin.messages["C1"][0]["ts"]
    assert {"diag_skip", "diag_stop"} <= set(card.buttons)
    assert "Diagnosis · question 1" in json.dumps(card.blocks, ensure_ascii=False)
    assert "answer in the thread" in standin.wait_for("response_url")[0].args["text"]


def test_full_diagnosis_by_clicks_and_typed_numbers(bot, standin):
    card = start(bot, standin)
    seen = []
    for _ in range(15):
        if card.signal is None:
            break
        seen.append(card.signal)
        card.answer(TRUTH)
    assert card.signal is None, f"still asking after {seen}"
    text = text_of(card.blocks)
    assert "Verdict: Reward quality binds" in json.dumps(card.blocks, ensure_ascii=False)
    # three lines, a few readings, and the rest behind Details (tests/test_slack_details.py)
    assert "*Do this next:* " in text and "details_show" in card.buttons
    read = [b for b in card.buttons.values() if b["action_id"].startswith("entry_show")]
    assert "reward-model-overoptimization" in {b["value"] for b in read}
    # One card, updated in place: no new messages in the thread apart from it.
    thread_posts = [
        c for c in standin.of("chat.postMessage") if c.args.get("thread_ts") == card.thread
    ]
    assert len(thread_posts) == 1 and card.updates() == len(seen)


def test_typed_values_bad_values_back_and_dont_know(bot, standin):
    card = start(bot, standin)
    first = card.signal
    card.type("certainly not a number", expect_update=False)
    hint = standin.wait_for("chat.postEphemeral")[0]
    assert hint.args["user"] == "U1" and hint.args["thread_ts"] == card.thread
    assert card.signal == first and card.updates() == 0
    card.type("?")
    second = card.signal
    assert second != first and "skipped" in json.dumps(card.blocks, ensure_ascii=False)
    card.click("diag_back")
    assert card.signal == first
    card.click("diag_stop")
    assert card.signal is None and "Verdict" in json.dumps(card.blocks, ensure_ascii=False)
    # A click on the finished card's old buttons is refused politely.
    bot.slack.click(
        "diag_skip",
        json.dumps({"s": "nope", "q": first, "v": ""}),
        channel=card.channel,
        message_ts=card.ts,
        respond_as="stale",
    )
    assert (
        "no longer exists"
        in standin.wait_for("response_url", lambda c: c.target == "stale")[0].args["text"]
    )


def test_several_diagnoses_at_once_in_different_threads(bot, standin):
    a = start(bot, standin, channel="C1", user="U1")
    b = start(bot, standin, channel="C2", user="U2")
    a.click("diag_skip")
    b.click("diag_stop", user="U2")
    assert b.signal is None and a.signal is not None
    sessions = bot.front.core.state.sessions.list(status=None)
    assert {(s.channel, s.status) for s in sessions} == {("C1", "open"), ("C2", "stopped")}


def test_diagnosis_survives_a_restart(standin, built_db, tmp_path):
    state = tmp_path / "state.db"
    first = start_bot(standin, built_db, state)
    card = start(first, standin)
    card.answer(TRUTH)
    asked = card.signal
    first.stop()
    second = start_bot(standin, built_db, state)
    try:
        card.bot = second
        assert card.signal == asked
        for _ in range(15):
            if card.signal is None:
                break
            card.answer(TRUTH)
        assert "Verdict: Reward quality binds" in json.dumps(card.blocks, ensure_ascii=False)
    finally:
        second.stop()


def test_diagnose_in_a_mention_runs_under_the_mention(bot, standin):
    bot.slack.event(mention("900.1", "diagnose", channel="C3", user="U3"))
    call = standin.wait_for("chat.postMessage")[0]
    assert call.args["thread_ts"] == "900.1"
    assert "Diagnosis · question 1" in json.dumps(blocks_of(call), ensure_ascii=False)
    session = bot.front.core.state.sessions.find("T0001", "C3", "900.1")
    assert session is not None and session.user == "U3"


def test_a_reply_while_the_first_card_is_being_posted_updates_that_card(bot, standin):
    # Slack is slow to answer the card's post: a reply typed
    # as soon as the card shows must not make a second one.
    standin.holds["chat.postMessage"] = 1.0
    bot.slack.command("diagnose", channel="C7", respond_as="slow")
    card_call = standin.wait_for(
        "chat.postMessage", lambda c: c.args["channel"] == "C7" and c.args.get("thread_ts")
    )[0]
    thread = card_call.args["thread_ts"]
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "channel",
            "user": "U1",
            "channel": "C7",
            "ts": f"{thread}5",
            "thread_ts": thread,
            "text": "?",
        }
    )
    card_ts = next(m["ts"] for m in standin.messages["C7"] if m.get("thread_ts") == thread)
    standin.wait_for("chat.update", lambda c: c.args["ts"] == card_ts, timeout=15)
    standin.holds.clear()
    standin.settle()
    cards = [c for c in standin.of("chat.postMessage") if c.args.get("thread_ts") == thread]
    assert len(cards) == 1, "the reply made a second card"


def test_a_reply_overtaken_by_a_later_one_is_refused_not_misapplied(bot, standin):
    card = start(bot, standin)
    first = card.signal
    older, newer = card.reply_ts(), card.reply_ts()
    card.type("?", ts=newer)  # the later message reaches the bot first and skips question 1
    second = card.signal
    assert second != first
    card.type(
        "?", ts=older, expect_update=False
    )  # the earlier one, late: it must not skip question 2
    told = standin.wait_for(
        "chat.postEphemeral", lambda c: "arrived after a later one" in c.args["text"]
    )[0]
    assert told.args["user"] == "U1" and told.args["thread_ts"] == card.thread
    assert card.signal == second and card.updates() == 1
    session = bot.front.core.state.sessions.find("T0001", card.channel, card.thread)
    assert session.skipped == [first] and session.current == second


def test_replies_typed_in_a_burst_are_applied_in_the_order_they_were_written(bot, standin):
    card = start(bot, standin)
    sent = [card.reply_ts() for _ in range(4)]  # the opening question and three readings
    posts = [
        threading.Thread(
            target=bot.slack.event,
            args=(
                {
                    "type": "message",
                    "channel_type": "channel",
                    "user": "U1",
                    "channel": card.channel,
                    "ts": ts,
                    "thread_ts": card.thread,
                    "text": "?",
                },
            ),
        )
        for ts in sent
    ]
    for post in posts:
        post.start()
    for post in posts:
        post.join()

    def accounted() -> tuple:
        """The session and the refusals once every reply is applied or refused (the bot works
        after it acks, so a quiet moment on the Web API is not yet the end of the work)."""
        found = bot.front.core.state.sessions.find("T0001", card.channel, card.thread)
        told = [
            c for c in standin.of("chat.postEphemeral") if c.args.get("thread_ts") == card.thread
        ]
        return found, told, len(found.moves) + len(told) >= len(sent)

    deadline = time.time() + 30
    session, refused, done = accounted()
    while not done and time.time() < deadline:
        time.sleep(0.1)
        session, refused, done = accounted()
    standin.settle()
    applied = [move.rsplit(":", 1)[1] for move in session.moves]
    assert applied and applied == sorted(applied, key=float), (
        "a reply was applied after a later one"
    )
    assert len(session.skipped) == len(applied), "each applied reply skipped exactly one question"
    assert len(applied) + len(refused) == len(sent), (
        "every reply was either applied or its writer told why not"
    )


# -- "Diagnose a run": from an answer that missed, one
#  click to the guided diagnosis -----------------------
SYMPTOM = (
    "the model learned to rewrite the unit tests so that every check comes back green"  # a guess
)


def _diagnose_button(call_blocks: list) -> dict:
    found = [
        e
        for b in call_blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == "diagnose_start"
    ]
    assert len(found) == 1, "one 'Diagnose a run' button under an answer that missed"
    assert found[0]["text"]["text"] == "Diagnose a run"
    return found[0]


def test_a_private_answer_that_missed_opens_a_diagnosis_thread_and_stays(bot, standin):
    bot.slack.command("ask where is the coffee machine", channel="C4", respond_as="asked")
    answer = standin.wait_for("response_url", lambda c: c.target == "asked")[0]
    assert "Nothing in the map is relevant" in text_of(answer.args["blocks"])
    button = _diagnose_button(answer.args["blocks"])
    # The click comes from an ephemeral message: Slack sends
    # no `message`, so there is nothing to thread under.
    bot.slack.click(
        button["action_id"],
        button["value"],
        user="U4",
        channel="C4",
        respond_as="clicked",
        ephemeral=True,
    )
    root, card = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "C4", count=2)[
        :2
    ]
    assert "started a diagnosis" in text_of(blocks_of(root)) and not root.args.get("thread_ts")
    assert card.args["thread_ts"] == standin.messages["C4"][0]["ts"]
    assert "Diagnosis · question 1" in json.dumps(blocks_of(card), ensure_ascii=False)
    told = standin.wait_for("response_url", lambda c: c.target == "clicked")[0]
    assert "answer in the thread" in told.args["text"]
    session = bot.front.core.state.sessions.find("T0001", "C4", card.args["thread_ts"])
    assert session is not None and session.user == "U4"
    # A second click before any answer is the same request: pointed to the first, no second thread.
    bot.slack.click(
        button["action_id"],
        button["value"],
        user="U4",
        channel="C4",
        respond_as="clicked",
        ephemeral=True,
    )
    again = standin.wait_for("response_url", lambda c: c.target == "clicked", count=2)[1]
    assert "already waiting for its first answer" in again.args["text"]
    standin.settle()
    assert (
        len(standin.of("chat.postMessage")) == 2
        and len(bot.front.core.flow.open_sessions(team="T0001")) == 1
    )
    for reply in standin.of("response_url"):
        if reply.target == "clicked":  # the answer the person was reading stays on screen
            assert reply.args.get("replace_original") is False and not reply.args.get(
                "delete_original"
            ), reply.args


def test_a_guess_in_a_mention_thread_starts_the_diagnosis_in_that_thread(bot, standin):
    bot.slack.event(mention("950.1", f"{SYMPTOM}", channel="C5", user="U5"))
    answer = standin.wait_for("chat.postMessage")[0]
    assert (
        "Not sure this is what you mean" in text_of(blocks_of(answer))
        and answer.args["thread_ts"] == "950.1"
    )
    button = _diagnose_button(blocks_of(answer))
    answer_ts = next(m["ts"] for m in standin.messages["C5"] if m.get("thread_ts") == "950.1")
    bot.slack.click(
        button["action_id"],
        button["value"],
        user="U5",
        channel="C5",
        message_ts=answer_ts,
        thread_ts="950.1",
    )
    card = standin.wait_for("chat.postMessage", count=2)[1]
    assert (
        card.args["channel"] == "C5" and card.args["thread_ts"] == "950.1"
    )  # no new root: the same thread
    assert "Diagnosis · question 1" in json.dumps(blocks_of(card), ensure_ascii=False)
    assert bot.front.core.state.sessions.find("T0001", "C5", "950.1") is not None
    # The thread's next reply answers the first question
    # ("?": don't know), as in any diagnosis thread.
    first = bot.front.core.state.sessions.find("T0001", "C5", "950.1").current
    # A teammate's click on the same answer before anyone answered: pointed to the open card.
    bot.slack.click(
        button["action_id"],
        button["value"],
        user="U9",
        channel="C5",
        message_ts=answer_ts,
        thread_ts="950.1",
        respond_as="teammate",
    )
    assert (
        "already waiting"
        in standin.wait_for("response_url", lambda c: c.target == "teammate")[0].args["text"]
    )
    standin.settle()
    assert len(standin.of("chat.postMessage")) == 2
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "channel",
            "user": "U5",
            "channel": "C5",
            "ts": "950.9",
            "thread_ts": "950.1",
            "text": "?",
        }
    )
    update = standin.wait_for("chat.update", lambda c: c.args["channel"] == "C5")[0]
    assert "question 2" in update.args["text"]
    assert bot.front.core.state.sessions.find("T0001", "C5", "950.1").current not in (None, first)


def test_a_dm_answer_that_missed_starts_the_diagnosis_under_that_answer(bot, standin):
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U6",
            "channel": "D6",
            "ts": "960.1",
            "text": "where is the coffee machine",
        }
    )
    answer = standin.wait_for("chat.postMessage")[0]
    button = _diagnose_button(blocks_of(answer))
    answer_ts = standin.messages["D6"][0]["ts"]
    bot.slack.click(
        button["action_id"], button["value"], user="U6", channel="D6", message_ts=answer_ts
    )
    card = standin.wait_for("chat.postMessage", count=2)[1]
    assert card.args["channel"] == "D6" and card.args["thread_ts"] == answer_ts
    assert bot.front.core.state.sessions.find("T0001", "D6", answer_ts) is not None


def test_a_confident_answer_offers_no_diagnosis(bot, standin):
    bot.slack.command("ask the PPO paper", respond_as="sure")
    answer = standin.wait_for("response_url", lambda c: c.target == "sure")[0]
    assert "Proximal Policy Optimization" in text_of(answer.args["blocks"])
    assert not any(
        e["action_id"] == "diagnose_start"
        for b in answer.args["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
    )


def test_a_diagnose_click_from_a_view_starts_nothing(bot, standin):
    # Answers are never shown in App Home or a modal; a
    # click from one (an old or forged payload) has no
    # channel to open a thread in, and must not leave a session nobody can see.
    bot.slack.click("diagnose_start", "diagnose", user="U8", container="view")
    standin.settle()
    assert not standin.of("chat.postMessage") and not bot.front.core.flow.open_sessions(user="U8")


def test_dont_know_four_times_in_a_thread_shows_what_to_measure_and_keeps_the_question(
    bot, standin
):
    card = start(bot, standin)
    for _ in range(4):  # the opening question ("None of these"), then three readings
        card.click("diag_skip")
    shown = json.dumps(card.blocks, ensure_ascii=False)
    assert "These would tell most" in shown and "1. *" in shown and "3. *" in shown
    assert card.signal is not None and "diag_skip" in card.buttons, "the question stays answerable"
    assert "Verdict" not in shown
    session = bot.front.core.state.sessions.list(status=None)[0]
    assert session.status == "open" and len(session.history) == 4


def test_readings_ticked_across_the_card_s_groups_are_asked_next_and_only_they(bot, standin):
    """At the pause the card lists every reading still worth asking as tick boxes, ten to a group
    (Slack's limit); boxes ticked in the first and the last group are both read by Continue."""
    card = start(bot, standin)
    for _ in range(4):  # the opening question ("None of these"), then three readings
        card.click("diag_skip")
    assert card.signal == "readings" and "These would tell most" in text_of(card.blocks)
    groups = [card.buttons[a] for a in ("diag_pick", "diag_pick_2", "diag_pick_3")]
    assert [len(g["options"]) for g in groups][:2] == [10, 10] and groups[2]["options"]
    first, last = groups[0]["options"][0]["value"], groups[2]["options"][-1]["value"]
    ticked = {
        "diag_pick_block": {
            "diag_pick": {"type": "checkboxes", "selected_options": [{"value": first}]},
            "diag_pick_3": {"type": "checkboxes", "selected_options": [{"value": last}]},
        }
    }
    before = card.updates()
    bot.slack.click(
        "diag_choose",
        card.buttons["diag_choose"]["value"],
        channel=card.channel,
        message_ts=card.ts,
        thread_ts=card.thread,
        state=ticked,
    )
    card._wait_update(before)
    assert card.signal == first
    card.click("diag_skip")
    assert card.signal == last
    card.click("diag_skip")
    assert card.signal is None and "Verdict" in json.dumps(card.blocks, ensure_ascii=False)


def test_a_ticked_complaint_answers_what_it_says_on_the_card(bot, standin):
    """Ticking "Training reward rises, the eval does not" answers the reward's trend: the card
    never asks it, asks the held-out score with only the two choices the complaint left (its
    second button is "falling", not the signal's second preset "flat"), and the verdict says
    what it took from what the team said."""
    card = start(bot, standin)
    assert card.signal == "complaint"
    before = card.updates()
    ticked = {
        "diag_pick_block": {
            "diag_pick": {
                "type": "checkboxes",
                "selected_options": [{"value": "reward_up_eval_flat"}],
            }
        }
    }
    bot.slack.click(
        "diag_choose",
        card.buttons["diag_choose"]["value"],
        channel=card.channel,
        message_ts=card.ts,
        thread_ts=card.thread,
        state=ticked,
    )
    card._wait_update(before)
    assert card.signal == "heldout_score_trend"
    offered = {a: b["text"]["text"] for a, b in card.buttons.items() if a.startswith("diag_preset")}
    assert offered == {"diag_preset_0": "flat", "diag_preset_1": "falling"}
    card.click("diag_preset_1")
    session = bot.front.core.state.sessions.list(status=None)[0]
    assert session.answers["heldout_score_trend"] == "falling"
    seen = []
    for _ in range(12):
        if card.signal is None:
            break
        seen.append(card.signal)
        card.answer(TRUTH)
    assert card.signal is None and "proxy_reward_trend" not in seen, seen
    shown = json.dumps(card.blocks, ensure_ascii=False)
    assert "Verdict: Reward quality binds" in shown
    assert "(1 from what you said)" in shown, "the card says the verdict rests on it"
