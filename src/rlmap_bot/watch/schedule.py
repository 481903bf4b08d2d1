"""When watches are checked: interval jobs, run by the one scheduler (:mod:`rlmap_bot.jobs`).

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
from typing import TYPE_CHECKING, Any, Callable, Sequence

from apscheduler.triggers.interval import IntervalTrigger

from rlmap_bot.jobs import Registration, Scheduler
from rlmap_bot.jobs import slot_key as jobs_slot_key
from rlmap_bot.watch.model import Watch

if TYPE_CHECKING:
    from rlmap_bot.results.watch import CheckResult
    from rlmap_bot.watch.service import Poster, WatchService

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
    """A watch slot's claim key (to the second, as watches have always been keyed)."""
    return jobs_slot_key(moment, "seconds")


class WatchJobs:
    """Watches as a kind of timed job (:mod:`rlmap_bot.jobs`): one interval job per active watch.

    ``fire(watch_id, due)`` is called for every check, scheduled or caught up;
    ``last_checks(watches)`` says when each was last checked (a watch missing there is caught up).
    """

    name = "watch"
    misfire_grace: dt.timedelta | None = (
        None  # a check that runs late still runs (coalesced), never dropped
    )

    def __init__(
        self,
        fire: Callable[[str, dt.datetime], Any],
        load: Callable[[], list[Watch]],
        last_checks: Callable[[list[Watch]], dict[str, dt.datetime | None]],
        clock: Callable[[], dt.datetime] = _utcnow,
    ):
        self.fire, self._load, self.last_checks, self.clock = fire, load, last_checks, clock

    def load(self) -> list[Watch]:
        return self._load()

    def trigger(self, watch: Watch) -> IntervalTrigger | None:
        if watch.status != "active":
            return None
        return IntervalTrigger(
            minutes=watch.interval_minutes, start_date=watch.created_at, timezone=dt.UTC
        )

    def due(self, watch: Watch) -> dt.datetime:
        return last_slot(watch, self.clock()) or self.clock()

    def missed(self, watches: Sequence[Watch], now: dt.datetime | None) -> dict[str, dt.datetime]:
        now = now or self.clock()
        active = [w for w in watches if w.status == "active"]
        checked = self.last_checks(active)
        found = {}
        for watch in active:
            due = last_slot(watch, now)
            last = checked.get(watch.id)
            if due is not None and (last is None or last < due):
                found[watch.id] = due
        return found


class ScheduledWatches:
    """Every active watch checked on its interval by the front-end's one scheduler, posting
    through the poster of the watch's workspace (``poster_for(team)``, which raises LookupError
    for a workspace it cannot post in); nothing when watching is off (no RLMAP_RUN_ROOTS)."""

    def __init__(
        self,
        service: WatchService,
        poster_for: Callable[[str], Poster],
        jobs: Scheduler | None = None,
    ):
        self.service = service
        self.poster_for = poster_for
        self.jobs = jobs or Scheduler()
        self.registration: Registration | None = None
        service.core.on_watches_changed(self.resync)

    @property
    def clock(self) -> Callable[[], dt.datetime]:
        return self.service.clock

    @clock.setter
    def clock(self, clock: Callable[[], dt.datetime]) -> None:
        self.service.clock = clock  # tests set a controlled clock

    @property
    def scheduler(self) -> Scheduler | None:
        """The jobs scheduler, while watches are registered with it."""
        return self.registration.scheduler if self.registration is not None else None

    def start_scheduler(self, now: dt.datetime | None = None) -> list[str]:
        """Schedule every active watch and catch up what was missed; the ids caught up."""
        if not self.service.roots:
            log.info("watching runs is off (RLMAP_RUN_ROOTS is unset)")
            return []
        kind = WatchJobs(
            self.fire,
            load=self.service.repo.list,
            last_checks=self._last_checks,
            clock=lambda: self.clock(),
        )
        self.registration = Registration(self.jobs, kind, self.housekeeping)
        return self.registration.start(now)

    def stop_scheduler(self, wait: bool = False) -> None:
        """Stop scheduling watches; ``wait`` for checks already running to finish."""
        if self.registration is not None:
            self.registration.stop(wait)

    def resync(self) -> None:
        if self.registration is not None:
            self.registration.resync()

    def _last_checks(self, watches: list[Watch]) -> dict[str, dt.datetime | None]:
        tracking = self.service.repo.tracking([w.id for w in watches])
        return {i: t.last_check_at for i, t in tracking.items()}

    def housekeeping(self) -> None:
        """Forget check slots older than any trigger can fire again.

        A slot can fire again only while a replica or a restart can still reach it: the latest
        slot of the longest interval (24 hours); a week keeps a wide margin, as for event ids.
        """
        forgotten = self.service.repo.forget_checks(self.clock() - dt.timedelta(days=7))
        log.info("watch housekeeping: %d old check slots forgotten", forgotten)

    def fire(self, watch_id: str, due: dt.datetime) -> CheckResult | None:
        """One scheduled check of a watch, for the slot ``due`` stands for."""
        watch = self.service.repo.get(watch_id)
        if watch is None:
            return None  # removed meanwhile
        try:
            result = self.service.run(watch_id, slot_key(due), self.poster_for(watch.team))
        except LookupError as exc:
            log.warning("watch %s skipped: %s", watch_id, exc)
            return None
        if result is not None:
            log.info(
                "watch %s in %s: %s, %d new steps, %d post(s)",
                watch.short_id,
                watch.channel,
                result.status,
                result.new_steps,
                len(result.alerts),
            )
        return result
