"""When digests fire: APScheduler cron triggers in each subscription's timezone.

Subscriptions in the state store are the source of truth; the scheduler's jobs
are re-created from them at start (an in-memory job store), so there is one
place to change a schedule and nothing to migrate when APScheduler changes.
A run missed while the bot was down is found by comparing the last scheduled
time with the subscription's ``last_run_at``, and sent once if it is within the
grace period; several missed runs coalesce into that one.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger

from rlmap_bot.state.models import Subscription

log = logging.getLogger(__name__)
DEFAULT_GRACE = dt.timedelta(hours=12)


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown timezone {name!r} (use a name like Europe/London or America/New_York)") from None


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


def missed_run(sub: Subscription, now: dt.datetime, grace: dt.timedelta = DEFAULT_GRACE) -> dt.datetime | None:
    """The one run to catch up at start, if a scheduled time passed unsent within ``grace``."""
    due = last_due(sub, now)
    if due is not None and now - due <= grace:
        return due
    return None


def slot_key(moment: dt.datetime) -> str:
    return "at:" + moment.astimezone(dt.UTC).isoformat(timespec="minutes")


class DigestScheduler:
    """A background APScheduler with one cron job per subscription.

    ``fire(sub_id, scheduled_for)`` is called for every run, scheduled or caught up.
    """

    def __init__(self, fire: Callable[[str, dt.datetime], object], grace: dt.timedelta = DEFAULT_GRACE,
                 load: Callable[[], list[Subscription]] | None = None, resync_seconds: int = 300):
        self.fire = fire
        self.grace = grace
        self.load = load
        self.resync_seconds = resync_seconds
        self.scheduler = BackgroundScheduler(
            timezone=dt.UTC,
            job_defaults={"coalesce": True, "misfire_grace_time": int(grace.total_seconds()), "max_instances": 1},
        )

    def start(self, subscriptions: list[Subscription], now: dt.datetime | None = None) -> list[str]:
        """Create the jobs and send what was missed while down; return the caught-up ids."""
        now = now or dt.datetime.now(dt.UTC)
        caught_up = []
        for sub in subscriptions:
            try:  # one broken subscription must not keep the others (or the bot) from starting
                self.add(sub)
                due = missed_run(sub, now, self.grace)
                if due is not None:
                    caught_up.append(sub.id)
                    self.fire(sub.id, due)
            except Exception:  # noqa: BLE001
                log.exception("digest subscription %s could not be scheduled", sub.id)
        if self.load is not None:
            # Other replicas add and drop subscriptions; pick their changes up regularly.
            self.scheduler.add_job(self._resync, "interval", seconds=self.resync_seconds,
                                   id="sync:subscriptions", replace_existing=True)
        self.scheduler.start()
        return caught_up

    def _resync(self) -> None:
        from rlmap_bot.errors import UnavailableError

        assert self.load is not None, "the resync job is only added when there is a loader (start)"
        try:
            self.sync(self.load())
        except UnavailableError:
            log.warning("digest schedule not refreshed: state store unavailable (tried again in %d s)",
                        self.resync_seconds)

    def add(self, sub: Subscription) -> None:
        self.scheduler.add_job(self._run, trigger_for(sub), args=[sub.id, sub], id=sub.id,
                               replace_existing=True, name=f"digest {sub.channel}")

    def sync(self, subscriptions: list[Subscription]) -> None:
        """Add jobs for new subscriptions and drop jobs whose subscription is gone."""
        wanted = {s.id: s for s in subscriptions}
        for job in self.scheduler.get_jobs():
            if job.id.startswith("sync:"):
                continue
            if job.id not in wanted:
                job.remove()
        for sub_id, sub in wanted.items():
            if self.scheduler.get_job(sub_id) is None:
                self.add(sub)

    def next_run_time(self, sub_id: str) -> dt.datetime | None:
        job = self.scheduler.get_job(sub_id)
        return job.next_run_time if job else None

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    def _run(self, sub_id: str, sub: Subscription) -> None:
        now = dt.datetime.now(dt.UTC)
        due = last_due(sub.model_copy(update={"last_run_at": now - dt.timedelta(days=8)}), now) or now
        try:
            self.fire(sub_id, due)
        except Exception:  # noqa: BLE001 - one failing channel must not stop the scheduler
            log.exception("digest for subscription %s failed", sub_id)
