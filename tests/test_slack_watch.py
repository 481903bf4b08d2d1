"""Watching a run over Slack, against the stand-in: phases
of a real log, alerts once, restarts, quiet, refusals.

Checks are fired the way the scheduler fires them (``front.watches.fire(watch, due)``)
with a controlled clock, and the log grows between them by appending real lines.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from rlmap_bot.watch.schedule import last_slot
from support import runlogs as rl
from support.slackio import blocks_of, details_of, is_watch_alert, slash, text_of
from support.watching import Clock, launch, tick, watch_posts

HACKING = rl.named(
    rl.phased([("healthy", 300), ("reward_hacking", 300), ("recovery", 400)]), "verl"
)


class GrowingLog:
    """A verl console log on disk that a test appends to, phase by phase, as a trainer would."""

    def __init__(self, path: Path, records: list, upto: int):
        self.path, self.records, self.written = path, records, upto
        rl.write_verl_console(path, [r for r in records if r[0] <= upto])

    def grow(self, upto: int) -> int:
        lines = rl.verl_console_lines([r for r in self.records if self.written < r[0] <= upto])
        with open(self.path, "a", encoding="utf-8") as f:
            f.writelines(lines)
        self.written = upto
        return sum(len(line.encode()) for line in lines)


@pytest.fixture
def roots(tmp_path) -> Path:
    root = tmp_path / "runs"
    root.mkdir()
    return root


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def wbot(standin, built_db, tmp_path, roots, clock):
    bot = launch(standin, built_db, tmp_path / "state.db", roots, clock)
    yield bot
    bot.stop()


def test_a_run_that_goes_bad_alerts_once_then_resolves_once(
    standin, built_db, tmp_path, roots, clock
):
    log = GrowingLog(roots / "exp42" / "train.log", HACKING, 150)
    bot = launch(standin, built_db, tmp_path / "state.db", roots, clock)
    try:
        reply = slash(bot, standin, "watch exp42/train.log")
        assert reply["response_type"] == "ephemeral"
        assert "Watching `" in reply["text"] and "every 15 minutes" in reply["text"], reply["text"]
        # 150 healthy steps: nothing read points at a stage, and no percentage is given for it
        assert "nothing read points at a stage" in reply["text"], reply["text"]
        announced = standin.wait_for(
            "chat.postMessage", lambda c: "is watching" in c.args.get("text", "")
        )[0]
        assert announced.args["channel"] == "C1" and "<@U1>" in announced.args["text"]
        [watch] = bot.front.core.state.watches.list()
        assert (
            watch.path == str((roots / "exp42" / "train.log").resolve())
            and watch.interval_minutes == 15
        )

        # Healthy: nothing to say.
        log.grow(300)
        result = tick(bot, clock)
        assert result.status == "checked" and result.new_steps == 150 and result.alerts == []
        assert watch_posts(standin) == []

        # Reward hacking sets in: exactly one alert, naming the stage, with evidence and the chart.
        log.grow(450)
        due = clock.advance(15)
        posted_before = REGISTRY.get_sample_value("rlmap_watch_posts_total") or 0
        result = bot.front.watches.fire(watch.id, last_slot(watch, due))
        [(alert, meta)] = watch_posts(standin)
        assert REGISTRY.get_sample_value("rlmap_watch_posts_total") == posted_before + 1, (
            "counted in /metrics"
        )
        assert (
            meta["watch_id"] == watch.id
            and meta["condition"] == "binds:reward"
            and meta["kind"] == "alert"
        )
        text = text_of(blocks_of(alert))
        assert "Reward quality started to bind" in text and "*Do this next:* " in text
        # every reading and where in the logs it came from, behind the card's Details button
        details = details_of(bot, standin, alert)
        assert "Verdict: Reward quality binds" in details
        assert (
            "proxy_reward_trend" in details
            and "heldout_score_trend" in details
            and "critic/score/mean" in details
        )
        assert "Check next" in details
        alert_ts = next(m["ts"] for m in standin.messages["C1"] if is_watch_alert(m))
        complete = standin.wait_for("files.completeUploadExternal", timeout=30)[0]
        upload = next(u for u in standin.uploads.values() if u["completed"])
        assert upload["data"][:8] == b"\x89PNG\r\n\x1a\n"
        assert complete.args["channel_id"] == "C1" and upload["completed"]["thread_ts"] == alert_ts

        # The same slot again, a check with nothing new, a check with more of the same: nothing new.
        assert bot.front.watches.fire(watch.id, last_slot(watch, due)).status == "duplicate"
        assert tick(bot, clock).status == "unchanged"
        log.grow(600)
        again = tick(bot, clock)
        assert (
            again.status == "checked"
            and again.alerts == []
            and again.open_conditions == ["binds:reward"]
        )
        assert len(watch_posts(standin)) == 1
    finally:
        bot.stop()

    # A restart: the new process finds the condition
    # announced, on a scheduled check and on `watch now`.
    bot = launch(standin, built_db, tmp_path / "state.db", roots, clock)
    try:
        log.grow(650)
        assert tick(bot, clock).alerts == []
        reply = slash(bot, standin, "watch now")
        assert "Nothing new to post" in text_of(
            reply["blocks"]
        ) and "Reward quality binds" in text_of(reply["blocks"])
        assert len(watch_posts(standin)) == 1

        # Recovery: one check that no longer names the stage is not enough; the second is.
        log.grow(800)
        assert tick(bot, clock).alerts == []
        log.grow(900)
        resolved = tick(bot, clock)
        assert [a.kind for a in resolved.alerts] == ["resolved"]
        posts = watch_posts(standin)
        assert len(posts) == 2
        note, meta = posts[-1]
        assert meta["kind"] == "resolved" and meta["condition"] == "binds:reward"
        alert_ts = next(m["ts"] for m in standin.messages["C1"] if is_watch_alert(m))
        assert (
            note.args["thread_ts"] == alert_ts
            and str(note.args.get("reply_broadcast")).lower() == "true"
        )
        assert "Reward quality no longer binds" in note.args["text"]
        log.grow(1000)
        assert tick(bot, clock).alerts == [] and len(watch_posts(standin)) == 2

        listing = text_of(slash(bot, standin, "watch list")["blocks"])
        assert (
            watch.short_id in listing
            and "exp42/train.log" in listing
            and "every 15 minutes" in listing
        )
        # the run is healthy again: the last verdict, as the channel read it, names no stage
        assert "last check" in listing and "nothing read points at a stage" in listing

        # unwatch by id: the watch and everything kept for
        # it go; the scheduler's next tick finds nothing.
        reply = slash(bot, standin, f"unwatch {watch.short_id}")
        assert reply["response_type"] == "in_channel" and "stopped watching" in reply["text"]
        assert bot.front.core.state.watches.get(watch.id) is None
        assert bot.front.core.state.watches.ledger(watch.id) == []
        assert bot.front.watches.fire(watch.id, clock.advance(15)) is None
        assert "watches no run" in text_of(slash(bot, standin, "watch list")["blocks"])
    finally:
        bot.stop()


def test_quiet_watch_posts_a_nan_fault_and_its_recovery_only(wbot, standin, roots, clock):
    records = rl.named(
        rl.phased([("healthy", 300), ("reward_hacking", 200), ("nan", 10), ("healthy", 100)]),
        "verl",
    )
    log = GrowingLog(roots / "q" / "run.log", records, 300)
    reply = slash(wbot, standin, "watch q/run.log every 30m quiet")
    assert "every 30 minutes, faults only" in reply["text"]
    log.grow(500)  # reward quality binds: a quiet watch keeps it to itself
    result = tick(wbot, clock, 30)
    assert (
        result.alerts == [] and result.withheld == ["binds:reward"] and watch_posts(standin) == []
    )
    log.grow(510)  # NaN loss and inf gradient norm
    result = tick(wbot, clock, 30)
    [(alert, meta)] = watch_posts(standin)
    assert meta["condition"] == "fault:nan" and meta["conditions"] == ["fault:nan"]
    text = text_of(blocks_of(alert))
    assert "NaN/inf" in text and "from step 501" in text and "actor/pg_loss" in text
    details = details_of(wbot, standin, alert)
    assert "Optimization" in details and "loss_divergence" in details
    log.grow(540)  # 30 finite steps: not yet over
    assert tick(wbot, clock, 30).alerts == [] and len(watch_posts(standin)) == 1
    log.grow(570)  # 60 finite steps since the last NaN
    result = tick(wbot, clock, 30)
    assert [a.kind for a in result.alerts] == ["resolved"]
    note, meta = watch_posts(standin)[-1]
    assert meta["condition"] == "fault:nan" and "NaN/inf over" in note.args["text"]
    assert len(watch_posts(standin)) == 2
    assert not any("Reward" in c.args.get("text", "") for c, _ in watch_posts(standin))


def test_a_tie_between_two_stages_is_posted_once_naming_both(wbot, standin, roots, clock):
    """Issue 17: two stages with strong evidence used
    to keep the watch silent; now it says so, once.
    """
    records = rl.named(rl.phased([("healthy", 300), ("saturated_collapse", 300)]), "verl")
    log = GrowingLog(roots / "tie" / "run.log", records, 300)
    slash(wbot, standin, "watch tie/run.log")
    assert tick(wbot, clock).alerts == [] and watch_posts(standin) == []
    log.grow(
        450
    )  # the pool is solved and the entropy collapses: environments and optimization both
    result = tick(wbot, clock)
    [(alert, meta)] = watch_posts(standin)
    assert meta["kind"] == "alert" and meta["condition"] == "tie:environments+optimization"
    text = text_of(blocks_of(alert))
    assert "Optimization and Environments both have strong evidence" in text, text
    assert "no single stage does" in text
    details = details_of(wbot, standin, alert)
    assert "entropy_trend" in details and "task_repeat_epochs" in details
    assert result.open_conditions == ["tie:environments+optimization"]
    # The tie settles on one of its own stages: already named, not posted again; what is new is
    # the entropy's collapse, now down to a quarter of its level: a fault, named with its step.
    log.grow(600)
    settled = tick(wbot, clock)
    assert [a.conditions for a in settled.alerts] == [["fault:shift"]]
    assert settled.open_conditions == ["binds:optimization", "fault:shift"]
    assert len(watch_posts(standin)) == 2


def test_paths_outside_the_roots_are_refused_and_leave_no_watch(wbot, standin, roots, tmp_path):
    secret = rl.write_verl_console(tmp_path / "outside" / "secret.log", HACKING[:50])
    GrowingLog(roots / "exp" / "ok.log", HACKING, 50)
    os.symlink(secret, roots / "exp" / "link.log")
    linked = roots / "linked"
    linked.mkdir()
    os.symlink(tmp_path / "outside", linked / "elsewhere")
    replies = {}
    for text in (
        str(secret),
        "../outside/secret.log",
        "exp/../../outside/secret.log",
        "exp/link.log",
        str(roots / "exp" / "link.log"),
        "linked",
        "/etc/passwd",
        "/no/such/dir/x.log",
    ):
        replies[text] = slash(wbot, standin, f"watch {text}")["text"]
        assert "RLMAP_RUN_ROOTS" in replies[text], (text, replies[text])
        assert "Watching" not in replies[text]
    # The refusal never reveals where a link leads, nor whether a path outside exists.
    for via_link in ("exp/link.log", "linked"):
        assert "secret" not in replies[via_link] and "elsewhere" not in replies[via_link], replies[
            via_link
        ]
    shape = lambda t, p: replies[t].replace(p, "PATH")  # noqa: E731
    assert shape("/etc/passwd", "/etc/passwd") == shape("/no/such/dir/x.log", "/no/such/dir/x.log")
    assert wbot.front.core.state.watches.list() == []
    assert not [c for c in standin.of("chat.postMessage") if c.args["channel"] == "C1"], (
        "nothing was announced"
    )
    # Inside the roots: a missing file is named as such, a file that is no log says so.
    assert (
        "No such file or folder under RLMAP_RUN_ROOTS: exp/nope.log"
        in slash(wbot, standin, "watch exp/nope.log")["text"]
    )
    (roots / "notes.txt").write_text("buy more GPUs\n")
    assert "not a training log" in slash(wbot, standin, "watch notes.txt")["text"]
    assert wbot.front.core.state.watches.list() == []


def test_without_roots_watching_is_off_and_says_how_to_turn_it_on(
    standin, built_db, tmp_path, clock
):
    bot = launch(standin, built_db, tmp_path / "state.db", None, clock)
    try:
        reply = slash(bot, standin, "watch runs/train.log")["text"]
        assert "Watching runs is off" in reply and "RLMAP_RUN_ROOTS" in reply
        assert bot.front.core.state.watches.list() == []
        assert bot.front.watches.start_scheduler() == [] and bot.front.watches.scheduler is None
    finally:
        bot.stop()


def test_a_log_that_stops_growing_or_disappears_says_so_once_then_pauses(
    wbot, standin, roots, clock
):
    log = GrowingLog(roots / "s" / "train.log", HACKING, 200)
    slash(wbot, standin, "watch s/train.log every 20m")
    [watch] = wbot.front.core.state.watches.list()
    assert tick(wbot, clock, 20).status == "unchanged"
    assert tick(wbot, clock, 20).status == "unchanged"
    assert watch_posts(standin) == []
    paused = tick(
        wbot, clock, 20
    )  # 60 minutes without a new step (RLMAP_WATCH_STALL_MINUTES' default)
    assert paused.status == "paused" and [a.kind for a in paused.alerts] == ["paused"]
    [(note, meta)] = watch_posts(standin)
    assert meta["condition"] == "watch:stalled" and "stopped growing" in note.args["text"]
    assert f"/rlmap watch {watch.path}` resumes it" in text_of(blocks_of(note))
    assert wbot.front.core.state.watches.get(watch.id).status == "paused"
    assert tick(wbot, clock, 20).status == "paused" and len(watch_posts(standin)) == 1
    assert "paused" in text_of(slash(wbot, standin, "watch list")["blocks"])

    # Watching it again resumes it, with a fresh stall clock; then the file goes away.
    reply = slash(wbot, standin, "watch s/train.log every 20m")
    assert "Watching" in reply["text"]
    assert standin.wait_for(
        "chat.postMessage", lambda c: "resumed watching" in c.args.get("text", "")
    )
    log.grow(260)
    assert tick(wbot, clock, 20).status == "checked"
    log.path.unlink()
    gone = tick(wbot, clock, 20)
    assert gone.status == "paused"
    note, meta = watch_posts(standin)[-1]
    assert meta["condition"] == "watch:gone" and "is gone" in note.args["text"]
    assert tick(wbot, clock, 20).status == "paused" and len(watch_posts(standin)) == 2


def test_app_home_lists_the_watches_of_the_users_channels(wbot, standin, roots):
    GrowingLog(roots / "a.log", HACKING, 100)
    GrowingLog(roots / "b.log", HACKING, 100)
    slash(wbot, standin, "watch a.log", channel="CMINE")
    slash(wbot, standin, "watch b.log", channel="CTHEIRS")
    standin.user_channels["U5"] = ["CMINE", "COTHER"]
    wbot.slack.event({"type": "app_home_opened", "user": "U5", "channel": "D5", "tab": "home"})
    call = standin.wait_for("views.publish", lambda c: c.args.get("user_id") == "U5")[0]
    view = call.args["view"]
    view = json.loads(view) if isinstance(view, str) else view
    text = text_of(view["blocks"])
    assert "Watched runs in your channels" in text and "<#CMINE>" in text and "a.log" in text
    assert "b.log" not in text and "CTHEIRS" not in text
    assert standin.of("users.conversations")[0].args["user"] == "U5"


def test_the_scheduler_checks_on_its_own(wbot, standin, roots):
    wbot.front.watches.clock = lambda: dt.datetime.now(dt.UTC)
    log = GrowingLog(roots / "live" / "train.log", HACKING, 300)
    slash(wbot, standin, "watch live/train.log every 5m")
    [watch] = wbot.front.core.state.watches.list()
    watches = wbot.front.watches
    assert watches.start_scheduler() == [], "checked at `watch` time: nothing to catch up"
    try:
        assert watches.scheduler.next_run_time("watch", watch.id) is not None
        log.grow(450)
        watches.scheduler.run_soon(
            "watch", watch.id, dt.datetime.now(dt.UTC) + dt.timedelta(milliseconds=200)
        )
        standin.wait_for("chat.postMessage", is_watch_alert, timeout=30)
        assert [m["condition"] for _, m in watch_posts(standin)] == ["binds:reward"]
        # unwatch drops the job at once (the command tells the scheduler)
        slash(wbot, standin, f"unwatch {watch.path}")
        assert watches.scheduler.next_run_time("watch", watch.id) is None
    finally:
        watches.stop_scheduler(wait=True)
