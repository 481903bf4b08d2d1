"""Watches over Slack: the poster (alerts tagged with their id in the message metadata, charts,
history look-ups) and App Home's watches.

The `/rlmap watch ...` commands are registry commands (:mod:`rlmap_bot.commands.watch`); the
decisions and the schedule are the core's (:mod:`rlmap_bot.watch`).
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
from rlmap_bot.jobs import NotPosted
from rlmap_bot.results.watch import Alert, WatchRow
from rlmap_bot.slack.blocks.common import fallback, to_dicts
from rlmap_bot.slack.blocks.watch import alert_blocks, alert_text
from rlmap_bot.slack.posting import CANNOT_POST, find_by_metadata, upload_chart
from rlmap_bot.watch.service import WatchService

log = logging.getLogger(__name__)
#: The metadata event type of a watch post: how ``find`` knows a post again after a crash.
METADATA_EVENT = "rlmap_watch"


class SlackWatchPoster:
    """Posts watch alerts with chat.postMessage and finds them again by their metadata; ``keep``
    keeps an alert for its card's Details button (None: the card has none)."""

    def __init__(self, client: WebClient, keep: Callable[[Alert], str] | None = None):
        self.client, self.keep = client, keep

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
                blocks=to_dicts(alert_blocks(alert, details=self._details(alert))),
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

    def _details(self, alert: Alert) -> str | None:
        """The id an alert's Details button carries: only an alert's card has one."""
        if self.keep is None or alert.kind != "alert":
            return None
        return self.keep(alert)

    def attach_chart(self, channel: str, ts: str, chart: Path, alert: Alert) -> None:
        upload_chart(self.client, channel, ts, str(chart), "watch.png", Path(alert.path).name)

    def find(self, channel: str, alert_id: str, since: dt.datetime) -> str | None:
        return find_by_metadata(self.client, channel, METADATA_EVENT, "alert_id", alert_id, since)


def watches_for_user(
    service: WatchService, client: WebClient, team: str, user: str
) -> tuple[list[WatchRow], str | None]:
    """App Home's watches: those in the channels ``user`` is in (users.conversations), and a note
    when that cannot be known."""
    watches = service.repo.list(team=team)
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
            "groups:read); `/rlmap watch list` in a channel shows its watches."
        )
    return service.rows([w for w in watches if w.channel in channels]), None


__all__ = ["METADATA_EVENT", "SlackWatchPoster", "watches_for_user"]
