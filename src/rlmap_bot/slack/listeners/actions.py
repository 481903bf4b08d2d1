"""Buttons: the follow-ups (an entry, whole or its related entries, the stages, help), sharing
an answer, starting and answering diagnoses.

Every button runs the command it stands for (`show`, `stages`, `help`, `ask`, `diagnose`, and a
diagnosis card's `diagnose move`) through the one door of typed text, :meth:`SlackCommands.press`,
and its :class:`Reply` sends what the one dispatch makes of the result: in a modal or privately
(:class:`ButtonReply`, in the view the button asks for: ``clicks.FOLLOW_UPS``), in the channel
(:class:`ShareReply`), as a diagnosis thread, or on the card clicked (:class:`CardReply`).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any, Callable

from slack_sdk import WebClient

from rlmap_bot import wording
from rlmap_bot.slack.blocks import ask
from rlmap_bot.slack.blocks import diagnosis as cards
from rlmap_bot.slack.clicks import FOLLOW_UPS, ButtonReply, CardReply, FollowUp, ShareReply
from rlmap_bot.slack.dispatch import Reply, SlashReply, ThreadReply
from rlmap_bot.slack.markup import prose
from rlmap_bot.state.models import utcnow

if TYPE_CHECKING:
    from rlmap_bot.slack.front_end import FrontEnd

# A second click on "Diagnose a run" this soon after the first, before any answer, is the same
# request (a double click, a second look at the answer): judgement, a few minutes of reading.
_AGAIN = dt.timedelta(minutes=10)


def _beside(respond: Callable) -> Callable:
    """``respond`` that adds a message instead of replacing the one whose button was clicked."""

    def send(**kwargs: Any) -> Any:
        kwargs.setdefault("replace_original", False)
        return respond(**kwargs)

    return send


def _waiting(front_end: FrontEnd, team: str, channel: str, user: str, thread: str | None) -> bool:
    """A diagnosis not yet answered where this click
    would start one: in the thread, or (from a private
    answer, which opens a new thread) one the same person
    started in the channel in the last minutes."""
    recent = utcnow() - _AGAIN
    for session in front_end.core.flow.open_sessions(team=team):
        if session.channel != channel or session.history:
            continue
        if thread is not None and session.thread_ts == thread:
            return True
        if thread is None and session.user == user and session.started_at >= recent:
            return True
    return False


def _team(body: dict) -> str:
    return body.get("team", {}).get("id") or body.get("user", {}).get("team_id", "")


def _channel(body: dict) -> str:
    return body.get("channel", {}).get("id") or body.get("container", {}).get("channel_id") or ""


def register(front_end: FrontEnd) -> None:
    app = front_end.app

    def press(
        command: str, args: dict[str, Any], body: dict, client: WebClient, reply: Reply
    ) -> None:
        """A button's command, through the same door as typed text (SlackCommands)."""
        user = body.get("user", {}).get("id", "")
        front_end.commands.press(
            client, command, args, team=_team(body), channel=_channel(body), user=user, reply=reply
        )

    def follow_up(action_id: str | re.Pattern, shown: FollowUp) -> None:
        @app.action(action_id)
        def on_follow_up(
            ack: Callable,
            action: dict,
            body: dict,
            client: WebClient,
            respond: Callable,
            context: Any,
        ) -> None:
            ack()
            with front_end.after_ack(context, respond):
                reply = ButtonReply(
                    client,
                    body,
                    respond,
                    front_end.threads,
                    shown.title,
                    view=shown.view,
                    modal=shown.modal,
                )
                press(shown.command, shown.args(action.get("value", "")), body, client, reply)

    for action_id, shown in FOLLOW_UPS.items():
        follow_up(action_id, shown)

    @app.action("answer_share")
    def on_share(
        ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable, context: Any
    ) -> None:
        ack()
        with front_end.after_ack(context, respond):
            user = body.get("user", {}).get("id", "")
            press(
                "ask",
                {"question": action.get("value", "")},
                body,
                client,
                ShareReply(client, _channel(body), user, front_end.threads, respond),
            )

    @app.action(ask.DIAGNOSE_ACTION)
    def on_diagnose(
        ack: Callable, body: dict, client: WebClient, respond: Callable, context: Any
    ) -> None:
        """ "Diagnose a run" under an answer that missed:
        the `diagnose` command, run as if typed there.
        """
        ack()
        with front_end.after_ack(context, respond):
            team, user, channel = _team(body), body.get("user", {}).get("id", ""), _channel(body)
            if not channel or body.get("container", {}).get("type") == "view":
                # answers are never shown in App Home or a modal: no channel to open a thread in
                return
            message = body.get("message") or {}
            private = body.get("container", {}).get("is_ephemeral") or not message.get("ts")
            thread = None if private else message.get("thread_ts") or message["ts"]
            if _waiting(front_end, team, channel, user, thread):
                # A second click (or a teammate's) would leave the first card orphaned: point to it.
                _beside(respond)(response_type="ephemeral", text=wording.DIAGNOSIS_WAITING)
                return
            if thread is None:
                # A private answer (`/rlmap ask`) has no message to thread under: open a thread, as
                # `/rlmap diagnose` does, and keep the answer on screen.
                reply: Reply = SlashReply(
                    client, channel, user, front_end.threads, _beside(respond)
                )
            else:  # under a mention's answer: its thread; under a DM answer: a thread under it
                reply = ThreadReply(client, channel, user, front_end.threads, thread)
            front_end.commands.press(
                client, "diagnose", {}, team, channel, user, reply, anchor_ts=thread
            )

    @app.action(re.compile(rf"^{cards.PICK_ACTION}(_\d+)?$"))
    def on_diagnosis_tick(ack: Callable) -> None:
        ack()  # ticking a box changes nothing yet; Continue reads the ticked boxes

    @app.action(re.compile(r"^diag_(preset_\d+|skip|back|stop|choose)$"))
    def on_diagnosis_click(
        ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable, context: Any
    ) -> None:
        """A diagnosis card's button: its move (`diagnose move`), shown on the card."""
        ack()
        with front_end.after_ack(context, respond):
            action_id = action["action_id"]
            move = "preset" if action_id.startswith("diag_preset") else action_id[len("diag_") :]
            try:
                data = cards.parse_action_value(action.get("value", ""))
                args = {"session": str(data["s"]), "signal": str(data["q"]), "move": move}
            except (ValueError, KeyError, TypeError) as exc:  # not a card this version wrote
                respond(response_type="ephemeral", replace_original=False, text=prose(exc))
                return
            args["value"] = cards.picked(body) if move == "choose" else [str(data.get("v", ""))]
            press(
                "diagnose move",
                args,
                body,
                client,
                CardReply(client, body, respond, front_end.threads),
            )

    @app.action(re.compile(".*"))
    def on_other_click(ack: Callable) -> None:
        ack()  # a button this version does not know (an old card): acked, so the claim is finished
