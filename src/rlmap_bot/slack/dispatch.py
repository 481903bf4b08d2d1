"""Running registry commands for Slack: `/rlmap TEXT`, mentions, DMs, buttons and forms, one path.

The text becomes an invocation through the command registry (the same declarations
and the same click parser the CLI and the shell use; a line that is not a command
is a question for ``ask``), :func:`rlmap_bot.commands.run` runs it, and the request's
:class:`Reply` sends what the one dispatch (:mod:`rlmap_bot.slack.render`) makes of the typed
result: privately for slash commands (:class:`SlashReply`), in the thread for mentions and DMs
(:class:`ThreadReply`); a button or a form runs the command it stands for
(:meth:`SlackCommands.press`) and its reply is in :mod:`rlmap_bot.slack.clicks`.
Problems a person can act on are told privately in one line; anything else is logged.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from slack_sdk import WebClient

from rlmap_bot.commands import REGISTRY, Parsed
from rlmap_bot.commands import run as run_command
from rlmap_bot.commands.admin import help_for
from rlmap_bot.commands.context import Invocation
from rlmap_bot.core import Core
from rlmap_bot.errors import RlmapError, UnavailableError, UsageError
from rlmap_bot.settings import Settings
from rlmap_bot.slack import posting
from rlmap_bot.slack.admins import WorkspaceAdmins
from rlmap_bot.slack.blocks import help as help_blocks
from rlmap_bot.slack.blocks.common import FALLBACK_LIMIT, section, to_dicts
from rlmap_bot.slack.channel import SlackChannel
from rlmap_bot.slack.diagnosis import DiagnosisThreads
from rlmap_bot.slack.markup import cut, prose
from rlmap_bot.slack.render import BRIEF, Chart, Message, Place, render
from rlmap_bot.wording import sentence

if TYPE_CHECKING:
    from rlmap_bot.curation.service import Cards, Curation
    from rlmap_bot.runs.sources.access import Access
    from rlmap_bot.watch.service import WatchService

log = logging.getLogger(__name__)


class Reply:
    """Where one request's replies go: the transport, never the rendering.

    :meth:`result` renders the result through the one dispatch (:func:`render.render`) for this
    reply's :class:`~rlmap_bot.slack.render.Place`, and each out reaches Slack through what the
    reply holds: :meth:`send` for a message (each subclass says where), ``threads`` for a
    diagnosis card, ``card_ts`` for the card a click came from (a move updates it in place),
    ``trigger_id`` for a click that opens a form. :meth:`problem` and :meth:`usage` say a refusal.
    """

    respond: Callable | None = None
    card_ts: str | None = None
    trigger_id: str | None = None
    private = True  # what is sent is seen by the asker alone
    view = BRIEF  # the view of the result a button asked for
    keep: Callable[[Any], str] | None = None  # keeps a result for its card's Details button
    thread_ts: str | None = None  # the thread the answer is in (ThreadReply)

    def __init__(self, client: WebClient, channel: str, user: str, threads: DiagnosisThreads):
        self.client, self.channel, self.user, self.threads = client, channel, user, threads

    @property
    def place(self) -> Place:
        return Place(private=self.private, user=self.user, view=self.view, keep=self.keep)

    def result(self, result: Any) -> None:
        for out in render(result, self.place):
            out.to(self)

    def send(self, message: Message) -> None:
        raise NotImplementedError

    def chart(self, chart: Chart) -> None:
        """A result's chart, uploaded where the answer is seen: in its thread (a DM's own
        conversation when there is none)."""
        posting.upload_chart(
            self.client,
            self.channel,
            self.thread_ts,
            chart.path,
            chart.filename,
            chart.name,
            title=chart.title,
            alt=chart.alt,
        )

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
    """`/rlmap`: privately through the response_url (to the channel when the message is
    public); a usage slip comes with the help."""

    def send(self, message: Message) -> None:
        assert self.respond is not None
        self.respond(
            response_type="in_channel" if message.public else "ephemeral",
            text=cut(message.text, FALLBACK_LIMIT),
            blocks=to_dicts(message.blocks),
        )

    def problem(self, exc: RlmapError) -> None:
        assert self.respond is not None
        self.respond(response_type="ephemeral", text=prose(sentence(exc)))

    def chart(self, chart: Chart) -> None:
        """The answer is the asker's alone, and a file in a channel is everyone's (Slack has no
        private file in a channel): the chart goes to the asker's DM with the bot, under a line
        that says what it is (chat.postMessage to a user's id posts there)."""
        line = prose(chart.title)
        posted = posting.post(
            self.client, self.user, self.user, [section(line)], line, respond=self.respond
        )
        if posted is not None:
            posting.upload_chart(
                self.client,
                posted["channel"],
                posted["ts"],
                chart.path,
                chart.filename,
                chart.name,
                title=chart.title,
                alt=chart.alt,
            )

    def usage(self, exc: UsageError) -> None:
        assert self.respond is not None
        usage = help_for(REGISTRY, "slack", problem=str(exc))
        self.respond(
            response_type="ephemeral",
            text=prose(sentence(exc)),
            blocks=to_dicts(help_blocks.help_blocks(usage)),
        )


class ThreadReply(Reply):
    """A mention (answered in its thread) or a DM (answered in the DM), seen by everyone there;
    problems are told privately."""

    private = False

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

    def send(self, message: Message) -> None:
        posting.post(
            self.client,
            self.channel,
            self.user,
            blocks=message.blocks,
            text=message.text,
            thread_ts=self.thread_ts,
        )

    def problem(self, exc: RlmapError) -> None:
        posting.tell(
            self.client, self.channel, self.user, prose(sentence(exc)), thread_ts=self.thread_ts
        )


def keeper(core: Core, team: str) -> Callable[[Any], str]:
    """Keeps a result (a pydantic model) for its card's Details button, in ``team``'s workspace;
    returns the id the button carries."""
    return lambda result: core.state.details.keep(
        team, type(result).__name__, result.model_dump_json()
    )


class SlackCommands:
    def __init__(self, core: Core, settings: Settings, threads: DiagnosisThreads):
        self.core, self.settings, self.threads = core, settings, threads
        self.admins = WorkspaceAdmins(settings)  # who may run admin commands, per workspace
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
        # A command whose result carries a chart draws it into a folder lent here; the reply
        # uploads it, and the folder goes with the request.
        lent = (
            tempfile.TemporaryDirectory(prefix="rlmap-chart-")
            if parsed.command.charts
            else contextlib.nullcontext(None)
        )
        with lent as folder:
            charts = Path(folder) if folder is not None else None
            ctx = Invocation.of(
                self.core,
                "slack",
                user=user,
                team=team,
                channel=channel,
                thread_ts=anchor_ts,
                # Asked of Slack only for a command that needs it (users.info, kept a while).
                admin=parsed.command.admin and self.admins.allows(client, team, user),
                io=SlackChannel(client, channel, user, reply.respond, keep=keeper(self.core, team)),
                workspace=team,
                watch_service=self.watch_service,
                curation=self.curation,
                curator_cards=self.curator_cards,
                run_access=lambda: self._run_access(team),
                charts=charts,
            )
            try:
                result = run_command(parsed, ctx)
            except UnavailableError:
                # not the person's doing: the listener says the bot is briefly unavailable, or
                # retries
                raise
            except RlmapError as exc:
                reply.problem(exc)
                return
            reply.keep = keeper(self.core, team)
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
