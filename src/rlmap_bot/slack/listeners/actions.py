"""Buttons: full entries, related entries, sharing an answer, stages and help, starting and answering diagnoses."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any, Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.views import View

from rlmap_bot import wording
from rlmap_bot.commands import REGISTRY
from rlmap_bot.commands.admin import help_for
from rlmap_bot.commands.catalog import stages as stages_command
from rlmap_bot.commands.context import Invocation
from rlmap_bot.slack import posting
from rlmap_bot.slack.blocks import ask, entries, help, to_dicts
from rlmap_bot.slack.blocks import diagnosis as cards
from rlmap_bot.slack.blocks.common import fallback, fit, plain, section
from rlmap_bot.slack.markup import cut
from rlmap_bot.state.models import utcnow

if TYPE_CHECKING:
    from rlmap_bot.slack.front import Front

# A second click on "Diagnose a run" this soon after the first, before any answer, is the same
# request (a double click, a second look at the answer): judgement, a few minutes of reading.
_AGAIN = dt.timedelta(minutes=10)


def _show(body: dict, client: WebClient, respond: Callable, blocks: list, text: str, title: str) -> None:
    """Entry details: a modal from App Home (no response_url there), else a private reply."""
    if body.get("container", {}).get("type") == "view" or not body.get("response_url"):
        view = View(type="modal", title=plain(cut(title, 24), 24), blocks=fit(blocks, 100))
        if (body.get("view") or {}).get("type") == "modal":
            client.views_push(trigger_id=body["trigger_id"], view=view)  # a click inside a modal
        else:
            client.views_open(trigger_id=body["trigger_id"], view=view)
        return
    thread = body.get("message", {}).get("thread_ts") or body.get("container", {}).get("thread_ts")
    respond(response_type="ephemeral", replace_original=False, text=fallback(text), blocks=to_dicts(blocks),
            **({"thread_ts": thread} if thread else {}))


def _beside(respond: Callable) -> Callable:
    """``respond`` that adds a message instead of replacing the one whose button was clicked."""
    def send(**kwargs: Any) -> Any:
        kwargs.setdefault("replace_original", False)
        return respond(**kwargs)
    return send


def _waiting(front: Front, team: str, channel: str, user: str, thread: str | None) -> bool:
    """A diagnosis not yet answered where this click would start one: in the thread, or (from a private
    answer, which opens a new thread) one the same person started in the channel in the last minutes."""
    recent = utcnow() - _AGAIN
    for session in front.core.flow.open_sessions(team=team):
        if session.channel != channel or session.history:
            continue
        if thread is not None and session.thread_ts == thread:
            return True
        if thread is None and session.user == user and session.started_at >= recent:
            return True
    return False


def _channel(body: dict) -> str:
    return body.get("channel", {}).get("id") or body.get("container", {}).get("channel_id") or ""


def register(front: Front) -> None:
    app = front.app

    @app.action(re.compile(r"^entry_show(_\d+)?$"))
    def on_show(ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable, context: Any) -> None:
        ack()
        with front.after_ack(context, respond):
            card = front.core.card(action.get("value", ""))
            if card is None:
                gone = "That entry is no longer in the catalog."
                _show(body, client, respond, [section(gone)], gone, "Not found")
                return
            _show(body, client, respond, entries.card_blocks(card), card.title, card.title)

    @app.action("entry_more")
    def on_show_more(ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable,
                     context: Any) -> None:
        ack()
        with front.after_ack(context, respond):
            card = front.core.card(action.get("value", ""))
            if card is not None:
                _show(body, client, respond, entries.card_blocks(card, full=True), card.title, card.title)

    @app.action(re.compile(r"^entry_related(_\d+)?$"))
    def on_related(ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable,
                   context: Any) -> None:
        ack()
        with front.after_ack(context, respond):
            card = front.core.card(action.get("value", ""))
            if card is not None:
                _show(body, client, respond, entries.related_blocks(card.title, card.links),
                      f"Related to {card.title}", "Related")

    @app.action("stages_show")
    def on_stages(ack: Callable, body: dict, client: WebClient, respond: Callable, context: Any) -> None:
        ack()
        with front.after_ack(context, respond):
            result = stages_command(Invocation.of(front.core, "slack"))
            _show(body, client, respond, entries.stages_blocks(result), "The five stages", "The five stages")

    @app.action("help_show")
    def on_help(ack: Callable, body: dict, client: WebClient, respond: Callable, context: Any) -> None:
        ack()
        with front.after_ack(context, respond):
            _show(body, client, respond, help.help_blocks(help_for(REGISTRY, "slack")), "How to use rlmap",
                  "How to use rlmap")

    @app.action("answer_share")
    def on_share(ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable, context: Any) -> None:
        ack()
        with front.after_ack(context, respond):
            user = body.get("user", {}).get("id", "")
            answer = front.core.ask(action.get("value", ""))
            try:
                client.chat_postMessage(channel=_channel(body), text=fallback(ask.answer_text(answer)),
                                        blocks=ask.answer_blocks(answer, shared_by=user), unfurl_links=False)
            except SlackApiError as exc:
                hint = posting.cannot_post_hint(exc) or f"I couldn't share it: {exc.response.get('error')}"
                respond(response_type="ephemeral", replace_original=False, text=hint)
                return
            respond(delete_original=True)

    @app.action(ask.DIAGNOSE_ACTION)
    def on_diagnose(ack: Callable, body: dict, client: WebClient, respond: Callable, context: Any) -> None:
        """"Diagnose a run" under an answer that missed: the `diagnose` command, run as if typed there."""
        ack()
        with front.after_ack(context, respond):
            team = body.get("team", {}).get("id") or body.get("user", {}).get("team_id", "")
            user, channel = body.get("user", {}).get("id", ""), _channel(body)
            if not channel or body.get("container", {}).get("type") == "view":
                return  # answers are never shown in App Home or a modal: no channel to open a thread in
            message = body.get("message") or {}
            private = body.get("container", {}).get("is_ephemeral") or not message.get("ts")
            thread = None if private else message.get("thread_ts") or message["ts"]
            if _waiting(front, team, channel, user, thread):
                # A second click (or a teammate's) would leave the first card orphaned: point to it.
                _beside(respond)(response_type="ephemeral", text=wording.DIAGNOSIS_WAITING)
                return
            if thread is None:
                # A private answer (`/rlmap ask`) has no message to thread under: open a thread, as
                # `/rlmap diagnose` does, and keep the answer on screen.
                front.commands.slash(client, "diagnose", team=team, channel=channel, user=user,
                                     respond=_beside(respond))
                return
            # Under a mention's answer: its thread; under a DM answer: a thread under it.
            front.commands.chat(client, "diagnose", team, channel, user, thread_ts=thread, anchor_ts=thread)

    @app.action(cards.PICK_ACTION)
    def on_diagnosis_tick(ack: Callable) -> None:
        ack()  # ticking a box changes nothing yet; Continue reads the ticked boxes

    @app.action(re.compile(r"^diag_(preset_\d+|skip|back|stop|choose)$"))
    def on_diagnosis_click(ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable,
                           context: Any) -> None:
        ack()
        with front.after_ack(context, respond):
            team = body.get("team", {}).get("id") or body.get("user", {}).get("team_id", "")
            ts = body.get("message", {}).get("ts") or body.get("container", {}).get("message_ts")
            problem = front.threads.click(client, action["action_id"], action.get("value", ""), team=team,
                                          user=body.get("user", {}).get("id", ""), channel=_channel(body),
                                          message_ts=ts, picked=cards.picked(body))
            if problem:
                respond(response_type="ephemeral", replace_original=False, text=problem)

    @app.action(re.compile(".*"))
    def on_other_click(ack: Callable) -> None:
        ack()  # a button this version does not know (an old card): acked, so the claim is finished
