"""Nothing lost when a replica dies or the database blinks: real `serve --http` processes, kill -9.

Leases and sweeps are short here (RLMAP_CLAIM_LEASE_SECONDS=2, RLMAP_SWEEP_SECONDS=0.3), so a
recovery that takes lease + sweep in production (about 35 s) takes a few seconds.
"""

from __future__ import annotations

import http.client
import json
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import sqlalchemy as sa

from support.http import get, metric
from support.slackio import buttons
from support.standin import BOT_TOKEN, SIGNING_SECRET, Slack
from support.standin import mention as standin_mention
from support.tcpproxy import TcpProxy

FAST = {"RLMAP_CLAIM_LEASE_SECONDS": "2", "RLMAP_SWEEP_SECONDS": "0.3"}
# How long to wait for the answers before calling an event lost: only a guard against a hang.
# How long recovery takes is measured by the load benchmark (benchmarks/load.py).
ANSWER_WAIT_S = 90
# how long the database is unreachable in the outage test (the issue saw 10 s; 3 is as telling)
OUTAGE_S = 3


def mention(i: int) -> dict:
    """A mention in its own channel, answered in its own thread: one reply expected per channel."""
    return standin_mention(f"{1000 + i}.000100", "what is DAPO?", channel=f"CB{i:03d}")


def replies(standin, channel: str) -> list[dict]:
    """The messages the bot posted in a channel, as the channel shows them."""
    with standin._lock:
        return list(standin.messages.get(channel, []))


def send(slack: Slack, event: dict, event_id: str, retry: int = 0, **more) -> int | None:
    """Deliver an event as Slack does; None when the
    replica did not answer (dead, or died mid-request).
    """
    headers = (
        {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_error"} if retry else None
    )
    try:
        return slack.event(event, event_id=event_id, headers=headers, **more)[0]
    except (OSError, http.client.HTTPException):
        return None


def wait_answered(standin, channels: list[str], deadline: float) -> list[str]:
    """Wait until every channel has a reply (or the deadline); return those still unanswered."""
    while True:
        missing = [c for c in channels if not replies(standin, c)]
        if not missing or time.time() > deadline:
            return missing
        time.sleep(0.1)


def test_kill_9_in_a_burst_answers_every_event_exactly_once(
    serve_env, standin, pg_url, processes, tmp_path, store_copy
):
    env = dict(serve_env, RLMAP_STATE_URL=pg_url, **FAST)
    proc_a, url_a = processes(dict(env, RLMAP_DB=store_copy("a")), tmp_path / "a.log")
    _, url_b = processes(dict(env, RLMAP_DB=store_copy("b")), tmp_path / "b.log")
    a, b = Slack(url_a, standin), Slack(url_b, standin)
    total = 60
    events = [(f"EvBurst{i:03d}", mention(i)) for i in range(total)]
    channels = [e["channel"] for _, e in events]
    killed = threading.Event()

    def deliver(i: int) -> None:
        event_id, event = events[i]
        first = a if i % 2 == 0 and not killed.is_set() else b
        if send(first, event, event_id) != 200:
            # Not acked (A died before or while answering): Slack retries it, and reaches B.
            assert send(b, event, event_id, retry=1) == 200

    # Posts are made at once but answered slowly, so A
    # dies with replies posted and not yet recorded,
    # with events acked and waiting for a worker, and with requests in flight.
    standin.holds["chat.postMessage"] = 2.0
    with ThreadPoolExecutor(max_workers=12) as pool:
        futures = [pool.submit(deliver, i) for i in range(total // 2)]
        deadline = time.time() + 20
        while time.time() < deadline:  # A (even channels) is in the middle of its work
            if sum(1 for c in channels[0 : total // 2 : 2] if replies(standin, c)) >= 4:
                break
            time.sleep(0.02)
        proc_a.send_signal(signal.SIGKILL)
        killed.set()
        killed_at = time.time()
        standin.holds.pop("chat.postMessage")
        futures += [pool.submit(deliver, i) for i in range(total // 2, total)]
        for future in futures:
            future.result()
    proc_a.wait(timeout=10)

    missing = wait_answered(standin, channels, killed_at + ANSWER_WAIT_S)
    assert not missing, f"never answered: {missing}"
    recovered_in = time.time() - killed_at
    standin.settle(
        quiet=3.0, timeout=30
    )  # longer than a lease and a sweep: a duplicate would show now
    counts = {c: len(replies(standin, c)) for c in channels}
    assert all(n == 1 for n in counts.values()), {c: n for c, n in counts.items() if n != 1}
    log_b = (tmp_path / "b.log").read_text()
    assert "taken over by the sweeper" in log_b, (
        "A died with work unfinished, so B had to take some over"
    )
    assert "found in the channel by its metadata" in log_b, "A died between posting and recording"
    assert "Traceback" not in log_b
    _, text = get(url_b + "/metrics")
    assert metric(text, "rlmap_events_taken_over_total", kind="event", by="sweeper") >= 1
    print(
        f"kill -9 mid-burst: {total} events answered once each; the last {recovered_in:.1f} s "
        f"after the kill"
    )


def test_kill_9_then_restart_answers_the_unfinished_events_on_sqlite(
    processes, serve_env, standin, tmp_path
):
    env = dict(serve_env, RLMAP_STATE_DB=str(tmp_path / "state.db"), **FAST)
    log = tmp_path / "serve.log"
    proc, url = processes(env, log)
    slack = Slack(url, standin)
    events = [(f"EvRestart{i}", mention(100 + i)) for i in range(8)]
    channels = [e["channel"] for _, e in events]
    standin.holds["chat.postMessage"] = (
        3.0  # Bolt's 5 workers post and wait; 3 events wait for a worker
    )
    for event_id, event in events:
        assert send(slack, event, event_id) == 200  # acked: Slack will not send these again
    deadline = time.time() + 20
    while sum(1 for c in channels if replies(standin, c)) < 5 and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    standin.holds.pop("chat.postMessage")
    assert sum(1 for c in channels if replies(standin, c)) == 5, (
        "five posted before the kill, three not"
    )

    processes(env, log)  # the same process, restarted on the same SQLite file
    missing = wait_answered(standin, channels, time.time() + 30)
    assert not missing, f"never answered after the restart: {missing}"
    standin.settle(quiet=3.0, timeout=30)
    assert {c: len(replies(standin, c)) for c in channels} == {c: 1 for c in channels}
    text = log.read_text()
    assert text.count("found in the channel by its metadata") == 5
    assert text.count("taken over by the sweeper") == 8


def test_a_database_outage_keeps_every_ack_and_logs_one_traceback(
    serve_env, standin, pg_url, processes, tmp_path
):
    url = sa.engine.make_url(pg_url)
    proxy = TcpProxy(url.host or "127.0.0.1", url.port or 5432).start()
    env = dict(
        serve_env,
        RLMAP_STATE_URL=url.set(port=proxy.port).render_as_string(hide_password=False),
        RLMAP_LOG_FORMAT="json",
        **FAST,
    )
    log = tmp_path / "serve.log"
    try:
        _, bot_url = processes(env, log)
        slack = Slack(bot_url, standin)
        assert get(bot_url + "/readyz")[0] == 200
        slack.command(
            "diagnose", channel="CO", respond_as="diag"
        )  # a card to click during the outage
        card = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "CO", count=2)[1]
        skip, card_ts = buttons(card)["diag_skip"], standin.messages["CO"][1]["ts"]
        standin.wait_for("response_url", lambda c: c.target == "diag")
        standin.settle(quiet=0.5)

        proxy.down()  # PostgreSQL is gone for this replica: connections cut, new ones refused
        down_at = time.time()
        statuses, round_ = [], 0
        while time.time() - down_at < OUTAGE_S:  # traffic all through the outage
            for i in range(4):
                statuses.append(send(slack, mention(200 + i), f"EvOutage{i}", retry=round_))
            for name in ("digest list", "diagnose"):
                assert (
                    slack.command(
                        name, channel="CO2", respond_as=f"out-{name.split()[0]}-{round_}"
                    )[0]
                    == 200
                )
            assert (
                slack.click(
                    "diag_skip",
                    skip["value"],
                    channel="CO",
                    message_ts=card_ts,
                    respond_as=f"out-click-{round_}",
                )[0]
                == 200
            )
            assert get(bot_url + "/healthz")[0] == 200, "alive"
            assert get(bot_url + "/readyz")[0] == 503, "but not ready"
            round_ += 1
            time.sleep(0.3)
        _, during = get(bot_url + "/metrics")
        assert (
            metric(during, "rlmap_state_store_up") == 0
            and metric(during, "rlmap_state_store_errors_total") > 0
        )
        # How fast the 500 comes (well inside Slack's 3 s) is measured by benchmarks/load.py.
        assert set(statuses) == {500}, "an event gets 500, so Slack retries it"
        for target in ("out-digest", "out-diagnose", "out-click"):
            told = standin.wait_for(
                "response_url", lambda c, t=target: c.target.startswith(t), count=round_
            )
            assert all("briefly unavailable" in c.args["text"] for c in told), target

        proxy.up()
        deadline = time.time() + 20
        while get(bot_url + "/readyz")[0] != 200 and time.time() < deadline:
            time.sleep(0.1)
        assert get(bot_url + "/readyz")[0] == 200
        assert metric(get(bot_url + "/metrics")[1], "rlmap_state_store_up") == 1
        for i in range(4):  # Slack's retries, after the outage
            assert send(slack, mention(200 + i), f"EvOutage{i}", retry=round_ + 1) == 200
        missing = wait_answered(standin, [f"CB{200 + i:03d}" for i in range(4)], time.time() + 20)
        assert not missing
        # Read before the proxy stops: stopping it cuts
        # the replica's connections while it still runs
        # (its sweeper queries every 0.3 s), which is a second outage, not part of this one.
        text = log.read_text()
    finally:
        proxy.stop()
    assert BOT_TOKEN not in text and SIGNING_SECRET not in text
    lines = [
        json.loads(line) for line in text.splitlines() if line.strip()
    ]  # one JSON object a line
    tracebacks = [r for r in lines if "traceback" in r]
    assert len(tracebacks) == 1, [r["message"] for r in tracebacks]
    assert tracebacks[0]["message"].startswith("state store unavailable since")
    assert sum("state store answering again: outage from" in r["message"] for r in lines) == 1
    per_request = [
        r for r in lines if "state store unavailable" in r["message"] and "traceback" not in r
    ]
    assert len(per_request) >= 7 * round_, "one line per failed request"
    assert not any(r["level"] == "ERROR" for r in lines if r is not tracebacks[0])


def test_many_workspaces_keep_their_acks_through_an_outage(standin, built_db, pg_url):
    from support.bot import start_oauth_bot
    from support.oauth import install

    url = sa.engine.make_url(pg_url)
    proxy = TcpProxy(url.host or "127.0.0.1", url.port or 5432).start()
    bot = start_oauth_bot(
        standin, built_db, url.set(port=proxy.port).render_as_string(hide_password=False)
    )
    try:
        install(bot, "TA")
        bot.slack.command(
            "stages", team="TA", respond_as="warm"
        )  # this replica has served workspace TA
        standin.wait_for("response_url", lambda c: c.target == "warm")
        proxy.down()
        # Bolt authorizes from the installation last read (the store does not answer), so the
        # command keeps its ack and the person hears that the bot is briefly unavailable.
        assert bot.slack.command("digest list", team="TA", respond_as="oauth-out")[0] == 200
        told = standin.wait_for("response_url", lambda c: c.target == "oauth-out")[0]
        assert "briefly unavailable" in told.args["text"]
        assert send(bot.slack, mention(300), "EvOauthOut", team="TA") == 500, (
            "an event: Slack retries it"
        )
        proxy.up()
        assert send(bot.slack, mention(300), "EvOauthOut", retry=1, team="TA") == 200
        assert not wait_answered(standin, ["CB300"], time.time() + 10)
    finally:
        bot.stop()
        proxy.stop()


def test_a_connection_older_than_the_outage_does_not_end_it(caplog, monkeypatch):
    # Seen in CI under load (2026-12-03): a pooled connection answered 13 ms after the outage began,
    # "ended" it, and the next failure began a second outage with a second traceback.
    import logging

    from rlmap_bot.state import health as health_module
    from rlmap_bot.state.health import StateHealth

    monkeypatch.setattr(health_module, "SETTLE_S", 0.2)
    health = StateHealth()
    before = time.time() - 5
    with caplog.at_level(logging.WARNING, logger="rlmap_bot.state"):
        health.failed(ConnectionError("connection refused"))
        health.ok(connected_at=before)  # a straggler: opened before the outage
        health.ok()  # a success on no known connection, at once: not yet proof
        assert health.down_since is not None
        health.failed(ConnectionError("server closed the connection unexpectedly"))
        assert sum("unavailable since" in r.getMessage() for r in caplog.records) == 1, (
            "one outage, one traceback"
        )
        health.ok(connected_at=time.time())  # a connection opened since: the store is back
        assert health.down_since is None
        health.failed(ConnectionError("refused again"))
        time.sleep(0.25)
        health.ok()  # nothing failed for SETTLE_S: any success is a recovery
    assert health.down_since is None
    assert sum("answering again" in r.getMessage() for r in caplog.records) == 2
    assert sum("unavailable since" in r.getMessage() for r in caplog.records) == 2
