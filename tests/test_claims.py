"""Claims, leases, takeovers and recorded replies, on
the real Bolt app over HTTP against the stand-in.

A replica that died mid-work is played by rewriting its claim the way the crash would have
left it (still working, lease run out, owned by a replica that is gone), then sweeping or
sending Slack's retry: what is tested is the takeover that follows.
"""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest

from rlmap_bot.crypto import TokenCipher, new_key
from rlmap_bot.state.tables import event_claims
from support.http import get, metric
from support.slackio import start
from support.standin import BOT_USER, TEAM, mention

LEASE = dt.timedelta(seconds=30)


@pytest.fixture
def bot(bot):
    """The running bot without its background sweeper: these
    tests sweep by hand, at the moment they choose.
    """
    bot.front.claims.stop()
    return bot


def slack_body(event: dict, event_id: str) -> dict:
    """The request body as Slack sent it (what a claim stores, less the legacy token)."""
    return {
        "team_id": TEAM,
        "api_app_id": "A1",
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        "event": event,
    }


def crashed(
    bot, key: str, body: dict | None = None, replies: dict | None = None, attempts: int = 1
) -> None:
    """Leave the claim as a replica killed mid-work would:
    unfinished, its lease run out, its owner gone.
    """
    values = dict(
        status="working",
        owner="gone:1:dead",
        attempts=attempts,
        lease_until="2000-01-01T00:00:00+00:00",
        finished_at=None,
        replies=json.dumps(replies or {}),
    )
    if body is not None:
        values["body"] = bot.front.claims.seal(body)  # as the claim kept it: sealed
    with bot.front.core.state.engine.begin() as conn:
        assert (
            conn.execute(
                event_claims.update().where(event_claims.c.key == key).values(**values)
            ).rowcount
            == 1
        )


def finished(bot, key: str, timeout: float = 10) -> str:
    """Wait for the claim to be finished (the replay's
    listener runs on Bolt's thread pool); its status.
    """
    deadline = time.time() + timeout
    while True:
        status = bot.front.core.state.events.get(key)["status"]
        if status != "working" or time.time() > deadline:
            return status
        time.sleep(0.02)


def posts_in(standin, channel: str) -> list[dict]:
    return [m for m in standin.messages.get(channel, [])]


def test_the_claim_lifecycle_on_each_engine(state_url):
    from rlmap_bot.state.events import GaveUp
    from rlmap_bot.state.store import StateStore

    store = StateStore(state_url)
    events = store.events
    sealed = TokenCipher.from_setting(new_key()).seal('{"x": 1}')
    with pytest.raises(ValueError, match="sealed"):
        events.claim("event:E0", "event", "T1", '{"x": 1}', "A", LEASE)
    outcome, claim = events.claim("event:E1", "event", "T1", sealed, "A", dt.timedelta(seconds=-1))
    assert outcome == "new" and claim.attempts == 1 and not claim.taken_over
    assert events.renew(["event:E1"], "B", LEASE) == 0, "only the owner renews"
    assert events.expired() == ["event:E1"]
    outcome, taken = events.claim("event:E1", "event", "T1", sealed, "B", LEASE)
    assert (
        outcome == "takeover"
        and taken.owner == "B"
        and taken.attempts == 2
        and taken.body == sealed
    )
    assert events.claim("event:E1", "event", "T1", None, "C", LEASE)[0] == "busy", "B's is live"
    assert events.record_replies("event:E1", "A", {"1": {}}) is False, (
        "A lost it: it records nothing"
    )
    assert events.record_replies(
        "event:E1", "B", {"1": {"method": "chat.postMessage", "ts": "1.1"}}
    )
    assert events.finish("event:E1", "A") is False and events.finish("event:E1", "B") is True
    row = events.get("event:E1")
    assert row["status"] == "done" and row["body"] is None, "the payload is dropped once answered"
    assert events.claim("event:E1", "event", "T1", None, "C", LEASE)[0] == "done"
    assert events.unfinished()[0] == 0
    events.claim("event:E2", "event", "T1", None, "A", dt.timedelta(seconds=-1))
    for owner in ("B", "C"):
        assert (
            events.take_over("event:E2", owner, dt.timedelta(seconds=-1), max_attempts=3)
            is not None
        )
    try:
        events.take_over("event:E2", "D", LEASE, max_attempts=3)
        raise AssertionError("a fourth attempt must be refused")
    except GaveUp:
        pass
    assert events.get("event:E2")["status"] == "failed"
    assert events.forget(dt.datetime.now(dt.UTC) + dt.timedelta(days=1)) == 2
    store.close()


def test_a_takeover_does_not_repost_a_recorded_reply(bot, standin):
    event = mention("10.1", channel="CR")
    bot.slack.event(event, event_id="EvRecorded")
    standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "CR")
    assert (
        finished(bot, "event:EvRecorded") == "done"
    )  # the first run finished before the crash is staged
    row = bot.front.core.state.events.get("event:EvRecorded")
    assert (
        row["status"] == "done" and json.loads(row["replies"])["1"]["method"] == "chat.postMessage"
    )
    # Died after recording its reply, before marking the claim done.
    crashed(
        bot, "event:EvRecorded", slack_body(event, "EvRecorded"), replies=json.loads(row["replies"])
    )
    assert bot.front.claims.sweep() == 1
    assert finished(bot, "event:EvRecorded") == "done"
    standin.settle()
    assert len(posts_in(standin, "CR")) == 1


def test_a_takeover_finds_an_unrecorded_post_by_its_metadata(bot, standin):
    event = mention("11.1", channel="CM")
    bot.slack.event(event, event_id="EvUnrecorded")
    post = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "CM")[0]
    assert post.args["metadata"] == {
        "event_type": "rlmap_reply",
        "event_payload": {"claim": "event:EvUnrecorded", "n": 1},
    }
    assert (
        finished(bot, "event:EvUnrecorded") == "done"
    )  # the first run finished before the crash is staged
    crashed(
        bot, "event:EvUnrecorded", slack_body(event, "EvUnrecorded")
    )  # died between posting and recording
    assert bot.front.claims.sweep() == 1
    assert finished(bot, "event:EvUnrecorded") == "done"
    standin.settle()
    assert len(posts_in(standin, "CM")) == 1
    looked = standin.of("conversations.replies")
    assert looked and looked[-1].args["ts"] == "11.1" and looked[-1].args["channel"] == "CM"


def test_a_takeover_posts_what_was_never_posted(bot, standin):
    event = mention("12.1", channel="CN")
    bot.slack.event(event, event_id="EvNeverPosted")
    standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "CN")
    assert (
        finished(bot, "event:EvNeverPosted") == "done"
    )  # the first run finished before the crash is staged
    standin.messages["CN"].clear()  # died before its post reached Slack
    crashed(bot, "event:EvNeverPosted", slack_body(event, "EvNeverPosted"))
    assert bot.front.claims.sweep() == 1
    assert finished(bot, "event:EvNeverPosted") == "done"
    standin.settle()
    assert len(posts_in(standin, "CN")) == 1


def test_slacks_retry_takes_over_an_expired_claim_and_waits_for_a_live_one(http_bot, standin):
    _, before = get(http_bot.url + "/metrics")
    event = mention("13.1", channel="CT")
    crashed_body = slack_body(event, "EvRetryTakes")
    with (
        http_bot.front.core.state.engine.begin() as conn
    ):  # claimed by a replica that died before acking
        conn.execute(
            event_claims.insert().values(
                key="event:EvRetryTakes",
                kind="event",
                team=TEAM,
                status="working",
                owner="gone:1:dead",
                attempts=1,
                lease_until="2000-01-01T00:00:00+00:00",
                body=http_bot.front.claims.seal(crashed_body),
                replies="{}",
                claimed_at=dt.datetime.now(dt.UTC).isoformat(timespec="microseconds"),
            )
        )
    assert (
        http_bot.slack.event(event, event_id="EvRetryTakes", headers={"X-Slack-Retry-Num": "1"})[0]
        == 200
    )
    assert finished(http_bot, "event:EvRetryTakes") == "done"
    # A live lease held by another replica: the retry is acked, and nothing is posted by this one.
    http_bot.front.core.state.events.claim(
        "event:EvBusy", "event", TEAM, None, "alive:2:other", LEASE
    )
    assert (
        http_bot.slack.event(
            mention("13.2", channel="CU"), event_id="EvBusy", headers={"X-Slack-Retry-Num": "1"}
        )[0]
        == 200
    )
    standin.settle()
    assert len(posts_in(standin, "CT")) == 1 and posts_in(standin, "CU") == []
    _, after = get(http_bot.url + "/metrics")
    taken = ("rlmap_events_taken_over_total", {"kind": "event", "by": "retry"})
    assert metric(after, taken[0], **taken[1]) - metric(before, taken[0], **taken[1]) == 1
    dedup = ("rlmap_events_deduplicated_total", {"kind": "event"})
    assert metric(after, dedup[0], **dedup[1]) - metric(before, dedup[0], **dedup[1]) == 1


def test_a_claim_that_keeps_killing_replicas_is_given_up(bot, standin):
    event = mention("14.1", channel="CP")
    bot.slack.event(event, event_id="EvPoison")
    standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "CP")
    assert (
        finished(bot, "event:EvPoison") == "done"
    )  # the first run finished before the crash is staged
    standin.messages["CP"].clear()
    crashed(bot, "event:EvPoison", slack_body(event, "EvPoison"), attempts=3)
    assert bot.front.claims.sweep() == 0
    standin.settle()
    assert (
        posts_in(standin, "CP") == []
        and bot.front.core.state.events.get("event:EvPoison")["status"] == "failed"
    )


def test_an_event_nobody_listens_for_is_finished_not_swept_forever(bot, standin):
    assert (
        bot.slack.event(
            {"type": "reaction_added", "user": "U1", "reaction": "eyes"}, event_id="EvUnheard"
        )[0]
        == 200
    )
    assert finished(bot, "event:EvUnheard") == "done"


def test_a_typed_answer_handled_again_after_a_crash_is_applied_once(bot, standin):
    card = start(bot, standin, channel="CD")
    reply = {
        "type": "message",
        "channel_type": "channel",
        "user": "U1",
        "channel": "CD",
        "ts": f"{card.thread}7",
        "thread_ts": card.thread,
        "text": "?",
    }
    before = card.updates()
    bot.slack.event(reply, event_id="EvTyped")
    card._wait_update(before)
    asked = card.signal
    session = bot.front.core.state.sessions.find(TEAM, "CD", card.thread)
    answered = list(session.history)
    standin.settle()
    crashed(
        bot, "event:EvTyped", slack_body(reply, "EvTyped")
    )  # died after saving the move, before finishing
    before = card.updates()
    assert bot.front.claims.sweep() == 1
    card._wait_update(before)  # the card is redrawn as it is now...
    assert card.signal == asked
    assert bot.front.core.state.sessions.find(TEAM, "CD", card.thread).history == answered, (
        "...not moved again"
    )


def test_clicking_a_stale_card_redraws_the_current_question(bot, standin):
    card = start(bot, standin, channel="CS")
    stale = card.blocks
    stale_skip = card.buttons["diag_skip"]["value"]
    card.click("diag_skip")
    current = card.signal
    # The card update after that click was lost (the replica
    # died): the channel still shows the old question.
    next(m for m in standin.messages["CS"] if m["ts"] == card.ts)["blocks"] = stale
    before = card.updates()
    bot.slack.click(
        "diag_skip",
        stale_skip,
        channel="CS",
        message_ts=card.ts,
        thread_ts=card.thread,
        respond_as="old",
    )
    card._wait_update(before)
    assert card.signal == current, "redrawn at the current question, not moved on"
    standin.settle()
    assert [c for c in standin.of("response_url") if c.target == "old"] == [], (
        "no 'already answered' note"
    )


def lost(bot, key: str, kind: str, body: dict) -> None:
    """A request claimed and acked by a replica that died
    before handling it (Slack never sends it again).
    """
    with bot.front.core.state.engine.begin() as conn:
        conn.execute(
            event_claims.insert().values(
                key=key,
                kind=kind,
                team=TEAM,
                status="working",
                owner="gone:1:dead",
                attempts=1,
                lease_until="2000-01-01T00:00:00+00:00",
                body=bot.front.claims.seal(body),
                replies="{}",
                claimed_at=dt.datetime.now(dt.UTC).isoformat(timespec="microseconds"),
            )
        )


def test_a_click_lost_with_its_replica_is_finished_by_the_sweeper(bot, standin):
    card = start(bot, standin, channel="CL")
    asked = card.signal
    click = bot.slack.click_payload(
        "diag_skip",
        card.buttons["diag_skip"]["value"],
        channel="CL",
        message_ts=card.ts,
        thread_ts=card.thread,
    )
    lost(bot, f"action:{click['trigger_id']}", "action", click)
    before = card.updates()
    assert bot.front.claims.sweep() == 1
    card._wait_update(before)
    assert card.signal != asked, "the click was applied"
    assert finished(bot, f"action:{click['trigger_id']}") == "done"
    history = bot.front.core.state.sessions.find(TEAM, "CL", card.thread).history
    assert history == [asked], "once"


def test_a_slash_command_lost_with_its_replica_is_answered_by_the_sweeper(bot, standin):
    command = {
        "team_id": TEAM,
        "team_domain": "test",
        "channel_id": "CC",
        "channel_name": "general",
        "user_id": "U1",
        "user_name": "someone",
        "command": "/rlmap",
        "text": "stages",
        "api_app_id": "A1",
        "response_url": standin.response_url("lost-command"),
        "trigger_id": "9.9.lost",
    }
    lost(bot, "command:9.9.lost", "command", command)
    assert bot.front.claims.sweep() == 1
    answer = standin.wait_for("response_url", lambda c: c.target == "lost-command")
    assert "Environments" in json.dumps(answer[0].args)
    assert finished(bot, "command:9.9.lost") == "done"
    standin.settle()
    assert len([c for c in standin.of("response_url") if c.target == "lost-command"]) == 1


def test_a_kept_request_that_does_not_open_is_given_up_not_replayed_in_clear(bot, standin, caplog):
    """A body written in clear into the table (not by the bot), or sealed under a key no replica
    has now: the sweeper gives it up with one line, never runs it as it is."""
    command = {
        "team_id": TEAM,
        "channel_id": "CC",
        "user_id": "U1",
        "command": "/rlmap",
        "text": "stages",
        "response_url": standin.response_url("in-clear"),
        "trigger_id": "9.9.clear",
    }
    lost(bot, "command:9.9.clear", "command", command)
    with bot.front.core.state.engine.begin() as conn:
        conn.execute(
            event_claims.update()
            .where(event_claims.c.key == "command:9.9.clear")
            .values(body=json.dumps(command))
        )
    assert bot.front.claims.sweep() == 1
    assert finished(bot, "command:9.9.clear") == "failed"
    assert "the kept request of workspace T0001 does not open" in caplog.text
    assert "stored in clear" in caplog.text and "given up" in caplog.text
    standin.settle()
    assert [c for c in standin.of("response_url") if c.target == "in-clear"] == []
