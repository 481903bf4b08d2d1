"""Running registry commands for Slack: `/rlmap TEXT`, mentions and DMs, one path for all three.

The text becomes an invocation through the command registry (the same declarations
and the same click parser the CLI and the shell use; a line that is not a command
is a question for ``ask``), :func:`rlmap_bot.commands.run` runs it, and a
:class:`Reply` renders the typed result as Block Kit: privately for slash commands
(:class:`SlashReply`), in the thread for mentions and DMs (:class:`ThreadReply`).
Problems a person can act on are told privately in one line; anything else is logged.
"""

from __future__ import annotations

import logging
from functools import singledispatchmethod
from typing import TYPE_CHECKING, Any, Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.views import View

from rlmap_bot.commands import REGISTRY, Parsed
from rlmap_bot.commands import run as run_command
from rlmap_bot.commands.admin import help_for
from rlmap_bot.commands.context import Invocation
from rlmap_bot.core import Core
from rlmap_bot.errors import NotFoundError, RlmapError, UnavailableError, UsageError
from rlmap_bot.results.ask import Answer, AnswerStream
from rlmap_bot.results.cards import Card
from rlmap_bot.results.diagnosis import Step
from rlmap_bot.results.general import Notice
from rlmap_bot.results.guided import GuidedRun
from rlmap_bot.settings import Settings
from rlmap_bot.slack import posting
from rlmap_bot.slack.blocks import ask as ask_blocks
from rlmap_bot.slack.blocks import entries, render, to_dicts
from rlmap_bot.slack.blocks import help as help_blocks
from rlmap_bot.slack.blocks.common import FALLBACK_LIMIT, fallback, fit, plain, section
from rlmap_bot.slack.channel import SlackChannel
from rlmap_bot.slack.diagnosis import DiagnosisThreads
from rlmap_bot.slack.markup import cut, escape
from rlmap_bot.wording import sentence

if TYPE_CHECKING:
    from rlmap_bot.curation.service import Cards, Curation
    from rlmap_bot.runs.sources import Access
    from rlmap_bot.watch.service import WatchService

log = logging.getLogger(__name__)


class Reply:
    """Where one request's result goes. Subclasses say
    how a result, a problem and a usage slip are sent.
    """

    respond: Callable | None = None

    def __init__(self, client: WebClient, channel: str, user: str, threads: DiagnosisThreads):
        self.client, self.channel, self.user, self.threads = client, channel, user, threads

    @singledispatchmethod
    def result(self, result: Any) -> None:
        blocks, text = render(result)
        self.send(blocks, text, public=isinstance(result, Notice) and result.public)

    @result.register
    def _(self, result: None) -> None:
        """The command told the person already (e.g. the bot cannot post here)."""

    @result.register
    def _(self, result: Step) -> None:
        self.threads.post_first_card(self.client, self.channel, result, respond=self.respond)

    @result.register
    def _(self, result: AnswerStream) -> None:
        for (
            answer
        ) in result.answers:  # each answer as its own reply, as the terminal prints each in turn
            self.result(answer)

    @result.register
    def _(self, result: GuidedRun) -> None:
        """What the logs told, then the card that asks the rest."""
        blocks, text = render(result.readings)
        self.send(blocks, text, public=False)
        self.result(result.step)

    def send(self, blocks: list, text: str, public: bool) -> None:
        raise NotImplementedError

    def problem(self, exc: RlmapError) -> None:
        raise NotImplementedError

    def usage(self, exc: UsageError) -> None:
        self.problem(exc)


class SlashReply(Reply):
    """`/rlmap`: privately through the response_url; a usage slip comes with the help."""

    def __init__(
        self,
        client: WebClient,
        channel: str,
        user: str,
        threads: DiagnosisThreads,
        respond: Callable,
    ):
        super().__init__(client, channel, user, threads)
        self.respond = respond

    def send(self, blocks: list, text: str, public: bool) -> None:
        assert self.respond is not None
        self.respond(
            response_type="in_channel" if public else "ephemeral",
            text=cut(text, FALLBACK_LIMIT),
            blocks=to_dicts(blocks),
        )

    def problem(self, exc: RlmapError) -> None:
        assert self.respond is not None
        self.respond(response_type="ephemeral", text=escape(sentence(exc)))

    def usage(self, exc: UsageError) -> None:
        assert self.respond is not None
        usage = help_for(REGISTRY, "slack", problem=str(exc))
        self.respond(
            response_type="ephemeral",
            text=escape(sentence(exc)),
            blocks=to_dicts(help_blocks.help_blocks(usage)),
        )


class ThreadReply(Reply):
    """A mention (answered in its thread) or a DM
    (answered in the DM); problems are told privately.
    """

    def __init__(
        self,
        client: WebClient,
        channel: str,
        user: str,
        threads: DiagnosisThreads,
        thread_ts: str | None,
    ):
        super().__init__(client, channel, user, threads)
        self.thread_ts = thread_ts

    @singledispatchmethod
    def result(self, result: Any) -> None:
        super().result(result)

    @result.register
    def _(self, result: Answer) -> None:
        # In a thread: no "share" button, everyone sees it already.
        self.send(
            ask_blocks.answer_blocks(result), escape(ask_blocks.answer_text(result)), public=True
        )

    def send(self, blocks: list, text: str, public: bool) -> None:
        posting.post(
            self.client, self.channel, self.user, blocks=blocks, text=text, thread_ts=self.thread_ts
        )

    def problem(self, exc: RlmapError) -> None:
        posting.tell(
            self.client, self.channel, self.user, escape(sentence(exc)), thread_ts=self.thread_ts
        )


class ButtonReply(Reply):
    """A button's result: a modal when clicked in App
    Home or inside a modal (no response_url there),
    else a private reply beside the message whose button was clicked. ``title`` names the modal;
    ``card_view`` is how an entry's card is shown (whole, the first part, or its links)."""

    def __init__(
        self,
        client: WebClient,
        body: dict,
        respond: Callable,
        threads: DiagnosisThreads,
        title: str,
        card_view: Callable[[Card], tuple[list, str]] | None = None,
    ):
        channel = (
            body.get("channel", {}).get("id") or body.get("container", {}).get("channel_id") or ""
        )
        super().__init__(client, channel, body.get("user", {}).get("id", ""), threads)
        self.body, self.respond, self.title = body, respond, title
        self.card_view = card_view or (lambda card: (entries.card_blocks(card), card.title))

    @singledispatchmethod
    def result(self, result: Any) -> None:
        super().result(result)

    @result.register
    def _(self, result: Card) -> None:
        blocks, title = self.card_view(result)
        self.show(blocks, title, title)

    def send(self, blocks: list, text: str, public: bool) -> None:
        self.show(blocks, text, self.title)

    def problem(self, exc: RlmapError) -> None:
        said = escape(sentence(exc))
        self.show(
            [section(said)], said, "Not found" if isinstance(exc, NotFoundError) else self.title
        )

    def show(self, blocks: list, text: str, title: str) -> None:
        body, respond = self.body, self.respond
        assert respond is not None
        if body.get("container", {}).get("type") == "view" or not body.get("response_url"):
            view = View(type="modal", title=plain(cut(title, 24), 24), blocks=fit(blocks, 100))
            if (body.get("view") or {}).get("type") == "modal":
                self.client.views_push(
                    trigger_id=body["trigger_id"], view=view
                )  # a click inside a modal
            else:
                self.client.views_open(trigger_id=body["trigger_id"], view=view)
            return
        thread = body.get("message", {}).get("thread_ts") or body.get("container", {}).get(
            "thread_ts"
        )
        respond(
            response_type="ephemeral",
            replace_original=False,
            text=fallback(text),
            blocks=to_dicts(blocks),
            **({"thread_ts": thread} if thread else {}),
        )


class ShareReply(Reply):
    """ "Share" under a private answer: the answer posted
    in the channel for everyone, naming who shared
    it, and the private copy removed; a channel the bot cannot post in is said privately."""

    def __init__(
        self,
        client: WebClient,
        channel: str,
        user: str,
        threads: DiagnosisThreads,
        respond: Callable,
    ):
        super().__init__(client, channel, user, threads)
        self.respond = respond

    @singledispatchmethod
    def result(self, result: Any) -> None:
        super().result(result)

    @result.register
    def _(self, result: Answer) -> None:
        assert self.respond is not None
        try:
            self.client.chat_postMessage(
                channel=self.channel,
                text=fallback(ask_blocks.answer_text(result)),
                blocks=ask_blocks.answer_blocks(result, shared_by=self.user),
                unfurl_links=False,
            )
        except SlackApiError as exc:
            hint = (
                posting.cannot_post_hint(exc) or f"I couldn't share it: {exc.response.get('error')}"
            )
            self.respond(response_type="ephemeral", replace_original=False, text=hint)
            return
        self.respond(delete_original=True)

    def send(self, blocks: list, text: str, public: bool) -> None:
        assert self.respond is not None
        self.respond(
            response_type="ephemeral",
            replace_original=False,
            text=cut(text, FALLBACK_LIMIT),
            blocks=to_dicts(blocks),
        )

    def problem(self, exc: RlmapError) -> None:
        assert self.respond is not None
        self.respond(response_type="ephemeral", replace_original=False, text=escape(sentence(exc)))


class SlackCommands:
    def __init__(self, core: Core, settings: Settings, threads: DiagnosisThreads):
        self.core, self.settings, self.threads = core, settings, threads
        # What the front-end lends the commands, as typed
        # fields of each invocation (set by the app).
        self.watch_service: WatchService | None = None
        self.curation: Curation | None = None
        self.curator_cards: Cards | None = None

    def handle(
        self,
        client: WebClient,
        text: str,
        team: str,
        channel: str,
        user: str,
        anchor_ts: str | None,
        reply: Reply,
    ) -> None:
        """Read, run, reply: the one path of every Slack text.
        ``anchor_ts``: the thread a diagnosis lives in.
        """
        try:
            parsed = REGISTRY.read(text, "slack", self.core)
        except UsageError as exc:
            reply.usage(exc)
            return
        self.run(client, parsed, team, channel, user, anchor_ts, reply)

    def press(
        self,
        client: WebClient,
        command: str,
        args: dict[str, Any],
        team: str,
        channel: str,
        user: str,
        reply: Reply,
        anchor_ts: str | None = None,
    ) -> None:
        """A button: the command it stands for, with its
        arguments, run and replied to as typed text is.
        """
        declared = REGISTRY.get(command)
        assert declared is not None, (
            f"a button names the command {command!r}, which is not declared"
        )
        self.run(client, Parsed(declared, args), team, channel, user, anchor_ts, reply)

    def _run_access(self, team: str) -> Access:
        """What this workspace may read of runs, with its sealed tracker credentials."""
        from rlmap_bot.runs.sources.access import workspace_access

        return workspace_access(self.settings, self.core.state, team)

    def run(
        self,
        client: WebClient,
        parsed: Parsed,
        team: str,
        channel: str,
        user: str,
        anchor_ts: str | None,
        reply: Reply,
    ) -> None:
        ctx = Invocation.of(
            self.core,
            "slack",
            user=user,
            team=team,
            channel=channel,
            thread_ts=anchor_ts,
            admin=user in self.settings.admins,
            io=SlackChannel(client, channel, user, reply.respond),
            workspace=team,
            watch_service=self.watch_service,
            curation=self.curation,
            curator_cards=self.curator_cards,
            run_access=lambda: self._run_access(team),
        )
        try:
            result = run_command(parsed, ctx)
        except UnavailableError:
            # not the person's doing: the listener says the bot is briefly unavailable, or retries
            raise
        except RlmapError as exc:
            reply.problem(exc)
            return
        reply.result(result)

    def slash(
        self, client: WebClient, text: str, team: str, channel: str, user: str, respond: Callable
    ) -> None:
        self.handle(
            client,
            text,
            team,
            channel,
            user,
            None,
            SlashReply(client, channel, user, self.threads, respond),
        )

    def chat(
        self,
        client: WebClient,
        text: str,
        team: str,
        channel: str,
        user: str,
        thread_ts: str | None,
        anchor_ts: str,
    ) -> None:
        """A mention or a DM: ``thread_ts`` is where the answer goes (None: the DM itself)."""
        self.handle(
            client,
            text,
            team,
            channel,
            user,
            anchor_ts,
            ThreadReply(client, channel, user, self.threads, thread_ts),
        )
