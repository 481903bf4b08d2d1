"""Two real `serve --http` processes sharing one PostgreSQL state store."""

from __future__ import annotations

import datetime as dt
import signal

import pytest

from rlmap_bot.state.models import Subscription
from rlmap_bot.state.store import StateStore
from support.slackio import Card
from support.standin import TEAM, Slack, mention


@pytest.fixture
def replicas(serve_env, standin, pg_url, processes, tmp_path, store_copy):
    """Start replica processes on one PostgreSQL on demand; a Slack sender for each."""

    def launch(name: str):
        env = dict(serve_env, RLMAP_STATE_URL=pg_url, RLMAP_DB=store_copy(name))
        proc, url = processes(env, tmp_path / f"{name}.log")
        return proc, Slack(url, standin)

    return launch


def test_the_same_event_sent_to_both_replicas_is_answered_once(replicas, standin):
    _, a = replicas("a")
    _, b = replicas("b")
    event = mention("50.1")
    assert a.event(event, event_id="EvBoth")[0] == 200
    assert b.event(event, event_id="EvBoth", headers={"X-Slack-Retry-Num": "1"})[0] == 200
    standin.wait_for("chat.postMessage")
    standin.settle(quiet=1.0)
    assert len(standin.of("chat.postMessage")) == 1


def test_a_digest_slot_fired_on_both_replicas_posts_once(replicas, standin, pg_url):
    now = dt.datetime.now(dt.UTC)
    due = now - dt.timedelta(hours=1)
    state = StateStore(pg_url)
    state.subscriptions.save(
        Subscription(
            team=TEAM,
            channel="CDIGEST",
            frequency="daily",
            time=due.strftime("%H:%M"),
            timezone="UTC",
            created_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
            last_run_at=now - dt.timedelta(days=2),
        )
    )
    state.close()
    replicas("a")  # each replica catches the missed slot up at start
    replicas("b")
    standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "CDIGEST")
    standin.settle(quiet=1.5)
    digests = [c for c in standin.of("chat.postMessage") if c.args["channel"] == "CDIGEST"]
    assert len(digests) == 1 and digests[0].args["metadata"]["event_type"] == "rlmap_digest"


def test_a_diagnosis_continues_across_replicas_and_survives_one_dying(replicas, standin):
    proc_a, a = replicas("a")
    _, b = replicas("b")
    a.command("diagnose", channel="C7")
    standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "C7", count=2)
    thread, ts = standin.messages["C7"][0]["ts"], standin.messages["C7"][1]["ts"]
    holder = type("Bot", (), {"slack": b, "front": None})()
    card = Card(holder, standin, "C7", ts, thread)
    first = card.signal
    card.click("diag_skip")  # on replica B
    second = card.signal
    assert second != first
    holder.slack = a
    card.click("diag_skip")  # back on replica A
    third = card.signal
    proc_a.send_signal(signal.SIGKILL)  # A dies mid-flow
    proc_a.wait(timeout=10)
    holder.slack = b
    assert card.signal == third
    card.click("diag_back")
    assert card.signal == second
    card.click("diag_stop")
    assert card.signal is None
