"""Digests over Slack: the poster (metadata-tagged posts,
history look-ups) and the scheduler's deliveries.

The `/rlmap digest ...` commands are registry commands (:mod:`rlmap_bot.commands.digest`).
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.metadata import Metadata

from rlmap_bot import metrics
from rlmap_bot.core import Core
from rlmap_bot.digest.schedule import DigestJobs, slot_key
from rlmap_bot.digest.service import METADATA_EVENT, DigestService, RunResult
from rlmap_bot.errors import UnavailableError
from rlmap_bot.jobs import NotPosted, Scheduler
from rlmap_bot.results.digest import Digest
from rlmap_bot.slack.blocks.common import context, fallback
from rlmap_bot.slack.blocks.digest import digest_blocks, digest_text
from rlmap_bot.slack.markup import prose
from rlmap_bot.slack.posting import CANNOT_POST, find_by_metadata

log = logging.getLogger(__name__)


class SlackPoster:
    """Delivers digests with chat.postMessage and finds them again by their metadata."""

    def __init__(self, client: WebClient):
        self.client = client

    def post_digest(self, channel: str, digest: Digest, digest_id: str) -> str:
        try:
            response = self.client.chat_postMessage(
                channel=channel,
                text=fallback(digest_text(digest)),
                blocks=digest_blocks(digest),
                metadata=Metadata(
                    event_type=METADATA_EVENT, event_payload={"digest_id": digest_id}
                ),
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as exc:  # Slack answered: the message was not posted
            code = str(exc.response.get("error", "error"))
            raise NotPosted(code, CANNOT_POST.get(code), what="post the digest") from None
        metrics.DIGEST_POSTS.inc()
        return response["ts"]

    def post_note(self, channel: str, text: str) -> None:
        self.client.chat_postMessage(channel=channel, text=text, blocks=[context(prose(text))])

    def find(self, channel: str, digest_id: str, since: dt.datetime) -> str | None:
        return find_by_metadata(self.client, channel, METADATA_EVENT, "digest_id", digest_id, since)


class SlackDigests:
    """The `/rlmap digest ...` commands and the scheduler's deliveries."""

    def __init__(
        self, core: Core, client_for: Callable[[str], WebClient], jobs: Scheduler | None = None
    ):
        self.core = core
        self.client_for = client_for
        self.service = DigestService(core)
        self.jobs = jobs or Scheduler()
        self.scheduler: Scheduler | None = (
            None  # the jobs scheduler, once digests are registered with it
        )
        core.on_subscriptions_changed(self.resync)

    # -- scheduling -----------------------------------------------------------------------------
    def start_scheduler(self, now: dt.datetime | None = None) -> list[str]:
        """Register digests with the scheduler; the ids of
        the digests caught up (sent in its threads).
        """
        caught_up = self.jobs.register(
            DigestJobs(self.fire, load=self.core.state.subscriptions.list), now=now
        )
        self.jobs.every(DigestJobs.name, "housekeeping", self.housekeeping, hours=1)
        self.scheduler = self.jobs
        return caught_up

    def housekeeping(self) -> None:
        """Expire idle diagnoses and forget finished
        claims older than Slack ever retries (a week).
        """
        now = dt.datetime.now(dt.UTC)
        try:
            expired = self.core.state.sessions.expire(now - self.core.session_ttl)
            forgotten = self.core.state.events.forget(now - dt.timedelta(days=7))
        except UnavailableError:
            log.warning("housekeeping skipped: state store unavailable")
            return
        log.info("housekeeping: %d diagnoses expired, %d old claims forgotten", expired, forgotten)

    def stop_scheduler(self) -> None:
        if self.scheduler is not None:
            self.jobs.unregister(DigestJobs.name)
            if not self.jobs.kinds:
                self.jobs.shutdown()
            self.scheduler = None

    def fire(self, sub_id: str, due: dt.datetime) -> RunResult | None:
        try:
            sub = self.core.state.subscriptions.by_id(sub_id)
            if sub is None:
                return None  # unsubscribed meanwhile
            try:
                result = self.service.run(
                    sub, slot_key(due), SlackPoster(self.client_for(sub.team))
                )
            except LookupError as exc:
                log.warning("digest for %s skipped: %s", sub.channel, exc)
                return None
            except NotPosted as exc:
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

    def resync(self) -> None:
        """Match the scheduler's jobs to the subscriptions
        in the store (other replicas change them too).
        """
        if self.scheduler is not None:
            self.jobs.sync(DigestJobs.name)


__all__ = ["SlackDigests", "SlackPoster"]
