"""What Slack requires: signatures, fast acks, retries answered once, 429s, limits, hints."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

from support.bot import start_bot
from support.http import stop_server
from support.slackio import text_of
from support.standin import SIGNING_SECRET, mention, post, sign


def test_forged_unsigned_and_stale_requests_are_refused(http_bot, standin):
    body = json.dumps(
        {
            "type": "event_callback",
            "team_id": "T0001",
            "event_id": "EvForged",
            "event": mention("1.1"),
        }
    )
    forged = sign(body, secret="not-the-secret")
    assert post(http_bot.slack.url, body, "application/json", forged)[0] == 401
    assert post(http_bot.slack.url, body, "application/json")[0] == 401
    tampered = sign(body)
    assert (
        post(http_bot.slack.url, body.replace("DAPO", "PPO"), "application/json", tampered)[0]
        == 401
    )
    stale = int(time.time()) - 301
    assert http_bot.slack.event(mention("1.2"), timestamp=stale)[0] == 401
    assert http_bot.slack.command("ask PPO", timestamp=stale)[0] == 401
    standin.settle()
    assert standin.of("chat.postMessage") == [] and standin.of("response_url") == []
    # A correctly signed request still works, so the refusals above were about the signatures.
    assert http_bot.slack.event(mention("1.3"))[0] == 200
    standin.wait_for("chat.postMessage")


def test_retries_are_answered_once(bot, standin):
    for attempt in range(3):
        headers = (
            {"X-Slack-Retry-Num": str(attempt), "X-Slack-Retry-Reason": "http_timeout"}
            if attempt
            else {}
        )
        status, _ = bot.slack.event(mention("2.1"), event_id="EvRetried", headers=headers)
        assert status == 200
    standin.wait_for("chat.postMessage")
    standin.settle()
    assert len(standin.of("chat.postMessage")) == 1


def test_retry_after_a_restart_is_still_answered_once(standin, built_db, tmp_path):
    state = tmp_path / "state.db"
    first = start_bot(standin, built_db, state)
    first.slack.event(mention("3.1"), event_id="EvAcrossRestart")
    standin.wait_for("chat.postMessage")
    first.stop()
    second = start_bot(standin, built_db, state)
    try:
        assert (
            second.slack.event(
                mention("3.1"), event_id="EvAcrossRestart", headers={"X-Slack-Retry-Num": "1"}
            )[0]
            == 200
        )
        second.slack.event(mention("3.2", "PPO"), event_id="EvNew")
        standin.wait_for("chat.postMessage", count=2)
        standin.settle()
        assert [c.args["thread_ts"] for c in standin.of("chat.postMessage")] == ["3.1", "3.2"]
    finally:
        second.stop()


def test_ack_comes_before_the_work(http_bot, standin):
    standin.delays["response_url"] = 1.5
    done = {}

    def send():
        done["status"] = http_bot.slack.command("ask PPO")[0]
        done["at"] = time.time()

    thread = threading.Thread(target=send)
    thread.start()
    thread.join(timeout=10)
    assert done["status"] == 200
    reply = standin.wait_for("response_url")[0]
    # Slack got its 200 before the (slow) reply was even delivered.
    assert done["at"] < reply.at


def test_rate_limited_calls_are_retried_not_lost(bot, standin):
    standin.rate_limit_next("chat.postMessage")
    bot.slack.event(mention("4.1"))
    calls = standin.wait_for("chat.postMessage", count=2, timeout=15)
    assert [c.args["thread_ts"] for c in calls] == ["4.1", "4.1"]
    assert calls[1].at - calls[0].at >= 0.9, "the retry waited for Retry-After"


def test_huge_entry_stays_within_block_kit_limits(standin, knowledge_copy, tmp_path):
    facts = "\n".join(f'  - "Fact {i} ' + "x" * 480 + '"' for i in range(120))
    (knowledge_copy / "papers" / "zz-huge.yaml").write_text(
        "id: zz-huge\nkind: paper\ntitle: "
        + "Huge " * 60
        + "\nsummary: "
        + "long " * 900
        + "\nverification: verified\nstages: [reward]\nadded: 2026-12-01\nfacts:\n"
        + facts
        + "\n"
    )
    from rlmap_bot.core import Core
    from rlmap_bot.settings import Settings
    from rlmap_bot.slack.app import SlackFrontEnd
    from rlmap_bot.slack.http import make_server
    from support.standin import BOT_TOKEN, Slack

    core = Core(knowledge_copy, tmp_path / "kb.db", state_url=tmp_path / "state.db")
    front = SlackFrontEnd(
        core,
        Settings(
            slack_bot_token=BOT_TOKEN,
            slack_signing_secret=SIGNING_SECRET,
            slack_api_url=standin.base_url,
        ),
    )
    server = make_server(front.app, "127.0.0.1", 0, threads=2)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    slack = Slack(f"http://127.0.0.1:{server.effective_port}", standin)
    try:
        slack.command("show zz-huge", respond_as="huge")
        slack.click("entry_more", "zz-huge", respond_as="more")
        slack.event(
            {
                "type": "message",
                "channel_type": "im",
                "user": "U1",
                "channel": "D1",
                "ts": "5.1",
                "text": "Huge Huge Huge",
            }
        )
        replies = standin.wait_for("response_url", count=2)
        posted = standin.wait_for("chat.postMessage")[0]
        for blocks in [r.args["blocks"] for r in replies] + [
            json.loads(posted.args["blocks"])
            if isinstance(posted.args["blocks"], str)
            else posted.args["blocks"]
        ]:
            assert standin.block_problem(blocks) is None
            assert len(blocks) <= 50
        # The two replies come back in either order (the
        # command and the click are handled on two threads).
        shown = next(r for r in replies if r.target == "huge")
        assert "Show more" in text_of(shown.args["blocks"])
        assert all(c.args.get("blocks") for c in replies), (
            "nothing was rejected or sent without blocks"
        )
    finally:
        front.app.listener_runner.listener_executor.shutdown(
            wait=True
        )  # replies still being sent finish first
        stop_server(server, thread)


def test_cannot_post_gives_a_hint_not_silence(bot, standin):
    standin.fail_next("chat.postMessage", "not_in_channel")
    bot.slack.command("diagnose", channel="CPRIVATE")
    hint = standin.wait_for("response_url")[0]
    assert hint.args["response_type"] == "ephemeral" and "/invite" in hint.args["text"]
    standin.fail_next("chat.postMessage", "is_archived")
    bot.slack.event(mention("6.1"))
    eph = standin.wait_for("chat.postEphemeral")[0]
    assert eph.args["user"] == "U1" and "archived" in eph.args["text"]


def test_any_slash_text_works_even_the_word_payload(http_bot, standin):
    status, _ = http_bot.slack.command("ask what is in the payload of a PPO update?")
    assert status == 200
    reply = standin.wait_for("response_url")[0]
    assert "Proximal Policy Optimization" in text_of(reply.args["blocks"])


def test_malformed_commands_get_usage(bot, standin):
    for text, expect in [
        ("show", "`/rlmap show` needs ID"),
        ("ask", "`/rlmap ask` needs QUESTION"),
        ("diagnoze", "did you mean `/rlmap diagnose`"),
        ("digest", "needs one of subscribe"),
        ("show no-such-entry", "No entry with id"),
    ]:
        standin.calls.clear()
        bot.slack.command(text)
        reply = standin.wait_for("response_url")[0]
        assert expect in reply.args["text"], (text, reply.args["text"])
        assert reply.args["response_type"] == "ephemeral"


def test_command_words_starting_a_question_are_a_question(bot, standin):
    bot.slack.command("help me with reward hacking", respond_as="help-q")
    bot.slack.command("show me the PPO paper", respond_as="show-q")
    replies = {
        r.target: text_of(r.args.get("blocks", []))
        for r in standin.wait_for("response_url", count=2)
    }
    assert "Reward" in replies["help-q"] and "Proximal Policy Optimization" in replies["show-q"]


def test_help_stages_show(bot, standin):
    bot.slack.command("help", respond_as="help")
    bot.slack.command("stages", respond_as="stages")
    bot.slack.command("show reward", respond_as="show")
    bot.slack.command("", respond_as="empty")
    replies = standin.wait_for("response_url", count=4)
    texts = {r.target: text_of(r.args.get("blocks", [])) for r in replies}
    assert "/rlmap diagnose" in texts["help"] and "/rlmap diagnose" in texts["empty"]
    assert "Rollout generation" in texts["stages"]
    assert "Signs it is the binding constraint" in texts["show"]


def test_reload_is_for_admins(bot, standin):
    bot.slack.command("reload", user="U1")
    assert "Only the admins" in standin.wait_for("response_url")[0].args["text"]
    standin.calls.clear()
    bot.slack.command("reload", user="UADMIN")
    assert standin.wait_for("response_url")[0].args["text"].startswith("Reloaded:")


def test_app_home_is_published(bot, standin):
    bot.slack.command("diagnose", user="U5", channel="C9")
    standin.wait_for("chat.postMessage", count=2)
    bot.slack.event({"type": "app_home_opened", "user": "U5", "channel": "D5", "tab": "home"})
    call = standin.wait_for("views.publish")[0]
    assert call.args["user_id"] == "U5"
    view = (
        call.args["view"] if isinstance(call.args["view"], dict) else json.loads(call.args["view"])
    )
    assert view["type"] == "home"
    text = text_of(view["blocks"])
    for part in (
        "Environments",
        "Rollout generation",
        "Reward quality",
        "Optimization",
        "Evaluation",
        "Newest in the catalog",
        "Your open diagnoses",
        "<#C9>",
        "/rlmap diagnose",
    ):
        assert part in text
    # A button on App Home opens a modal (there is no response_url there).
    bot.slack.click("entry_show_1", "environments", container="view")
    modal = standin.wait_for("views.open")[0]
    assert "Environments" in json.dumps(modal.args["view"])


def test_health_endpoint(http_bot):
    with urllib.request.urlopen(http_bot.url + "/healthz", timeout=5) as response:
        data = json.loads(response.read())
    assert response.status == 200 and data["ok"] is True


def test_an_unexpected_failure_is_not_silent(bot, standin):
    standin.fail_next("chat.postMessage", "fatal_error")
    bot.slack.command("diagnose", respond_as="boom")
    reply = standin.wait_for("response_url", lambda c: c.target == "boom")[0]
    assert "Something went wrong on my side" in reply.args["text"]
