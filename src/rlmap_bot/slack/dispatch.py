"""Running registry commands for Slack: `/rlmap TEXT`, mentions and DMs.

The text is parsed by the command registry (the same declarations the CLI and the
shell use); a line that is not a command is a question. Results are rendered as
Block Kit: privately for slash commands, in the thread for mentions. Problems a
person can act on are told privately in one line; anything else is logged.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from slack_sdk import WebClient

from rlmap_bot.commands import REGISTRY
from rlmap_bot.commands.admin import help_for
from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.registry import Parsed
from rlmap_bot.commands.results import Notice
from rlmap_bot.core import Core
from rlmap_bot.diagnosis.flow import Step
from rlmap_bot.errors import RlmapError, UnavailableError, UsageError
from rlmap_bot.search.engine import Answer
from rlmap_bot.settings import Settings
from rlmap_bot.slack import posting
from rlmap_bot.slack.blocks import ask as ask_blocks
from rlmap_bot.slack.blocks import help as help_blocks
from rlmap_bot.slack.blocks import render, to_dicts
from rlmap_bot.slack.blocks.common import FALLBACK_LIMIT
from rlmap_bot.slack.channel import SlackChannel
from rlmap_bot.slack.diagnosis import DiagnosisThreads
from rlmap_bot.slack.markup import cut, escape
from rlmap_bot.wording import sentence

log = logging.getLogger(__name__)


class SlackCommands:
    def __init__(self, core: Core, settings: Settings, threads: DiagnosisThreads):
        self.core, self.settings, self.threads = core, settings, threads
        self.extra: dict[str, Any] = {}  # what commands share with the front-end (the watch service)

    def _parse(self, text: str) -> Parsed | None:
        if not text.strip():
            help_command = REGISTRY.get("help")
            assert help_command is not None, "help is always registered (commands/admin.py)"
            return Parsed(help_command, {})
        return REGISTRY.parse(text, "slack", self.core)

    def _invocation(self, client: WebClient, team: str, channel: str, user: str, thread_ts: str | None,
                    respond: Callable | None) -> Invocation:
        return Invocation.of(self.core, "slack", user=user, team=team, channel=channel, thread_ts=thread_ts,
                             admin=user in self.settings.admins, io=SlackChannel(client, channel, user, respond),
                             extra=dict(self.extra))

    # -- /rlmap ----------------------------------------------------------------------------------
    def slash(self, client: WebClient, text: str, team: str, channel: str, user: str, respond: Callable) -> None:
        try:
            parsed = self._parse(text)
        except UsageError as exc:
            usage = help_for(REGISTRY, "slack", problem=str(exc))
            respond(response_type="ephemeral", text=escape(sentence(exc)), blocks=to_dicts(help_blocks.help_blocks(usage)))
            return
        ctx = self._invocation(client, team, channel, user, None, respond)
        try:
            result = self.core.ask(text) if parsed is None else parsed.command.handler(ctx, **parsed.args)
        except UnavailableError:
            raise  # not the person's doing: the listener says the bot is briefly unavailable
        except RlmapError as exc:
            respond(response_type="ephemeral", text=escape(sentence(exc)))
            return
        if result is None:
            return
        if isinstance(result, Step):
            self.threads.post_first_card(client, channel, result, respond=respond)
            return
        blocks, text = render(result)
        public = isinstance(result, Notice) and result.public
        respond(response_type="in_channel" if public else "ephemeral", text=cut(text, FALLBACK_LIMIT),
                blocks=to_dicts(blocks))

    # -- mentions and DMs ------------------------------------------------------------------------
    def chat(self, client: WebClient, text: str, team: str, channel: str, user: str, thread_ts: str | None,
             anchor_ts: str) -> None:
        """A mention (answered in its thread) or a DM (answered in the DM).

        ``thread_ts`` is where the answer goes (None: the DM itself); ``anchor_ts`` is the
        thread a diagnosis started from this message lives in.
        """
        try:
            parsed = self._parse(text)
            ctx = self._invocation(client, team, channel, user, anchor_ts, None)
            result: Any = self.core.ask(text) if parsed is None else parsed.command.handler(ctx, **parsed.args)
        except UnavailableError:
            raise  # not the person's doing: handled again once the state store answers
        except RlmapError as exc:
            posting.tell(client, channel, user, escape(sentence(exc)), thread_ts=thread_ts)
            return
        if result is None:
            return
        if isinstance(result, Step):
            self.threads.post_first_card(client, channel, result)
            return
        if isinstance(result, Answer):  # in a thread: no "share" button, everyone sees it already
            blocks, text = ask_blocks.answer_blocks(result), escape(ask_blocks.answer_text(result))
        else:
            blocks, text = render(result)
        posting.post(client, channel, user, blocks=blocks, text=text, thread_ts=thread_ts)
