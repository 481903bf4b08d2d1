"""The Slack side of a command that acts in a channel (posting, the user's timezone, threads)."""

from __future__ import annotations

from typing import Callable

from pydantic import BaseModel
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rlmap_bot.slack import posting
from rlmap_bot.slack.render import message


class SlackChannel:
    """Implements :class:`rlmap_bot.commands.context.Channel` for one channel and one user."""

    def __init__(
        self,
        client: WebClient,
        channel: str,
        user: str,
        respond: Callable | None = None,
        keep: Callable[[BaseModel], str] | None = None,
    ):
        self.client, self.channel, self.user, self.respond = client, channel, user, respond
        self.keep = keep  # keeps a post's result for its Details button

    def announce(self, news: BaseModel) -> bool:
        said = message(news)
        try:
            self.client.chat_postMessage(channel=self.channel, text=said.text, blocks=said.blocks)
            return True
        except SlackApiError as exc:
            code = str(exc.response.get("error", ""))
            hint = posting.CANNOT_POST.get(code) or f"I could not post here ({code})."
            posting.tell(
                self.client,
                self.channel,
                self.user,
                hint + " The change was not saved.",
                respond=self.respond,
            )
            return False

    def user_timezone(self) -> str:
        from rlmap_bot.digest.schedule import zone

        try:
            name = self.client.users_info(user=self.user)["user"].get("tz") or "UTC"
            zone(name)  # Slack's name must be one this machine knows
            return name
        except (SlackApiError, KeyError, TypeError, ValueError):
            return "UTC"

    def open_thread(self, news: BaseModel) -> str | None:
        said = message(news)
        root = posting.post(
            self.client,
            self.channel,
            self.user,
            blocks=said.blocks,
            text=said.text,
            respond=self.respond,
        )
        return root["ts"] if root else None

    def digest_poster(self):
        from rlmap_bot.slack.digests import SlackPoster

        return SlackPoster(self.client)

    def watch_poster(self):
        from rlmap_bot.slack.watches import SlackWatchPoster

        return SlackWatchPoster(self.client, keep=self.keep)
