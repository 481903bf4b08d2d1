"""Bolt listeners, by kind: events, the slash command, and button actions.

Every listener acks first and works after (Bolt runs listeners on a thread pool,
so the ack reaches Slack within its 3 seconds whatever the work costs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmap_bot.slack.listeners import actions, commands, credentials, events

if TYPE_CHECKING:
    from rlmap_bot.slack.front_end import FrontEnd


def register(front_end: FrontEnd) -> None:
    events.register(front_end)
    commands.register(front_end)
    credentials.register(front_end)  # before actions' catch-all
    actions.register(front_end)
