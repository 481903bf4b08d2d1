"""Digests over Slack: the poster (metadata-tagged posts, history look-ups) and the commands."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from typing import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.metadata import Metadata

from rlmap_bot.core import Core
from rlmap_bot.digest.content import Digest
from rlmap_bot.digest.schedule import DigestScheduler, next_run, slot_key
from rlmap_bot.digest.service import METADATA_EVENT, DeliveryError, DigestService, RunResult
from rlmap_bot.digest.subscribe import USAGE, SubscribeError, parse_subscription
from rlmap_bot.slack import blocks as bk
from rlmap_bot.slack.hints import CANNOT_POST
from rlmap_bot.state.models import Subscription

log = logging.getLogger(__name__)


class SlackPoster:
    """Delivers digests with chat.postMessage and finds them again by their metadata."""

    def __init__(self, client: WebClient):
        self.client = client

    def post_digest(self, channel: str, digest: Digest, digest_id: str) -> str:
        try:
            response = self.client.chat_postMessage(
                channel=channel, text=bk.fallback(bk.digest_text(digest)), blocks=bk.digest_blocks(digest),
                metadata=Metadata(event_type=METADATA_EVENT, event_payload={"digest_id": digest_id}),
                unfurl_links=False, unfurl_media=False,
            )
        except SlackApiError as exc:  # Slack answered: the message was not posted
            code = str(exc.response.get("error", "error"))
            raise DeliveryError(code, CANNOT_POST.get(code)) from None
        return response["ts"]

    def post_note(self, channel: str, text: str) -> None:
        self.client.chat_postMessage(channel=channel, text=text, blocks=[bk.context(bk.escape(text))])

    def find_digest(self, channel: str, digest_id: str, since: dt.datetime) -> str | None:
        cursor = None
        for _ in range(20):  # at most 20 pages of history since the run began
            page = self.client.conversations_history(channel=channel, include_all_metadata=True, limit=200,
                                                     oldest=f"{since.timestamp():.6f}", cursor=cursor)
            for message in page.get("messages", []):
                meta = message.get("metadata") or {}
                if meta.get("event_type") == METADATA_EVENT and (meta.get("event_payload") or {}).get("digest_id") == digest_id:
                    return message["ts"]
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not page.get("has_more") or not cursor:
                return None
        return None


class SlackDigests:
    """The `/rlmap digest ...` commands and the scheduler's deliveries."""

    def __init__(self, core: Core, client_for: Callable[[str], WebClient]):
        self.core = core
        self.client_for = client_for
        self.service = DigestService(core)
        self.scheduler: DigestScheduler | None = None

    # -- scheduling -----------------------------------------------------------------------------
    def start_scheduler(self, now: dt.datetime | None = None) -> list[str]:
        self.scheduler = DigestScheduler(self.fire, load=self.core.state.list_subscriptions)
        caught_up = self.scheduler.start(self.core.state.list_subscriptions(), now=now)
        self.scheduler.scheduler.add_job(self.housekeeping, "interval", hours=1, id="sync:housekeeping",
                                         replace_existing=True)
        return caught_up

    def housekeeping(self) -> None:
        """Expire idle diagnoses and forget event ids older than Slack ever retries (a week)."""
        now = dt.datetime.now(dt.timezone.utc)
        expired = self.core.state.expire_sessions(now - self.core.session_ttl)
        forgotten = self.core.state.forget_events(now - dt.timedelta(days=7))
        log.info("housekeeping: %d diagnoses expired, %d old event ids forgotten", expired, forgotten)

    def stop_scheduler(self) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown()

    def fire(self, sub_id: str, due: dt.datetime) -> RunResult | None:
        sub = next((s for s in self.core.state.list_subscriptions() if s.id == sub_id), None)
        if sub is None:
            return None  # unsubscribed meanwhile
        try:
            result = self.service.run(sub, slot_key(due), SlackPoster(self.client_for(sub.team)))
        except LookupError as exc:
            log.warning("digest for %s skipped: %s", sub.channel, exc)
            return None
        except DeliveryError as exc:
            log.warning("digest for %s not delivered: %s", sub.channel, exc.code)
            return None
        log.info("digest for %s: %s (%d entries)", sub.channel, result.status, result.entries)
        return result

    # -- commands ---------------------------------------------------------------------------------
    def resync(self) -> None:
        """Match the scheduler's jobs to the subscriptions in the store (other replicas change them too)."""
        if self.scheduler is not None:
            self.scheduler.sync(self.core.state.list_subscriptions())

    def command(self, words: list[str], team: str, channel: str, user: str, respond: Callable,
                client: WebClient) -> None:
        action = words[0].lower() if words else ""
        rest = words[1:]
        sub = self.core.state.get_subscription(team, channel)
        if action == "subscribe":
            self._subscribe(rest, team, channel, user, respond, client)
        elif action == "unsubscribe" and not rest:
            if self.core.state.delete_subscription(team, channel):
                if self.scheduler and sub:
                    self.scheduler.remove(sub.id)
                respond(response_type="in_channel", text=f"<@{bk.escape(user)}> unsubscribed this channel from the RL Map digest.")
            else:
                respond(response_type="ephemeral", text="This channel has no digest subscription.")
        elif action == "list" and not rest:
            self._list(team, respond)
        elif action == "preview" and not rest:
            if sub is None:
                respond(response_type="ephemeral", text="This channel has no digest subscription. " + USAGE)
                return
            digest = self.service.preview(sub)
            respond(response_type="ephemeral", text=bk.digest_text(digest), blocks=bk.to_dicts(bk.digest_blocks(digest, preview=True)))
        elif action == "now" and not rest:
            if sub is None:
                respond(response_type="ephemeral", text="This channel has no digest subscription. " + USAGE)
                return
            try:
                result = self.service.run(sub, f"now:{uuid.uuid4().hex}", SlackPoster(client))
            except DeliveryError as exc:
                respond(response_type="ephemeral", text=exc.hint or f"Could not post the digest: {exc.code}")
                return
            text = {"posted": f"Posted a digest of {_plural(result.entries, 'entry', 'entries')}.",
                    "noted": "Nothing new since the last digest (a note was posted).",
                    "duplicate": "Another digest for this channel is being posted right now; nothing more was posted."}.get(
                result.status, "Nothing new since the last digest; nothing was posted.")
            respond(response_type="ephemeral", text=text)
        else:
            respond(response_type="ephemeral", text=f"Usage: {USAGE}")

    def _subscribe(self, words: list[str], team: str, channel: str, user: str, respond: Callable,
                   client: WebClient) -> None:
        try:
            sub = parse_subscription(words, team, channel, user, self._user_tz(client, user), self.core.store.catalog)
        except SubscribeError as exc:
            respond(response_type="ephemeral", text=f"{bk.escape(exc)}. Usage: {USAGE}")
            return
        previous = self.core.state.get_subscription(team, channel)
        if previous is not None:  # re-subscribing changes the schedule, not what counts as new
            sub = sub.model_copy(update={"created_at": previous.created_at, "last_run_at": previous.last_run_at})
        when = next_run(sub, dt.datetime.now(dt.timezone.utc)).strftime("%a %d %b %H:%M %Z")
        filters = f", only {', '.join(sub.filters)}" if sub.filters else ""
        text = (f"<@{bk.escape(user)}> subscribed this channel to the RL Map digest, {bk.escape(sub.when)}"
                f"{bk.escape(filters)}. Next: {when}.")
        try:  # the confirmation doubles as proof that the bot can post here
            client.chat_postMessage(channel=channel, text=text, blocks=[bk.section(text)])
        except SlackApiError as exc:
            code = str(exc.response.get("error", ""))
            respond(response_type="ephemeral",
                    text=(CANNOT_POST.get(code) or f"I could not post here ({code}).") + " The subscription was not saved.")
            return
        if previous is not None and self.scheduler:
            self.scheduler.remove(previous.id)
        self.core.state.save_subscription(sub)
        if self.scheduler:
            self.scheduler.add(sub)
        respond(response_type="ephemeral", text=f"Subscribed. Next digest: {when}.")

    def _list(self, team: str, respond: Callable) -> None:
        subs = self.core.state.list_subscriptions(team=team)
        if not subs:
            respond(response_type="ephemeral", text="No channel in this workspace subscribes to the digest.")
            return
        now = dt.datetime.now(dt.timezone.utc)
        lines = [f"• <#{bk.escape(s.channel)}>: {bk.escape(s.when)}"
                 + (f", {bk.escape(', '.join(s.filters))}" if s.filters else "")
                 + f"; next {next_run(s, now).strftime('%a %d %b %H:%M %Z')}" for s in subs]
        respond(response_type="ephemeral", text="Digest subscriptions:\n" + "\n".join(lines))

    @staticmethod
    def _user_tz(client: WebClient, user: str) -> str:
        """The subscriber's Slack timezone, UTC if Slack will not say."""
        from rlmap_bot.digest.schedule import zone

        try:
            name = client.users_info(user=user)["user"].get("tz") or "UTC"
            zone(name)  # Slack's name must be one this machine knows
            return name
        except (SlackApiError, KeyError, TypeError, ValueError):
            return "UTC"


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


__all__ = ["SlackDigests", "SlackPoster", "Subscription"]
