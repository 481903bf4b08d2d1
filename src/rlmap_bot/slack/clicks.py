"""Replies to clicks and forms: a button's result in a modal or privately (:class:`ButtonReply`),
an answer shared in the channel (:class:`ShareReply`), a card's own buttons (:class:`CardReply`:
a diagnosis move, a curator's decision or form) and a submitted form (:class:`FormReply`).

Each is a :class:`~rlmap_bot.slack.dispatch.Reply`: a click runs its command through the same door
as typed text (``SlackCommands.press``) and the reply renders the typed result.
"""

from __future__ import annotations

import logging
from functools import singledispatchmethod
from typing import Any, Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.views import View

from rlmap_bot.errors import NotFoundError, RlmapError
from rlmap_bot.results.ask import Answer
from rlmap_bot.results.cards import Card
from rlmap_bot.results.curation import Decision
from rlmap_bot.slack import posting
from rlmap_bot.slack.blocks import ask as ask_blocks
from rlmap_bot.slack.blocks import entries, to_dicts
from rlmap_bot.slack.blocks.common import FALLBACK_LIMIT, fallback, fit, plain, section
from rlmap_bot.slack.diagnosis import DiagnosisThreads
from rlmap_bot.slack.dispatch import Reply, RespondReply
from rlmap_bot.slack.markup import cut, prose
from rlmap_bot.wording import sentence

log = logging.getLogger(__name__)


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
        said = prose(sentence(exc))
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


class BesideReply(RespondReply):
    """Replies privately beside the message whose button was clicked (its response_url),
    leaving that message as it is."""

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
        self.respond(response_type="ephemeral", replace_original=False, text=prose(sentence(exc)))


class ShareReply(BesideReply):
    """The Share button under a private answer: the answer posted
    in the channel for everyone, naming who shared
    it, and the private copy removed; a channel the bot cannot post in is said privately."""

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


class CardReply(BesideReply):
    """A click on a card's button (a diagnosis card, a suggestion's card): a diagnosis move
    updates the card; a curator's decision is shown by the card the curation flow closed; a
    form opens over the click; a problem is told privately beside the card."""

    def __init__(self, client: WebClient, body: dict, respond: Callable, threads: DiagnosisThreads):
        channel = (
            body.get("channel", {}).get("id") or body.get("container", {}).get("channel_id") or ""
        )
        super().__init__(client, channel, body.get("user", {}).get("id", ""), threads, respond)
        self.card_ts = body.get("message", {}).get("ts") or body.get("container", {}).get(
            "message_ts"
        )
        self.trigger_id = body.get("trigger_id")

    @singledispatchmethod
    def result(self, result: Any) -> None:
        super().result(result)

    @result.register
    def _(self, result: Decision) -> None:
        """Nothing more to say: the card now reads who decided what."""


class FormReply(Reply):
    """A form submitted in a modal (no response_url): a curator's decision is shown by the card
    the curation flow closed; a problem goes to ``tell``, which says it where the person reads."""

    def __init__(
        self,
        client: WebClient,
        user: str,
        threads: DiagnosisThreads,
        tell: Callable[[RlmapError], None],
    ):
        super().__init__(client, "", user, threads)
        self.tell = tell

    @singledispatchmethod
    def result(self, result: Any) -> None:
        super().result(result)

    @result.register
    def _(self, result: Decision) -> None:
        """Nothing more to say: the card now reads who decided what."""

    def send(self, blocks: list, text: str, public: bool) -> None:
        log.info("a form's result has nowhere to be shown: %s", text)

    def problem(self, exc: RlmapError) -> None:
        self.tell(exc)
