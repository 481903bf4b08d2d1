"""App Home's tracker credentials form: the button that opens it and its submission.

The submission goes through the same door as typed ``/rlmap credentials set|clear ...``
(:meth:`rlmap_bot.slack.dispatch.SlackCommands.press`), so the command's own checks apply: only
the workspace's admins (:mod:`rlmap_bot.slack.admins`), the key sealed before it is stored, never
repeated. The submission itself is not claimed (a form is answered in its HTTP response, which
Slack does not resend), so the key is kept nowhere but in the sealed credentials row. The reply
replaces the form (``response_action: update``); it holds the command's answer, never the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from slack_sdk import WebClient

from rlmap_bot.errors import RlmapError
from rlmap_bot.slack.blocks import credentials as blocks
from rlmap_bot.slack.blocks.common import section
from rlmap_bot.slack.clicks import ButtonReply
from rlmap_bot.slack.dispatch import Reply
from rlmap_bot.slack.markup import prose
from rlmap_bot.slack.render import Message
from rlmap_bot.wording import sentence

if TYPE_CHECKING:
    from rlmap_bot.slack.front_end import FrontEnd


class ModalReply(Reply):
    """The command's answer, kept to replace the submitted form with."""

    def __init__(self, client: WebClient, user: str, threads: Any):
        super().__init__(client, "", user, threads)
        self.blocks: list = []

    def send(self, message: Message) -> None:
        self.blocks = message.blocks

    def problem(self, exc: RlmapError) -> None:
        self.blocks = [section(prose(sentence(exc)))]


def _team(body: dict) -> str:
    return body.get("team", {}).get("id") or body.get("user", {}).get("team_id", "")


def register(front_end: FrontEnd) -> None:
    app = front_end.app

    @app.action(blocks.OPEN_ACTION)
    def on_open(
        ack: Callable, body: dict, client: WebClient, respond: Callable, context: Any
    ) -> None:
        ack()
        user = body.get("user", {}).get("id", "")
        with front_end.after_ack(context, respond):
            if front_end.commands.admins.allows(client, _team(body), user):
                client.views_open(trigger_id=body["trigger_id"], view=blocks.form_view())
                return
            # Anyone else: the command's own refusal, through the command door.
            front_end.commands.press(
                client,
                "credentials",
                {"action": "list"},
                team=_team(body),
                channel="",
                user=user,
                reply=ButtonReply(client, body, respond, front_end.threads, title=blocks.TITLE),
            )

    @app.view(blocks.FORM)
    def on_submit(ack: Callable, body: dict, view: dict, client: WebClient) -> None:
        user = body.get("user", {}).get("id", "")
        reply = ModalReply(client, user, front_end.threads)
        try:
            front_end.commands.press(
                client,
                "credentials",
                blocks.form_values(view),
                team=_team(body),
                channel="",
                user=user,
                reply=reply,
            )
        finally:
            said = reply.blocks or [section("Nothing was changed; try again in a minute.")]
            ack(response_action="update", view=blocks.result_view(said))
