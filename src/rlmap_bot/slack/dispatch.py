"""Running registry commands for Slack: `/rlmap TEXT`, mentions, DMs, buttons and forms, one path.

The text becomes an invocation through the command registry (the same declarations
and the same click parser the CLI and the shell use; a line that is not a command
is a question for ``ask``), :func:`rlmap_bot.commands.run` runs it, and a
:class:`Reply` renders the typed result as Block Kit: privately for slash commands
(:class:`SlashReply`), in the thread for mentions and DMs (:class:`ThreadReply`); a button or a
form runs the command it stands for (:meth:`SlackCommands.press`) and its reply is in
:mod:`rlmap_bot.slack.clicks`.
Problems a person can act on are told privately in one line; anything else is logged.
"""

from __future__ import annotations

import logging
from functools import singledispatchmethod
from typing import TYPE_CHECKING, Any, Callable

from slack_sdk import WebClient

from rlmap_bot.commands import REGISTRY, Parsed
from rlmap_bot.commands import run as run_command
from rlmap_bot.commands.admin import help_for
from rlmap_bot.commands.context import Invocation
from rlmap_bot.core import Core
from rlmap_bot.errors import RlmapError, UnavailableError, UsageError
from rlmap_bot.results.ask import Answer, AnswerStream
from rlmap_bot.results.curation import CurationForm
from rlmap_bot.results.diagnosis import Move, Step
from rlmap_bot.results.general import Notice
from rlmap_bot.results.guided import GuidedRun
from rlmap_bot.results.watch import Unwatched
from rlmap_bot.settings import Settings
from rlmap_bot.slack import posting
from rlmap_bot.slack.blocks import ask as ask_blocks
from rlmap_bot.slack.blocks import curate as curate_blocks
from rlmap_bot.slack.blocks import help as help_blocks
from rlmap_bot.slack.blocks import render, to_dicts
from rlmap_bot.slack.blocks.common import FALLBACK_LIMIT, section
from rlmap_bot.slack.channel import SlackChannel
from rlmap_bot.slack.diagnosis import DiagnosisThreads
from rlmap_bot.slack.markup import cut, escape
from rlmap_bot.wording import sentence

if TYPE_CHECKING:
    from rlmap_bot.curation.service import Cards, Curation
    from rlmap_bot.runs.sources.access import Access
    from rlmap_bot.watch.service import WatchService

log = logging.getLogger(__name__)


class Reply:
    """Where one request's result goes. Subclasses say
    how a result, a problem and a usage slip are sent.

    ``card_ts`` is the card a click came from (a diagnosis move updates it in place);
    ``trigger_id`` lets a click open a form.
    """

    respond: Callable | None = None
    card_ts: str | None = None
    trigger_id: str | None = None

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
    def _(self, result: Unwatched) -> None:
        """Told to everyone in the channel, as the watch was announced."""
        blocks, text = render(result)
        self.send(blocks, text, public=True)

    @result.register
    def _(self, result: Move) -> None:
        """The card the click came from, updated in place (a new card when it is gone)."""
        step = result.step
        self.threads.show_step(
            self.client, self.channel, step, ts=self.card_ts, note=step.note, by=result.by
        )

    @result.register
    def _(self, result: CurationForm) -> None:
        """The form, opened over the click that asked for it."""
        if self.trigger_id is None:  # typed text opens no form: the card's buttons do
            said = "Use the buttons on the suggestion's card in the curators' channel."
            self.send([section(said)], said, public=False)
            return
        candidate = result.candidate
        if result.kind == "edit":
            stages = [(c.id, c.title) for c in result.stages]
            subtopics = [(c.id, c.title) for c in result.subtopics]
            view = curate_blocks.edit_modal(result.suggestion_id, candidate, stages, subtopics)
        else:
            view = curate_blocks.reject_modal(result.suggestion_id, candidate)
        self.client.views_open(trigger_id=self.trigger_id, view=view)

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


class RespondReply(Reply):
    """A reply through Slack's response_url (``respond``): to a slash command or a click."""

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


class SlashReply(RespondReply):
    """`/rlmap`: privately through the response_url; a usage slip comes with the help."""

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
