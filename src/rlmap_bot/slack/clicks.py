"""Replies to clicks and forms, and the buttons that follow a result up.

A click runs its command through the same door as typed text (``SlackCommands.press``); its reply
is a :class:`~rlmap_bot.slack.dispatch.Reply` like any other, which sends what the one dispatch
(:mod:`rlmap_bot.slack.render`) makes of the result: in a modal or privately beside the message
clicked (:class:`ButtonReply`), in the channel for everyone (:class:`ShareReply`), beside a card
whose buttons were clicked (:class:`CardReply`: a diagnosis move updates the card, a curator's
form opens over it), nowhere but the log for a submitted form (:class:`FormReply`).

:data:`FOLLOW_UPS` declares the buttons that show a result, or another view of it: the command a
button runs and the view it asks for. A Details button is one more row.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.views import View

from rlmap_bot.errors import RlmapError
from rlmap_bot.slack import posting
from rlmap_bot.slack.blocks.common import FALLBACK_LIMIT, fit, plain, section, to_dicts
from rlmap_bot.slack.blocks.verdicts import DETAILS_ACTION
from rlmap_bot.slack.diagnosis import DiagnosisThreads
from rlmap_bot.slack.dispatch import Reply, RespondReply
from rlmap_bot.slack.markup import cut, prose
from rlmap_bot.slack.render import BRIEF, DETAILS, FULL, RELATED, SHARED, Message
from rlmap_bot.wording import sentence

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FollowUp:
    """A button that shows a result: the command it runs (the button's value is its argument
    ``arg``, if any), the view of the result it shows (:class:`~rlmap_bot.slack.render.Place`),
    the modal's title when the command refuses, and whether it always opens a modal (``modal``:
    a card's details, read beside the card rather than below it)."""

    command: str
    title: str
    arg: str | None = None
    view: str = BRIEF
    modal: bool = False

    def args(self, value: str) -> dict[str, Any]:
        return {self.arg: value} if self.arg else {}


# action_id (a pattern where the buttons of one message are numbered) -> what the button shows
FOLLOW_UPS: dict[str | re.Pattern, FollowUp] = {
    re.compile(r"^entry_show(_\d+)?$"): FollowUp("show", "Not found", arg="entry"),
    "entry_more": FollowUp("show", "Not found", arg="entry", view=FULL),
    re.compile(r"^entry_related(_\d+)?$"): FollowUp("show", "Not found", arg="entry", view=RELATED),
    "stages_show": FollowUp("stages", "The five stages"),
    "help_show": FollowUp("help", "How to use rlmap"),
    DETAILS_ACTION: FollowUp("details", "Details", arg="id", view=DETAILS, modal=True),
}


def _channel(body: dict) -> str:
    return body.get("channel", {}).get("id") or body.get("container", {}).get("channel_id") or ""


class ButtonReply(Reply):
    """A button's result: a modal when clicked in App Home or inside a modal (no response_url
    there) or when ``modal``, else a private reply beside the message whose button was clicked (in
    its thread). ``view`` is the view of the result the button asked for; ``title`` names the
    modal when the result brings no title of its own, and when the command refuses."""

    def __init__(
        self,
        client: WebClient,
        body: dict,
        respond: Callable,
        threads: DiagnosisThreads,
        title: str,
        view: str = BRIEF,
        modal: bool = False,
    ):
        super().__init__(client, _channel(body), body.get("user", {}).get("id", ""), threads)
        self.body, self.respond, self.title, self.view = body, respond, title, view
        self.modal = modal

    def send(self, message: Message) -> None:
        self.show(message.blocks, message.text, message.title or self.title)

    def problem(self, exc: RlmapError) -> None:
        told = prose(sentence(exc))
        self.show([section(told)], told, self.title)

    def show(self, blocks: list, text: str, title: str) -> None:
        body, respond = self.body, self.respond
        assert respond is not None
        in_view = body.get("container", {}).get("type") == "view"
        if self.modal or in_view or not body.get("response_url"):
            view = View(type="modal", title=plain(cut(title, 24), 24), blocks=fit(blocks, 100))
            if (body.get("view") or {}).get("type") == "modal":  # a click inside a modal
                self.client.views_push(trigger_id=body["trigger_id"], view=view)
            else:
                self.client.views_open(trigger_id=body["trigger_id"], view=view)
            return
        thread = body.get("message", {}).get("thread_ts") or body.get("container", {}).get(
            "thread_ts"
        )
        respond(
            response_type="ephemeral",
            replace_original=False,
            text=cut(text, FALLBACK_LIMIT),
            blocks=to_dicts(blocks),
            **({"thread_ts": thread} if thread else {}),
        )


class BesideReply(RespondReply):
    """Replies privately beside the message whose button was clicked (its response_url),
    leaving that message as it is."""

    def send(self, message: Message) -> None:
        assert self.respond is not None
        self.respond(
            response_type="ephemeral",
            replace_original=False,
            text=cut(message.text, FALLBACK_LIMIT),
            blocks=to_dicts(message.blocks),
        )

    def problem(self, exc: RlmapError) -> None:
        assert self.respond is not None
        self.respond(response_type="ephemeral", replace_original=False, text=prose(sentence(exc)))


class ShareReply(BesideReply):
    """The Share button under a private answer: the answer (its shared view, naming who shared
    it) posted in the channel for everyone, and the private copy removed; a channel the bot
    cannot post in is said privately."""

    view = SHARED

    def send(self, message: Message) -> None:
        assert self.respond is not None
        try:
            self.client.chat_postMessage(
                channel=self.channel,
                text=cut(message.text, FALLBACK_LIMIT),
                blocks=message.blocks,
                unfurl_links=False,
            )
        except SlackApiError as exc:
            hint = (
                posting.cannot_post_hint(exc) or f"I couldn't share it: {exc.response.get('error')}"
            )
            self.respond(response_type="ephemeral", replace_original=False, text=hint)
            return
        self.respond(delete_original=True)


class CardReply(BesideReply):
    """A click on a card's button (a diagnosis card, a suggestion's card): the card clicked is
    ``card_ts`` (a diagnosis move updates it), the click's trigger opens a form; a problem is told
    privately beside the card."""

    def __init__(self, client: WebClient, body: dict, respond: Callable, threads: DiagnosisThreads):
        super().__init__(
            client, _channel(body), body.get("user", {}).get("id", ""), threads, respond
        )
        self.card_ts = body.get("message", {}).get("ts") or body.get("container", {}).get(
            "message_ts"
        )
        self.trigger_id = body.get("trigger_id")


class FormReply(Reply):
    """A form submitted in a modal (no response_url, nothing to show a message in); a problem goes
    to ``tell``, which says it where the person reads."""

    def __init__(
        self,
        client: WebClient,
        user: str,
        threads: DiagnosisThreads,
        tell: Callable[[RlmapError], None],
    ):
        super().__init__(client, "", user, threads)
        self.tell = tell

    def send(self, message: Message) -> None:
        log.info("a form's result has nowhere to be shown: %s", message.text)

    def problem(self, exc: RlmapError) -> None:
        self.tell(exc)
