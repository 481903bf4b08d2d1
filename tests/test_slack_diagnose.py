"""A whole diagnosis in a Slack thread: buttons, typed numbers, the card updated in place, the verdict."""

from __future__ import annotations

import json
import threading

from support.bot import start_bot
from support.slackio import blocks, start, text_of
from support.standin import BOT_USER

TRUTH = {  # a run whose reward model is being over-optimised
    "proxy_reward_trend": "rising", "heldout_score_trend": "falling", "reward_audit_error_rate": 0.3,
    "kl_to_reference": 40, "length_growth": 2.0, "entropy_trend": "stable",
}


def test_slash_diagnose_opens_a_thread_with_the_first_question(bot, standin):
    card = start(bot, standin)
    root = standin.of("chat.postMessage")[0]
    assert root.args["channel"] == "C1" and not root.args.get("thread_ts")
    assert "started a diagnosis" in text_of(blocks(root))
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
    assert "Evidence" in text and ("Check next" in text or "Read" in text)
    read = [b for b in card.buttons.values() if b["action_id"].startswith("entry_show")]
    assert "reward-model-overoptimization" in {b["value"] for b in read}
    # One card, updated in place: no new messages in the thread apart from it.
    thread_posts = [c for c in standin.of("chat.postMessage") if c.args.get("thread_ts") == card.thread]
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
    bot.slack.click("diag_skip", json.dumps({"s": "nope", "q": first, "v": ""}), channel=card.channel,
                    message_ts=card.ts, respond_as="stale")
    assert "no longer exists" in standin.wait_for("response_url", lambda c: c.target == "stale")[0].args["text"]


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
    bot.slack.event({"type": "app_mention", "user": "U3", "channel": "C3", "ts": "900.1",
                     "text": f"<@{BOT_USER}> diagnose"})
    call = standin.wait_for("chat.postMessage")[0]
    assert call.args["thread_ts"] == "900.1"
    assert "Diagnosis · question 1" in json.dumps(blocks(call), ensure_ascii=False)
    session = bot.front.core.state.sessions.find("T0001", "C3", "900.1")
    assert session is not None and session.user == "U3"


def test_a_reply_while_the_first_card_is_being_posted_updates_that_card(bot, standin):
    # Slack is slow to answer the card's post: a reply typed as soon as the card shows must not make a second one.
    standin.holds["chat.postMessage"] = 1.0
    bot.slack.command("diagnose", channel="C7", respond_as="slow")
    card_call = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "C7" and c.args.get("thread_ts"))[0]
    thread = card_call.args["thread_ts"]
    bot.slack.event({"type": "message", "channel_type": "channel", "user": "U1", "channel": "C7", "ts": f"{thread}5",
                     "thread_ts": thread, "text": "?"})
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
    card.type("?", ts=older, expect_update=False)  # the earlier one, late: it must not skip question 2
    told = standin.wait_for("chat.postEphemeral", lambda c: "arrived after a later one" in c.args["text"])[0]
    assert told.args["user"] == "U1" and told.args["thread_ts"] == card.thread
    assert card.signal == second and card.updates() == 1
    session = bot.front.core.state.sessions.find("T0001", card.channel, card.thread)
    assert session.skipped == [first] and session.current == second


def test_replies_typed_in_a_burst_are_applied_in_the_order_they_were_written(bot, standin):
    card = start(bot, standin)
    sent = [card.reply_ts() for _ in range(6)]
    posts = [threading.Thread(target=bot.slack.event, args=({
        "type": "message", "channel_type": "channel", "user": "U1", "channel": card.channel, "ts": ts,
        "thread_ts": card.thread, "text": "?"},)) for ts in sent]
    for post in posts:
        post.start()
    for post in posts:
        post.join()
    standin.settle()
    session = bot.front.core.state.sessions.find("T0001", card.channel, card.thread)
    applied = [move.rsplit(":", 1)[1] for move in session.moves]
    assert applied and applied == sorted(applied, key=float), "a reply was applied after a later one"
    assert len(session.skipped) == len(applied), "each applied reply skipped exactly one question"
    refused = [c for c in standin.of("chat.postEphemeral") if c.args.get("thread_ts") == card.thread]
    assert len(applied) + len(refused) == len(sent), "every reply was either applied or its writer told why not"
