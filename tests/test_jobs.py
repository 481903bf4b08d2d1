"""The one scheduler for timed work: a new kind registers
in a few lines and is kept in step with its store.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass

from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from rlmap_bot.errors import UnavailableError
from rlmap_bot.jobs import Scheduler, slot_key

UTC = dt.UTC


@dataclass(frozen=True)
class Scan:
    id: str
    hour: int = 6
    paused: bool = False


class WeeklyScan:
    """A third kind, as the arXiv scan would be: weekly, Mondays at ``hour``."""

    name = "scan"
    misfire_grace = dt.timedelta(hours=12)

    def __init__(self, items: list[Scan]):
        self.items, self.fired, self.event = items, [], threading.Event()
        self.broken: set[str] = set()

    def load(self):
        if self.items is None:
            raise UnavailableError("state store down")
        return list(self.items)

    def trigger(self, item):
        return None if item.paused else CronTrigger(day_of_week="mon", hour=item.hour, timezone=UTC)

    def due(self, item):
        return dt.datetime(2026, 12, 7, item.hour, tzinfo=UTC)

    def missed(self, items, now):
        return {
            i.id: dt.datetime(2026, 11, 30, i.hour, tzinfo=UTC) for i in items if i.id == "late"
        }

    def fire(self, item_id, due):
        self.fired.append((item_id, slot_key(due)))
        self.event.set()
        if item_id in self.broken:
            raise RuntimeError("this scan fails")


def soon() -> dt.datetime:
    return dt.datetime.now(UTC) + dt.timedelta(milliseconds=200)


def test_a_new_kind_registers_catches_up_and_fires_with_its_slot():
    kind = WeeklyScan([Scan("late"), Scan("weekly")])
    jobs = Scheduler()
    try:
        assert jobs.register(kind) == ["late"]
        assert kind.event.wait(10), "the catch-up never ran"
        assert kind.fired == [("late", "at:2026-11-30T06:00:00+00:00")]
        assert jobs.next_run_time("scan", "weekly").weekday() == 0
        kind.event.clear()
        jobs.run_soon("scan", "weekly", soon())
        assert kind.event.wait(10), "the scheduler never fired"
        assert kind.fired[-1] == ("weekly", "at:2026-12-07T06:00:00+00:00")
    finally:
        jobs.shutdown(wait=True)


def test_a_failing_job_is_logged_and_the_next_still_runs(caplog):
    kind = WeeklyScan([Scan("a"), Scan("b")])
    kind.broken = {"a"}
    jobs = Scheduler()
    try:
        jobs.register(kind)
        jobs.run_soon("scan", "a", soon())
        assert kind.event.wait(10)
        kind.event.clear()
        jobs.run_soon("scan", "b", soon())
        assert kind.event.wait(10), "one failure stopped the scheduler"
        assert [i for i, _ in kind.fired] == ["a", "b"]
    finally:
        jobs.shutdown(wait=True)
    assert "scan a at 2026-12-07T06:00:00+00:00 failed" in caplog.text


def test_sync_follows_the_store_and_an_outage_keeps_the_jobs():
    kind = WeeklyScan([Scan("kept"), Scan("moved"), Scan("paused"), Scan("gone")])
    jobs = Scheduler()
    try:
        jobs.register(kind)
        before = jobs.next_run_time("scan", "moved")
        kind.items = [
            Scan("kept"),
            Scan("moved", hour=18),
            Scan("paused", paused=True),
            Scan("new"),
        ]
        jobs.sync("scan")
        assert jobs.next_run_time("scan", "moved") == before.replace(hour=18), (
            "a changed schedule is re-added"
        )
        assert (
            jobs.next_run_time("scan", "paused") is None
            and jobs.next_run_time("scan", "gone") is None
        )
        assert (
            jobs.next_run_time("scan", "new") is not None
            and jobs.next_run_time("scan", "kept") is not None
        )
        kind.items = None  # the state store does not answer: the jobs stay as they were
        jobs.sync("scan")
        assert jobs.next_run_time("scan", "kept") is not None
        jobs.unregister("scan")
        assert jobs.next_run_time("scan", "kept") is None and jobs.aps.get_jobs() == []
    finally:
        jobs.shutdown()


def test_kinds_share_one_scheduler_and_keep_their_slot_keys():
    from rlmap_bot.digest.schedule import slot_key as digest_key
    from rlmap_bot.watch.schedule import slot_key as watch_key

    moment = dt.datetime(2026, 12, 7, 9, 0, 30, tzinfo=UTC)
    # The forms already in the state stores' claim
    # tables: a changed form would let a slot run twice.
    assert digest_key(moment) == "at:2026-12-07T09:00+00:00"
    assert watch_key(moment) == "at:2026-12-07T09:00:30+00:00"
    jobs = Scheduler()
    scan = WeeklyScan([Scan("s")])

    class Every5:
        name, misfire_grace = "tick", None

        def load(self):
            return [Scan("t")]

        def trigger(self, item):
            return IntervalTrigger(minutes=5, timezone=UTC)

        def due(self, item):
            return moment

        def missed(self, items, now):
            return {}

        def fire(self, item_id, due):
            pass

    try:
        jobs.register(scan)
        jobs.register(Every5())
        assert {j.id for j in jobs.aps.get_jobs()} == {
            "scan:item:s",
            "scan:sync",
            "tick:item:t",
            "tick:sync",
        }
    finally:
        jobs.shutdown()


def test_a_ticker_logs_a_failing_tick_once_and_keeps_ticking(caplog):
    import logging

    from rlmap_bot.jobs.ticker import Ticker

    ticks: list[int] = []
    done = threading.Event()

    def tick() -> None:
        ticks.append(len(ticks))
        if len(ticks) == 1:
            raise RuntimeError("a bug in this tick")
        if len(ticks) == 2:
            raise UnavailableError("state store down")  # the store's health logs the outage itself
        if len(ticks) >= 4:
            done.set()

    ticker = Ticker("rlmap-test-ticker", 0.01, tick)
    with caplog.at_level(logging.DEBUG, logger="rlmap_bot.jobs.ticker"):
        ticker.start()
        assert done.wait(10), f"the ticker stopped after {len(ticks)} ticks"
        ticker.stop()
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(errors) == 1 and errors[0].exc_info is not None, "one record, with the traceback"
    assert "rlmap-test-ticker" in errors[0].getMessage() and "a bug in this tick" in caplog.text
    assert not ticker._thread.is_alive(), "stop() ends the loop"


def test_housekeeping_expires_idle_diagnoses_and_forgets_old_finished_claims(core):
    """The state store's hourly housekeeping: a kind of its own, once a digest job's side task."""
    from rlmap_bot.jobs.housekeeping import CLAIMS_KEPT, Housekeeping

    idle = core.flow.start(user="U1").session
    lease = dt.timedelta(minutes=1)
    for key in ("done-1", "working-1"):
        outcome, _ = core.state.events.claim(key, "event", "T1", None, owner="o", lease=lease)
        assert outcome == "new"
    assert core.state.events.finish("done-1", "o")
    housekeeping = Housekeeping(core)
    scheduler = Scheduler()
    try:
        assert scheduler.register(housekeeping) == [], "nothing to catch up: the next tick does it"
        assert scheduler.next_run_time("housekeeping", "hourly") is not None
    finally:
        scheduler.shutdown()
    soon_after = dt.datetime.now(UTC) + dt.timedelta(minutes=5)
    housekeeping.run(soon_after)
    assert core.state.sessions.get(idle.id).status == "open", "touched minutes ago: kept"
    housekeeping.run(soon_after + core.session_ttl + CLAIMS_KEPT)
    assert core.state.sessions.get(idle.id).status == "expired"
    assert core.state.events.owner_of("working-1") == "o", "a claim being worked on is kept"
    assert (
        core.state.events.claim("done-1", "event", "T1", None, owner="p", lease=lease)[0] == "new"
    )
