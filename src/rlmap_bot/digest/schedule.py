"""When digests fire: cron triggers in each subscription's timezone, run by the one scheduler
(:mod:`rlmap_bot.jobs`), each slot delivered by :class:`DigestService` through the poster the
front-end gives for the subscription's workspace.

Subscriptions in the state store are the source of truth; the scheduler's jobs
are re-created from them at start and re-synced, so there is one place to change
a schedule.
A run missed while the bot was down is found by comparing the last scheduled
time with the subscription's ``last_run_at``, and sent once if it is within the
grace period; several missed runs coalesce into that one.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import TYPE_CHECKING, Callable, Sequence
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.cron import CronTrigger

from rlmap_bot import jobs
from rlmap_bot.digest.service import DigestService, Poster, RunResult
from rlmap_bot.errors import UnavailableError
from rlmap_bot.state.models import Subscription

if TYPE_CHECKING:
    from rlmap_bot.core import Core

log = logging.getLogger(__name__)
DEFAULT_GRACE = dt.timedelta(hours=12)


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown timezone {name!r} (use a name like Europe/London or America/New_York)"
        ) from None


def trigger_for(sub: Subscription) -> CronTrigger:
    hour, minute = (int(x) for x in sub.time.split(":"))
    day = sub.day if sub.frequency == "weekly" else "*"
    return CronTrigger(day_of_week=day, hour=hour, minute=minute, timezone=zone(sub.timezone))


def next_run(sub: Subscription, after: dt.datetime) -> dt.datetime:
    """The first scheduled time strictly after ``after`` (timezone-aware, DST included)."""
    return trigger_for(sub).get_next_fire_time(None, after + dt.timedelta(microseconds=1))


def last_due(sub: Subscription, now: dt.datetime) -> dt.datetime | None:
    """The latest scheduled time at or before ``now`` since the subscription last ran (or began)."""
    since = sub.last_run_at or sub.created_at
    trigger = trigger_for(sub)
    due = None
    moment = trigger.get_next_fire_time(None, since + dt.timedelta(microseconds=1))
    while moment is not None and moment <= now:
        due = moment
        moment = trigger.get_next_fire_time(moment, moment + dt.timedelta(seconds=1))
    return due


def missed_run(
    sub: Subscription, now: dt.datetime, grace: dt.timedelta = DEFAULT_GRACE
) -> dt.datetime | None:
    """The one run to catch up at start, if a scheduled time passed unsent within ``grace``."""
    due = last_due(sub, now)
    if due is not None and now - due <= grace:
        return due
    return None


def slot_key(moment: dt.datetime) -> str:
    """A digest slot's claim key (to the minute, as digests have always been keyed)."""
    return jobs.slot_key(moment, "minutes")


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class DigestJobs:
    """Digests as a kind of timed job (:mod:`rlmap_bot.jobs`):
    one cron job per subscription, in its timezone.

    ``fire(sub_id, scheduled_for)`` is called for every run, scheduled or caught up.
    """

    name = "digest"

    def __init__(
        self,
        fire: Callable[[str, dt.datetime], object],
        load: Callable[[], list[Subscription]],
        grace: dt.timedelta = DEFAULT_GRACE,
        clock: Callable[[], dt.datetime] = _utcnow,
    ):
        self.fire, self._load, self.clock = fire, load, clock
        self.misfire_grace: dt.timedelta | None = grace

    def load(self) -> list[Subscription]:
        return self._load()

    def trigger(self, sub: Subscription) -> CronTrigger:
        return trigger_for(sub)

    def due(self, sub: Subscription) -> dt.datetime:
        now = self.clock()
        return (
            last_due(sub.model_copy(update={"last_run_at": now - dt.timedelta(days=8)}), now) or now
        )

    def missed(
        self, subs: Sequence[Subscription], now: dt.datetime | None
    ) -> dict[str, dt.datetime]:
        now = now or self.clock()
        found = {}
        for sub in subs:
            try:  # one broken subscription must not keep the others from catching up
                due = missed_run(sub, now, self.misfire_grace or DEFAULT_GRACE)
            except Exception:  # noqa: BLE001
                log.exception("digest subscription %s: missed runs could not be computed", sub.id)
                continue
            if due is not None:
                found[sub.id] = due
        return found


class DigestSchedule:
    """Digests on the bot's scheduler: registered at start, kept in step with the subscriptions,
    and each slot run once through :class:`DigestService`.

    ``poster_for(team)`` is the front-end's poster for a workspace; a ``LookupError`` from it (a
    workspace with no installation) skips that digest.
    """

    def __init__(
        self,
        core: Core,
        poster_for: Callable[[str], Poster],
        scheduler: jobs.Scheduler | None = None,
    ):
        self.core, self.poster_for = core, poster_for
        self.service = DigestService(core)
        self.jobs = scheduler or jobs.Scheduler()
        core.on_subscriptions_changed(self.resync)

    def start_scheduler(self, now: dt.datetime | None = None) -> list[str]:
        """Register digests with the scheduler; the ids of the digests caught up (sent in its
        threads)."""
        return self.jobs.register(
            DigestJobs(self.fire, load=self.core.state.subscriptions.list), now=now
        )

    def stop_scheduler(self) -> None:
        self.jobs.stop(DigestJobs.name)

    def resync(self) -> None:
        """Match the scheduler's jobs to the subscriptions in the store (other replicas change
        them too); nothing while digests are not scheduled."""
        self.jobs.sync(DigestJobs.name)

    def fire(self, sub_id: str, due: dt.datetime) -> RunResult | None:
        try:
            sub = self.core.state.subscriptions.by_id(sub_id)
            if sub is None:
                return None  # unsubscribed meanwhile
            try:
                result = self.service.run(sub, slot_key(due), self.poster_for(sub.team))
            except LookupError as exc:
                log.warning("digest for %s skipped: %s", sub.channel, exc)
                return None
            except jobs.NotPosted as exc:
                log.warning("digest for %s not delivered: %s", sub.channel, exc.code)
                return None
        except UnavailableError:
            log.warning(
                "digest %s at %s not run: state store unavailable (a missed slot is caught up at "
                "start)",
                sub_id,
                due.isoformat(),
            )
            return None
        log.info("digest for %s: %s (%d entries)", sub.channel, result.status, result.entries)
        return result
