"""Watches across real `serve --http` processes: two
replicas on PostgreSQL, and a crash mid-post.
"""

from __future__ import annotations

import datetime as dt
import json
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from rlmap_bot.state.store import StateStore
from rlmap_bot.watch.model import Watch
from support import runlogs as rl
from support.slackio import is_watch_alert, text_of
from support.standin import TEAM, Slack

BAD = rl.named(rl.phased([("healthy", 300), ("reward_hacking", 200)]), "verl")


def wait_for_log(log, text: str, timeout: float = 60) -> None:
    """Block until ``text`` appears in a replica's log
    (each scheduled check logs its outcome when done).
    """
    deadline = time.monotonic() + timeout
    while text not in log.read_text():
        assert time.monotonic() < deadline, (
            f"{text!r} never appeared in {log.name}: {log.read_text()[-2000:]}"
        )
        time.sleep(0.05)


def watch_alerts(standin, channel: str) -> list:
    out = []
    for call in standin.of("chat.postMessage"):
        meta = call.args.get("metadata")
        meta = json.loads(meta) if isinstance(meta, str) else meta
        if call.args["channel"] == channel and meta and meta.get("event_type") == "rlmap_watch":
            out.append(meta["event_payload"])
    return out


@pytest.fixture
def replicas(serve_env, standin, processes, tmp_path, store_copy):
    """Start bot processes on demand; a Slack sender for each."""

    def launch(name: str, **env):
        proc, url = processes(
            dict(serve_env, RLMAP_DB=store_copy(name), **env), tmp_path / f"{name}.log"
        )
        return proc, Slack(url, standin)

    return launch


def test_a_watch_caught_up_on_two_replicas_alerts_once(pg_url, replicas, standin, tmp_path):
    root = tmp_path / "runs"
    path = rl.write_verl_console(root / "exp" / "train.log", BAD)
    created = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=20)
    state = StateStore(pg_url)
    watch = state.watches.save(
        Watch(
            team=TEAM,
            channel="CWATCH",
            path=str(path.resolve()),
            created_at=created,
            updated_at=created,
        )
    )
    state.close()
    env = {"RLMAP_STATE_URL": pg_url, "RLMAP_RUN_ROOTS": str(root)}
    # Both replicas start together, and each catches up the slot missed at created + 15 minutes.
    with ThreadPoolExecutor(2) as pool:
        started = list(pool.map(lambda name: replicas(name, **env), ["a", "b"]))
    b = started[1][1]
    # Wait until each replica has finished its catch-up
    # (one checked, the other found the slot taken):
    # a `watch now` while a check still runs is rightly
    # answered "a check of it was running already".
    for name in ("a", "b"):
        wait_for_log(tmp_path / f"{name}.log", f"watch {watch.short_id} in CWATCH: ")
    assert [a["condition"] for a in watch_alerts(standin, "CWATCH")] == ["binds:reward"]
    # A check asked for on the other replica finds the condition announced.
    b.command("watch now", channel="CWATCH", respond_as="now-b")
    reply = standin.wait_for("response_url", lambda c: c.target == "now-b", timeout=30)[0].args
    assert "Nothing new to post" in text_of(reply["blocks"]), reply
    assert len(watch_alerts(standin, "CWATCH")) == 1
    state = StateStore(pg_url)
    slots = [r for r in state.watches.ledger(watch.id)]
    assert [(r["condition"], r["kind"], r["status"]) for r in slots] == [
        ("binds:reward", "alert", "posted")
    ]
    state.close()


def test_a_crash_between_posting_and_recording_does_not_repeat_the_alert(
    replicas, standin, tmp_path
):
    root = tmp_path / "runs"
    log = rl.write_verl_console(root / "exp" / "train.log", BAD[:301])
    env = {"RLMAP_RUN_ROOTS": str(root)}
    proc, slack = replicas("one", **env)
    slack.command("watch exp/train.log", respond_as="watch")
    assert (
        "Watching"
        in standin.wait_for("response_url", lambda c: c.target == "watch", timeout=30)[0].args[
            "text"
        ]
    )
    with open(log, "a", encoding="utf-8") as f:
        f.writelines(rl.verl_console_lines(BAD[301:]))
    # Slack stores the alert at once but answers slowly; the bot dies before it can record it.
    standin.holds["chat.postMessage"] = 5
    slack.command("watch now", respond_as="now1")
    standin.wait_for("chat.postMessage", is_watch_alert, timeout=30)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    standin.holds.clear()
    _, slack = replicas("two", **env)
    slack.command("watch now", respond_as="now2")
    reply = standin.wait_for("response_url", lambda c: c.target == "now2", timeout=30)[0].args
    assert "Nothing new to post" in text_of(reply["blocks"]), reply
    assert [a["condition"] for a in watch_alerts(standin, "C1")] == ["binds:reward"], (
        "the alert was posted twice"
    )
    assert standin.of("conversations.history"), "recovery looked for the alert by its metadata"
