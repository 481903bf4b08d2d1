"""The scheduler: one background APScheduler running every registered kind's jobs.

Job ids are ``KIND:item:ID`` for an item's ticks, ``KIND:catchup:ID`` for a catch-up,
``KIND:sync`` for the kind's resync and ``KIND:every:NAME`` for its housekeeping.
Catch-ups run in the scheduler's threads, so a long first run never
holds up the bot's start. A failing job is logged and never stops the scheduler.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any, Callable, Protocol, Sequence

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger

from rlmap_bot.errors import UnavailableError

log = logging.getLogger(__name__)


def slot_key(moment: dt.datetime, timespec: str = "seconds") -> str:
    """The claim key of the slot a firing stands for; every
    replica computes the same one for the same tick.

    ``timespec``: digests were keyed to the minute and
    watches to the second; each kind keeps its own,
    since a key in another form would not match the claims already in the state store.
    """
    return "at:" + moment.astimezone(dt.UTC).isoformat(timespec=timespec)


class Item(Protocol):
    @property
    def id(self) -> str: ...


class Kind(Protocol):
    """One kind of timed job (see the package docstring for an example)."""

    name: str
    misfire_grace: dt.timedelta | None

    def load(self) -> Sequence[Any]: ...

    def trigger(self, item: Any) -> BaseTrigger | None: ...

    def due(self, item: Any) -> dt.datetime: ...

    def missed(self, items: Sequence[Any], now: dt.datetime | None) -> dict[str, dt.datetime]: ...

    def fire(self, item_id: str, due: dt.datetime) -> object: ...


class Scheduler:
    """Every registered kind's jobs in one background APScheduler (in-memory job store)."""

    def __init__(self, resync_seconds: int = 300):
        self.resync_seconds = resync_seconds
        self.kinds: dict[str, Kind] = {}
        self._signatures: dict[str, str] = {}  # job id -> its trigger, to tell a changed schedule
        # coalesce: several missed ticks of one job run once; max_instances: never two at once.
        self.aps = BackgroundScheduler(
            timezone=dt.UTC, job_defaults={"coalesce": True, "max_instances": 1}
        )

    # -- registering -------------------------------------------------------------------------------
    def register(self, kind: Kind, now: dt.datetime | None = None) -> list[str]:
        """Schedule the kind's items and catch up what was missed while down; the ids caught up."""
        self.kinds[kind.name] = kind
        items = list(kind.load())
        for item in items:
            try:  # one broken item must not keep the others (or the bot) from starting
                self._add(kind, item)
            except Exception:  # noqa: BLE001
                log.exception("%s %s could not be scheduled", kind.name, item.id)
        caught_up = []
        for item_id, due in kind.missed(items, now).items():  # each once, for its latest slot
            caught_up.append(item_id)
            self.aps.add_job(
                self._fire,
                "date",
                args=[kind.name, item_id, due],
                id=f"{kind.name}:catchup:{item_id}",
                replace_existing=True,
                misfire_grace_time=None,
            )
        self.aps.add_job(
            self.sync,
            "interval",
            seconds=self.resync_seconds,
            args=[kind.name],
            id=f"{kind.name}:sync",
            replace_existing=True,
        )
        self.start()
        return caught_up

    def unregister(self, name: str) -> None:
        """Drop every job of the kind (the scheduler keeps running for the others)."""
        self.kinds.pop(name, None)
        for job in self.aps.get_jobs():
            if job.id.startswith(f"{name}:"):
                job.remove()
                self._signatures.pop(job.id, None)

    def stop(self, name: str, wait: bool = False) -> None:
        """Unregister the kind; the scheduler stops with its last kind (``wait`` for the jobs
        already running to finish)."""
        self.unregister(name)
        if not self.kinds:
            self.shutdown(wait=wait)

    def every(self, kind: str, name: str, func: Callable[[], Any], **interval: int) -> None:
        """Housekeeping of a kind that belongs to no item:
        ``func`` every ``interval`` (``hours=1``).
        """
        self.aps.add_job(
            func, "interval", id=f"{kind}:every:{name}", replace_existing=True, **interval
        )

    def start(self) -> None:
        if not self.aps.running:
            self.aps.start()

    def shutdown(self, wait: bool = False) -> None:
        """Stop; ``wait`` for jobs already running to finish."""
        if self.aps.running:
            self.aps.shutdown(wait=wait)

    # -- keeping jobs in step with the store
    #  ---------------------------------------------------------
    def sync(self, name: str) -> None:
        """Jobs for the kind's items as the store has them now: new
        ones added, changed ones re-added, gone ones dropped.
        """
        kind = self.kinds.get(name)
        if kind is None:
            return
        try:
            items = list(kind.load())
        except UnavailableError:
            log.warning(
                "%s schedule not refreshed: state store unavailable (tried again in %d s)",
                name,
                self.resync_seconds,
            )
            return
        wanted = {item.id: item for item in items}
        prefix = f"{name}:item:"
        for job in self.aps.get_jobs():
            if job.id.startswith(prefix):
                item = wanted.get(job.id.removeprefix(prefix))
                if item is None or kind.trigger(item) is None:
                    job.remove()
                    self._signatures.pop(job.id, None)
        for item in items:
            trigger = kind.trigger(item)
            job_id = f"{prefix}{item.id}"
            if trigger is not None and (
                self.aps.get_job(job_id) is None or self._signatures.get(job_id) != repr(trigger)
            ):
                self._add(kind, item)

    def next_run_time(self, name: str, item_id: str) -> dt.datetime | None:
        job = self.aps.get_job(f"{name}:item:{item_id}")
        return job.next_run_time if job else None

    def run_soon(self, name: str, item_id: str, at: dt.datetime) -> None:
        """Bring an item's next tick forward to ``at`` (then it keeps its schedule)."""
        self.aps.modify_job(f"{name}:item:{item_id}", next_run_time=at)

    # -- running -----------------------------------------------------------------------------------
    def _add(self, kind: Kind, item: Any) -> None:
        trigger = kind.trigger(item)
        if trigger is None:
            return
        grace = kind.misfire_grace
        job_id = f"{kind.name}:item:{item.id}"
        self.aps.add_job(
            self._tick,
            trigger,
            args=[kind.name, item],
            id=job_id,
            replace_existing=True,
            name=f"{kind.name} {item.id}",
            misfire_grace_time=None if grace is None else int(grace.total_seconds()),
        )
        self._signatures[job_id] = repr(
            trigger
        )  # interval, start and timezone: a changed schedule differs

    def _tick(self, name: str, item: Any) -> None:
        kind = self.kinds.get(name)
        if kind is not None:
            self._fire(name, item.id, kind.due(item))

    def _fire(self, name: str, item_id: str, due: dt.datetime) -> None:
        kind = self.kinds.get(name)
        if kind is None:
            return
        try:
            kind.fire(item_id, due)
        except Exception:  # noqa: BLE001 - one failing item must not stop the scheduler
            log.exception("%s %s at %s failed", name, item_id, due.isoformat())


class Registration:
    """One kind's place in the shared :class:`Scheduler`: registered (with its housekeeping) when
    the front-end starts it, re-synced when its items change, dropped at stop, and the scheduler
    shut down with the last kind.  What every kind's front-end would otherwise write again."""

    def __init__(self, jobs: Scheduler, kind: Kind, housekeeping: Callable[[], Any] | None = None):
        self.jobs, self.kind, self.housekeeping = jobs, kind, housekeeping
        self.scheduler: Scheduler | None = None  # the jobs scheduler, while the kind is in it

    def start(self, now: dt.datetime | None = None) -> list[str]:
        """Register the kind; the ids of the items caught up (fired once for a missed slot)."""
        caught_up = self.jobs.register(self.kind, now=now)
        if self.housekeeping is not None:
            self.jobs.every(self.kind.name, "housekeeping", self.housekeeping, hours=1)
        self.scheduler = self.jobs
        return caught_up

    def stop(self, wait: bool = False) -> None:
        """Drop the kind; ``wait`` for its work already running when it was the last kind."""
        if self.scheduler is not None:
            self.jobs.unregister(self.kind.name)
            if not self.jobs.kinds:
                self.jobs.shutdown(wait=wait)
            self.scheduler = None

    def resync(self) -> None:
        if self.scheduler is not None:
            self.jobs.sync(self.kind.name)
