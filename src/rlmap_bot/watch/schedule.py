"""When watches are checked: APScheduler interval jobs, re-created from the state store.

The watches in the state store are the source of truth, as for digests: at start
every active watch gets an interval job (an in-memory job store), and every
replica re-reads the watches regularly to pick up what others added, changed or
paused.  Slots are aligned on the watch's creation time (``created_at + k *
interval``), so every replica computes the same slot for the same tick and the
slot claim (:meth:`WatchRepository.claim_check`) lets one of them check.

After downtime, each active watch is checked once, for its latest slot: one
check reads everything appended meanwhile and judges the run as it is now, so
several missed slots never turn into a burst of stale alerts, and a slot that a
surviving replica already checked is not checked again.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any, Callable

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from rlmap_bot.watch.model import Watch, format_interval

log = logging.getLogger(__name__)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def last_slot(watch: Watch, now: dt.datetime) -> dt.datetime | None:
    """The latest ``created_at + k * interval`` at or before ``now``."""
    if now < watch.created_at:
        return None
    ticks = (now - watch.created_at) // watch.interval
    return watch.created_at + ticks * watch.interval


def slot_key(moment: dt.datetime) -> str:
    return "at:" + moment.astimezone(dt.UTC).isoformat(timespec="seconds")


class WatchScheduler:
    """A background APScheduler with one interval job per active watch.

    ``fire(watch_id, due)`` is called for every check, scheduled or caught up.
    """

    def __init__(self, fire: Callable[[str, dt.datetime], Any], load: Callable[[], list[Watch]] | None = None,
                 resync_seconds: int = 300, clock: Callable[[], dt.datetime] = _utcnow,
                 housekeeping: Callable[[], Any] | None = None):
        self.fire = fire
        self.load = load
        self.resync_seconds = resync_seconds
        self.clock = clock
        self.housekeeping = housekeeping
        self._intervals: dict[str, int] = {}
        self.scheduler = BackgroundScheduler(
            timezone=dt.UTC,
            # A check that runs late still runs once (coalesced); a late tick is not dropped.
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )

    def start(self, watches: list[Watch], now: dt.datetime | None = None,
              last_checks: dict[str, dt.datetime | None] | None = None) -> list[str]:
        """Create the jobs and check once each watch whose latest slot passed since its last check.

        ``last_checks``: watch id -> when it was last checked; a watch missing there is caught up.
        Returns the ids caught up.
        """
        now = now or self.clock()
        last_checks = last_checks or {}
        caught_up = []
        for watch in watches:
            if watch.status != "active":
                continue
            try:  # one broken watch must not keep the others (or the bot) from starting
                self.add(watch)
                due = last_slot(watch, now)
                checked = last_checks.get(watch.id)
                if due is not None and (checked is None or checked < due):
                    caught_up.append(watch.id)
                    # In the scheduler's threads: a long first read must not hold up the bot's start.
                    self.scheduler.add_job(self._catch_up, "date", run_date=now, args=[watch.id, due],
                                           id=f"catchup:{watch.id}", replace_existing=True)
            except Exception:  # noqa: BLE001
                log.exception("watch %s could not be scheduled", watch.id)
        if self.load is not None:
            self.scheduler.add_job(lambda: self.sync(self.load()), "interval", seconds=self.resync_seconds,
                                   id="sync:watches", replace_existing=True)
        if self.housekeeping is not None:
            self.scheduler.add_job(self.housekeeping, "interval", hours=1, id="sync:watch-housekeeping",
                                   replace_existing=True)
        self.scheduler.start()
        return caught_up

    def add(self, watch: Watch) -> None:
        trigger = IntervalTrigger(minutes=watch.interval_minutes, start_date=watch.created_at, timezone=dt.UTC)
        self.scheduler.add_job(self._run, trigger, args=[watch.id, watch], id=watch.id, replace_existing=True,
                               name=f"watch {watch.channel} every {format_interval(watch.interval_minutes)}")
        self._intervals[watch.id] = watch.interval_minutes

    def sync(self, watches: list[Watch]) -> None:
        """Jobs for active watches (new ones, changed intervals); none for paused or removed ones."""
        wanted = {w.id: w for w in watches if w.status == "active"}
        for job in self.scheduler.get_jobs():
            if job.id.startswith(("sync:", "catchup:")):
                continue
            if job.id not in wanted:
                job.remove()
                self._intervals.pop(job.id, None)
        for watch_id, watch in wanted.items():
            if self.scheduler.get_job(watch_id) is None or self._intervals.get(watch_id) != watch.interval_minutes:
                self.add(watch)

    def next_run_time(self, watch_id: str) -> dt.datetime | None:
        job = self.scheduler.get_job(watch_id)
        return job.next_run_time if job else None

    def shutdown(self, wait: bool = False) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=wait)

    def _run(self, watch_id: str, watch: Watch) -> None:
        due = last_slot(watch, self.clock()) or self.clock()
        self._catch_up(watch_id, due)

    def _catch_up(self, watch_id: str, due: dt.datetime) -> None:
        try:
            self.fire(watch_id, due)
        except Exception:  # noqa: BLE001 - one failing watch must not stop the scheduler
            log.exception("check of watch %s failed", watch_id)
