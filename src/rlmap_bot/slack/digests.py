"""Digests over Slack: the poster (metadata-tagged posts, history look-ups).

When digests are sent is the core's (:class:`rlmap_bot.digest.schedule.DigestSchedule`); the
`/rlmap digest ...` commands are registry commands (:mod:`rlmap_bot.commands.digest`).
"""

from __future__ import annotations

import datetime as dt

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.metadata import Metadata

from rlmap_bot import metrics
from rlmap_bot.digest.service import METADATA_EVENT
from rlmap_bot.jobs import NotPosted
from rlmap_bot.results.digest import Digest
from rlmap_bot.slack.blocks.common import context, fallback
from rlmap_bot.slack.blocks.digest import digest_blocks, digest_text
from rlmap_bot.slack.markup import prose
from rlmap_bot.slack.posting import CANNOT_POST, find_by_metadata


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


__all__ = ["SlackPoster"]
