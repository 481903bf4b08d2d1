"""The `/rlmap` slash command: ack at once, then run the registry command it names."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable

from slack_sdk import WebClient

from rlmap_bot.slack import posting
from rlmap_bot.slack.markup import from_slack, name_authors

if TYPE_CHECKING:
    from rlmap_bot.slack.front_end import FrontEnd


def register(front_end: FrontEnd) -> None:
    @front_end.app.command("/rlmap")
    def on_command(
        ack: Callable, command: dict, respond: Callable, client: WebClient, context: Any
    ) -> None:
        ack()
        with front_end.after_ack(context, respond):
            text = name_authors(
                command.get("text", ""), lambda user: posting.real_name(client, user)
            )
            front_end.commands.slash(
                client,
                from_slack(text),
                team=command.get("team_id", ""),
                channel=command.get("channel_id", ""),
                user=command.get("user_id", ""),
                respond=respond,
            )

    @front_end.app.command(re.compile(".*"))
    def on_other_command(ack: Callable) -> None:
        ack()  # a command this app does not declare: acked, so its claim is finished
