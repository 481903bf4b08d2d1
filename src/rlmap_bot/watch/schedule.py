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
from typing import Any, Callable, Sequence

from apscheduler.triggers.interval import IntervalTrigger

from rlmap_bot import jobs
from rlmap_bot.watch.model import Watch

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
    return jobs.slot_key(moment, "seconds")


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
