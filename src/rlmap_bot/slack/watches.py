"""Watches over Slack: the poster (metadata-tagged alerts,
charts, history look-ups) and the scheduler's checks.

The `/rlmap watch ...` commands are registry commands (:mod:`rlmap_bot.commands.watch`);
the decisions are the core's (:mod:`rlmap_bot.watch`).
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.metadata import Metadata

from rlmap_bot import metrics
from rlmap_bot.core import Core
from rlmap_bot.jobs import NotPosted, Scheduler
from rlmap_bot.results.watch import Alert, CheckResult, WatchRow
from rlmap_bot.runs.sources.access import workspace_access_for
from rlmap_bot.settings import Settings
from rlmap_bot.slack.blocks.common import fallback, to_dicts
from rlmap_bot.slack.blocks.watch import alert_blocks, alert_text
from rlmap_bot.slack.posting import CANNOT_POST, find_by_metadata, upload_chart
from rlmap_bot.watch.schedule import WatchJobs, slot_key
from rlmap_bot.watch.service import METADATA_EVENT, WatchService

log = logging.getLogger(__name__)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class SlackWatchPoster:
    """Posts watch alerts with chat.postMessage and finds them again by their metadata."""

    def __init__(self, client: WebClient):
        self.client = client

    def post_alert(self, channel: str, alert: Alert) -> str:
        payload = {
            "watch_id": alert.watch_id,
            "alert_id": alert.alert_id,
            "condition": alert.condition,
            "conditions": alert.conditions,
            "kind": alert.kind,
        }
        try:  # slack-sdk drops None arguments: no thread_ts nor reply_broadcast unless it replies
            response = self.client.chat_postMessage(
                channel=channel,
                text=fallback(alert_text(alert)),
                blocks=to_dicts(alert_blocks(alert)),
                metadata=Metadata(event_type=METADATA_EVENT, event_payload=payload),
                unfurl_links=False,
                unfurl_media=False,
                thread_ts=alert.reply_to or None,
                reply_broadcast=True if alert.reply_to else None,
            )
        except SlackApiError as exc:  # Slack answered: the message was not posted
            code = str(exc.response.get("error", "error"))
            raise NotPosted(code, CANNOT_POST.get(code), what="post the watch alert") from None
        metrics.WATCH_POSTS.inc()
        return response["ts"]

    def attach_chart(self, channel: str, ts: str, chart: Path, alert: Alert) -> None:
        upload_chart(self.client, channel, ts, str(chart), "watch.png", Path(alert.path).name)

    def find(self, channel: str, alert_id: str, since: dt.datetime) -> str | None:
        return find_by_metadata(self.client, channel, METADATA_EVENT, "alert_id", alert_id, since)


class SlackWatches:
    """The scheduler's checks of every watch, and what App Home shows of them."""

    def __init__(
        self,
        core: Core,
        client_for: Callable[[str], WebClient],
        settings: Settings | None = None,
        jobs: Scheduler | None = None,
    ):
        self.core = core
        self.client_for = client_for
        self.settings = settings or core.settings
        self.clock: Callable[[], dt.datetime] = _utcnow  # tests set a controlled clock
        self.service = WatchService(
            core,
            access=workspace_access_for(self.settings, core.state),
            clock=lambda: self.clock(),
            settings=self.settings,
        )
        self.jobs = jobs or Scheduler()
        self.scheduler: Scheduler | None = (
            None  # the jobs scheduler, once watches are registered with it
        )
        core.on_watches_changed(self.resync)

    # -- scheduling -----------------------------------------------------------------------------
    def start_scheduler(self, now: dt.datetime | None = None) -> list[str]:
        """Schedule every active watch and catch up what
        was missed; nothing when watching is off.
        """
        if not self.settings.run_roots:
            log.info("watching runs is off (RLMAP_RUN_ROOTS is unset)")
            return []
        kind = WatchJobs(
            self.fire,
            load=self.core.state.watches.list,
            last_checks=self._last_checks,
            clock=lambda: self.clock(),
        )
        caught_up = self.jobs.register(kind, now=now)
        self.jobs.every(WatchJobs.name, "housekeeping", self.housekeeping, hours=1)
        self.scheduler = self.jobs
        return caught_up

    def _last_checks(self, watches: list) -> dict[str, dt.datetime | None]:
        tracking = self.core.state.watches.tracking([w.id for w in watches])
        return {i: t.last_check_at for i, t in tracking.items()}

    def stop_scheduler(self, wait: bool = False) -> None:
        """Stop scheduling watches; ``wait`` for checks already running to finish."""
        if self.scheduler is not None:
            self.jobs.unregister(WatchJobs.name)
            if not self.jobs.kinds:
                self.jobs.shutdown(wait=wait)
            self.scheduler = None

    def resync(self) -> None:
        if self.scheduler is not None:
            self.jobs.sync(WatchJobs.name)

    def housekeeping(self) -> None:
        """Forget check slots older than any trigger can fire again.

        A slot can fire again only while a replica or a restart can still reach it: the latest
        slot of the longest interval (24 hours); a week keeps a wide margin, as for event ids.
        """
        forgotten = self.core.state.watches.forget_checks(self.clock() - dt.timedelta(days=7))
        log.info("watch housekeeping: %d old check slots forgotten", forgotten)

    def fire(self, watch_id: str, due: dt.datetime) -> CheckResult | None:
        watch = self.core.state.watches.get(watch_id)
        if watch is None:
            return None  # removed meanwhile
        try:
            result = self.service.run(
                watch_id, slot_key(due), SlackWatchPoster(self.client_for(watch.team))
            )
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

    # -- App Home -------------------------------------------------------------------------------
    def for_user(
        self, client: WebClient, team: str, user: str
    ) -> tuple[list[WatchRow], str | None]:
        """Watches in the channels ``user`` is in
        (users.conversations), and a note when that cannot be known.
        """
        watches = self.core.state.watches.list(team=team)
        if not watches:
            return [], None
        channels: set[str] = set()
        cursor = None
        try:
            for _ in range(10):  # 2,000 channels at most: App Home must open in a second or two
                page = client.users_conversations(
                    user=user,
                    types="public_channel,private_channel",
                    exclude_archived=True,
                    limit=200,
                    cursor=cursor,
                )
                listed: list[dict] = page.get("channels", [])
                channels.update(c["id"] for c in listed)
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    break
        except SlackApiError as exc:
            log.info("cannot list %s's channels: %s", user, exc.response.get("error"))
            return [], (
                "I cannot tell which channels you are in (the app needs channels:read and "
                "groups:read); "
                "`/rlmap watch list` in a channel shows its watches."
            )
        return self.service.rows([w for w in watches if w.channel in channels]), None


__all__ = ["SlackWatchPoster", "SlackWatches"]
