"""Watching any source: what a check says when the source cannot be read, and when it reads again.

Every check goes through the real watch service and state store, with a recording front-end in
place of Slack.  A source that cannot be read (here a log whose path turned into an empty folder,
as a tracker that is down answers nothing) is said once, the watch goes on, and its return is
said once, in reply.  A tracker run this install cannot read is refused in one line.
"""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

from rlmap_bot.errors import UsageError
from rlmap_bot.runs.sources.access import local_access
from rlmap_bot.watch.model import Watch
from rlmap_bot.watch.service import WatchService
from rlmap_bot.wording.posts import alert_title
from support import runlogs as rl
from support.poster import Recorder
from support.watching import Clock, watch_service

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


@pytest.fixture
def service(core, tmp_path) -> WatchService:
    return watch_service(core, tmp_path, Clock(T0))


def _check(service, watch_id: str, poster: Recorder, n: int):
    service.clock.now += dt.timedelta(minutes=15)
    return service.run(watch_id, f"at:{n}", poster)


def test_a_source_that_cannot_be_read_is_said_once_and_its_return_once(service, tmp_path):
    records = rl.named(rl.phased([("healthy", 200)]), "verl")
    log = tmp_path / "train.log"
    rl.write_verl_console(log, [r for r in records if r[0] <= 100])
    watch = service.repo.save(
        Watch(team="T", channel="C", path=str(log), created_at=T0, updated_at=T0)
    )
    poster = Recorder()
    assert _check(service, watch.id, poster, 0).status == "checked"
    kept = tmp_path / "kept.log"
    shutil.move(log, kept)
    log.mkdir()  # the path answers, but with nothing to read
    statuses = [_check(service, watch.id, poster, n).status for n in (1, 2, 3)]
    # Read at the first slot, then after twice the interval (watch/backoff.py).
    assert statuses == ["problem", "waiting", "problem"]
    down = [a for a in poster.posts if "watch:unreadable" in a.conditions]
    assert [alert_title(a) for a in down] == ["Cannot read the run now"]
    assert service.repo.get(watch.id).status == "active", "the watch goes on"
    log.rmdir()
    shutil.move(kept, log)
    with open(log, "a", encoding="utf-8") as f:
        f.writelines(rl.verl_console_lines([r for r in records if r[0] > 100]))
    service.clock.now += dt.timedelta(hours=1)  # past the longest wait
    assert _check(service, watch.id, poster, 4).status == "checked"
    assert _check(service, watch.id, poster, 5).status == "unchanged"
    said = [(a.kind, alert_title(a)) for a in poster.posts if "watch:unreadable" in a.conditions]
    assert said == [("alert", "Cannot read the run now"), ("resolved", "Reading the run again")]
    back = poster.posts[-1] if poster.posts[-1].kind == "resolved" else None
    assert back is not None and back.reply_to == "1.0", [
        (a.kind, alert_title(a), a.reply_to) for a in poster.posts
    ]


def test_a_tracker_run_this_install_cannot_read_is_refused_in_one_line(service):
    with pytest.raises(UsageError) as refused:
        service.resolve("trackio:no-project/no-run", local_access())
    assert "\n" not in str(refused.value) and "trackio:no-project/no-run" in str(refused.value)


def test_slack_refuses_a_tracker_run_it_cannot_read_in_one_line_and_keeps_no_watch(
    standin, built_db, tmp_path
):
    """Over the real Bolt app: `/rlmap watch mlflow:RUN` where this workspace cannot read it."""
    from support.bot import start_bot

    roots = tmp_path / "runs"
    roots.mkdir()
    bot = start_bot(standin, built_db, tmp_path / "state.db", rlmap_run_roots=str(roots))
    try:
        bot.slack.command("watch mlflow:0123abcd", channel="C1", user="U1", respond_as="w1")
        [reply] = standin.wait_for("response_url", lambda c: c.target == "w1", timeout=30)
        text = reply.args["text"]
        assert "mlflow:0123abcd" in text.lower() and "\n" not in text.strip(), text
        assert "Watching" not in text
        assert bot.front.core.state.watches.list() == []
        assert not [c for c in standin.of("chat.postMessage") if c.args["channel"] == "C1"]
    finally:
        bot.stop()
