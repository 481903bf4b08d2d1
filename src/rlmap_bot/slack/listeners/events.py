"""Events: mentions, messages (DMs and thread replies, routed by matchers), App Home, uninstalls."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from slack_sdk import WebClient

from rlmap_bot.commands import REGISTRY
from rlmap_bot.commands.admin import help_for
from rlmap_bot.slack import posting
from rlmap_bot.slack.blocks import credentials as credential_blocks
from rlmap_bot.slack.blocks import watch as watch_blocks
from rlmap_bot.slack.blocks.home import home_view
from rlmap_bot.slack.diagnosis import message_key
from rlmap_bot.slack.markup import MENTION, from_slack, name_authors
from rlmap_bot.slack.watches import watches_for_user

if TYPE_CHECKING:
    from rlmap_bot.slack.front_end import FrontEnd

log = logging.getLogger(__name__)


# -- matchers: which message events a listener wants
#  --------------------------------------------------
def from_a_person(event: dict) -> bool:
    """Not another bot, not an edit, join or other subtype."""
    return not event.get("bot_id") and not event.get("subtype")


def in_a_dm(event: dict) -> bool:
    return event.get("channel_type") == "im"


def a_file_in_a_thread(event: dict) -> bool:
    """Someone shared a file (a training log, perhaps) in a thread."""
    return (
        event.get("subtype") == "file_share"
        and bool(event.get("thread_ts"))
        and not event.get("bot_id")
    )


def thread_reply_in_channel(event: dict, context: dict) -> bool:
    """A reply in a channel thread that does not mention
    the bot (the mention event handles those).
    """
    bot_user = context.get("bot_user_id")
    mentioned = bool(bot_user) and f"<@{bot_user}" in (event.get("text") or "")
    return event.get("channel_type") != "im" and bool(event.get("thread_ts")) and not mentioned


def _named(client: WebClient, text: str) -> str:
    """ "papers by <@U123>": the person's real name, looked up only when a question names one."""
    return name_authors(text, lambda user: posting.real_name(client, user))


def _team(event: dict, context: dict) -> str:
    return context.get("team_id") or event.get("team") or ""


def _message_key(event: dict) -> str:
    """A message's identity: a typed answer handled twice is applied once."""
    return message_key(event.get("channel"), event.get("ts"))


def register(front_end: FrontEnd) -> None:
    app, threads, commands = front_end.app, front_end.threads, front_end.commands

    @app.event("app_mention")
    def on_mention(event: dict, client: WebClient, context: dict) -> None:
        if event.get("bot_id"):
            return
        text = from_slack(MENTION.sub("", _named(client, event.get("text", ""))))
        team, channel, user = _team(event, context), event["channel"], event.get("user", "")
        thread = event.get("thread_ts") or event["ts"]
        if event.get("thread_ts") and threads.typed_answer(
            client, team, channel, event["thread_ts"], user, text, key=_message_key(event)
        ):
            return
        commands.chat(client, text, team, channel, user, thread_ts=thread, anchor_ts=thread)

    @app.event("message", matchers=[from_a_person, in_a_dm])
    def on_dm(event: dict, client: WebClient, context: dict) -> None:
        text = from_slack(_named(client, event.get("text") or ""))
        team, channel, user = _team(event, context), event["channel"], event.get("user", "")
        if event.get("thread_ts") and threads.typed_answer(
            client, team, channel, event["thread_ts"], user, text, key=_message_key(event)
        ):
            return
        commands.chat(
            client,
            text,
            team,
            channel,
            user,
            thread_ts=event.get("thread_ts"),
            anchor_ts=event.get("thread_ts") or event["ts"],
        )

    @app.event("message", matchers=[from_a_person, thread_reply_in_channel])
    def on_thread_reply(event: dict, client: WebClient, context: dict) -> None:
        text = from_slack(event.get("text") or "")
        threads.typed_answer(
            client,
            _team(event, context),
            event["channel"],
            event["thread_ts"],
            event.get("user", ""),
            text,
            key=_message_key(event),
        )

    @app.event("message", matchers=[a_file_in_a_thread])
    def on_file_in_thread(event: dict, client: WebClient, context: dict) -> None:
        front_end.run_files.shared(client, event, _team(event, context))

    @app.event("file_shared")
    def on_file_shared(event: dict) -> None:
        """The file_share message above carries what is
        needed; this twin event is only acknowledged.
        """

    @app.event("message")
    def on_other_message(event: dict) -> None:
        """Everything else (other bots, edits, channel chatter): seen, never answered."""

    @app.event("app_home_opened")
    def on_home(event: dict, client: WebClient, context: dict) -> None:
        if event.get("tab", "home") != "home":
            return
        user, team = event["user"], context.get("team_id") or ""
        core = front_end.core
        history = sorted(
            core.store.history(),
            key=lambda s: (s.entry.added, s.first_seen, s.entry.id),
            reverse=True,
        )
        newest = [
            (s.entry, s.entry.added.isoformat())
            for s in history
            if s.entry.kind in {"paper", "topic", "stage"}
        ][:8]
        sessions = core.flow.open_sessions(team=team, user=user)
        rows, note = watches_for_user(front_end.watches.service, client, team, user)
        watches = watch_blocks.home_blocks(rows, note) if rows or note else None
        keys = None  # which tracker credentials are set (never a value): admins only
        if front_end.commands.admins.allows(client, team, user):
            keys = credential_blocks.home_blocks(core.state.credentials.names(team))
        client.views_publish(
            user_id=user,
            view=home_view(
                core.stages(), newest, sessions, help_for(REGISTRY, "slack"), watches, keys
            ),
        )

    @app.event("app_uninstalled")
    def on_uninstalled(body: dict) -> None:
        front_end.forget_workspace(body.get("team_id", ""), body.get("enterprise_id"))

    @app.event("tokens_revoked")
    def on_tokens_revoked(event: dict, body: dict) -> None:
        tokens = event.get("tokens") or {}
        if tokens.get("bot"):
            front_end.forget_workspace(body.get("team_id", ""), body.get("enterprise_id"))
        elif front_end.installations is not None:
            for user in tokens.get("oauth", []):
                front_end.installations.delete_installation(
                    enterprise_id=body.get("enterprise_id"),
                    team_id=body.get("team_id"),
                    user_id=user,
                )

    @app.event(re.compile(".*"))
    def on_any_other_event(event: dict) -> None:
        """An event type nobody listens for: seen (so its claim is finished), never answered."""
