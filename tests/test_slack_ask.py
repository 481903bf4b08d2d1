"""Ask over Slack: mentions in threads, DMs, /rlmap ask, cards and buttons, limits and escaping."""

from __future__ import annotations

import json

from support.slackio import blocks_of, text_of
from support.standin import BOT_USER, mention


def test_mention_is_answered_in_its_thread(bot, standin):
    status, _ = bot.slack.event(mention("100.1", "what does the PPO paper say?"))
    assert status == 200
    call = standin.wait_for("chat.postMessage")[0]
    assert call.args["channel"] == "C1" and call.args["thread_ts"] == "100.1"
    blocks = blocks_of(call)
    assert "Proximal Policy Optimization" in text_of(blocks)
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert {"Full entry", "Related"} <= {b["text"]["text"] for b in buttons}
    assert any(b["value"] == "ppo" for b in buttons)
    assert call.args["text"], "a fallback text goes with the blocks"


def test_mention_inside_a_thread_stays_in_that_thread(bot, standin):
    bot.slack.event(mention("101.5", "DreamerV3", thread_ts="101.1"))
    call = standin.wait_for("chat.postMessage")[0]
    assert call.args["thread_ts"] == "101.1"


def test_dm_is_answered_in_the_dm(bot, standin):
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U1",
            "channel": "D1",
            "ts": "200.1",
            "text": "rewrad hacking",
        }
    )
    call = standin.wait_for("chat.postMessage")[0]
    assert call.args["channel"] == "D1" and not call.args.get("thread_ts")
    text = text_of(blocks_of(call))
    assert "rewrad → reward" in text


def test_off_topic_says_what_the_bot_knows(bot, standin):
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U1",
            "channel": "D1",
            "ts": "200.2",
            "text": "where is the coffee machine?",
        }
    )
    text = text_of(blocks_of(standin.wait_for("chat.postMessage")[0]))
    assert "Nothing in the map is relevant" in text and "Reward quality" in text
    # A symptom the catalog's words missed is better sent to a diagnosis than left unanswered.
    assert "About a run of yours? `/rlmap diagnose` asks what you see" in text


def test_slash_ask_is_ephemeral_with_a_share_button(bot, standin):
    status, body = bot.slack.command("ask Hafner's paper")
    assert status == 200 and body == ""
    reply = standin.wait_for("response_url")[0]
    assert reply.args["response_type"] == "ephemeral"
    blocks = reply.args["blocks"]
    assert "Mastering Diverse Domains through World Models" in text_of(blocks)
    share = [
        e
        for b in blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == "answer_share"
    ]
    assert share and share[0]["value"] == "Hafner's paper"
    # Sharing posts the answer in the channel for everyone and removes the private copy.
    bot.slack.click("answer_share", share[0]["value"], user="U7", channel="C1")
    posted = standin.wait_for("chat.postMessage")[0]
    assert posted.args["channel"] == "C1"
    assert "<@U7> asked" in text_of(blocks_of(posted))
    assert standin.wait_for("response_url", lambda c: c.args.get("delete_original") is True)


def test_buttons_show_entry_and_related(bot, standin):
    bot.slack.click("entry_show_0", "dapo", respond_as="show")
    card = standin.wait_for("response_url", lambda c: c.args.get("replace_original") is False)[0]
    text = text_of(card.args["blocks"])
    assert "DAPO" in text and "Key facts" in text
    bot.slack.click("entry_related_0", "reward", respond_as="rel")
    related = standin.wait_for(
        "response_url", lambda c: "Entries linked to" in text_of(c.args.get("blocks", []))
    )[0]
    assert "Scaling Laws for Reward Model Overoptimization" in text_of(related.args["blocks"])


def test_close_matches_offer_did_you_mean(bot, standin):
    assert bot.front.core.ask("MiniMax").close_call
    bot.slack.command("ask MiniMax")
    blocks = standin.wait_for("response_url")[0].args["blocks"]
    text = text_of(blocks)
    assert "Did you mean" in text
    shown = [
        e["value"]
        for b in blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["text"]["text"] == "Full entry"
    ]
    assert set(shown) == {"minimax-m2", "minimax-m3"}


def test_other_bots_and_edits_are_ignored(bot, standin):
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U9",
            "bot_id": "BOTHER",
            "channel": "D1",
            "ts": "300.1",
            "text": "PPO",
        }
    )
    bot.slack.event(
        {
            "type": "message",
            "subtype": "message_changed",
            "channel_type": "im",
            "channel": "D1",
            "ts": "300.2",
            "message": {"text": "PPO"},
        }
    )
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": BOT_USER,
            "channel": "D1",
            "ts": "300.3",
            "text": "PPO",
        }
    )
    # A real question afterwards proves the bot is alive and did not answer the three above.
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U1",
            "channel": "D1",
            "ts": "300.4",
            "text": "DAPO",
        }
    )
    standin.wait_for("chat.postMessage")
    standin.settle()
    assert len(standin.of("chat.postMessage")) == 1


def test_injection_is_escaped(bot, standin):
    # What Slack delivers when someone types these characters
    # literally (entity-encoded), and a real @here.
    evil = (
        "&lt;!channel&gt; <!here> &lt;@U123&gt; &lt;https://evil.example|click me&gt; &amp; friends"
    )
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U1",
            "channel": "D1",
            "ts": "400.1",
            "text": evil,
        }
    )
    call = standin.wait_for("chat.postMessage")[0]
    raw = json.dumps(blocks_of(call)) + call.args["text"]
    for bad in ("<!channel>", "<!here>", "<@U123>", "<https://evil.example"):
        assert bad not in raw
    assert "&lt;!channel&gt;" in raw
    assert not call.args.get("link_names") and not call.args.get("parse")


def test_slack_encoded_text_is_read_once_and_shown_once(bot, standin):
    # Slack sends "kl < 2 & rising" as "kl &lt; 2 &amp;
    # rising"; links and channels arrive as markup.
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U1",
            "channel": "D1",
            "ts": "410.1",
            "text": "is kl &lt; 2 &amp; <https://arxiv.org/abs/2210.10760|the Gao paper> ok in "
            "<#C42|rl-team>?",
        }
    )
    call = standin.wait_for("chat.postMessage")[0]
    raw = json.dumps(blocks_of(call))
    assert "&amp;lt;" not in raw and "&amp;amp;" not in raw, "Slack's entities were escaped twice"
    assert "Scaling Laws for Reward Model Overoptimization" in text_of(blocks_of(call))
