"""Posting to Slack, and what to tell a person when Slack refuses a post."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any, Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rlmap_bot.slack.blocks.common import FALLBACK_LIMIT
from rlmap_bot.slack.markup import cut

log = logging.getLogger(__name__)

CANNOT_POST = {
    "not_in_channel": "I'm not in this channel. Invite me with `/invite @rlmap`, then try again.",
    "channel_not_found": "I can't see this channel. If it is private, invite me with `/invite "
    "@rlmap` first.",
    "is_archived": "This channel is archived, so I can't post in it.",
    "missing_scope": "I lack a permission for this (a Slack scope). Ask an admin to reinstall the "
    "app with the scopes in deploy/manifest.yaml.",
    "restricted_action": "This workspace does not let me post here.",
    "not_allowed_token_type": "My token cannot post here; check the app's installation.",
    "channel_is_archived": "This channel is archived, so I can't post in it.",
}


def cannot_post_hint(exc: SlackApiError) -> str | None:
    return CANNOT_POST.get(str(exc.response.get("error", "")))


def post(
    client: WebClient,
    channel: str,
    user: str,
    blocks: list,
    text: str,
    thread_ts: str | None = None,
    respond: Callable | None = None,
    **extra: Any,
) -> dict | None:
    """chat.postMessage; when Slack says the bot cannot
    post, tell the user what to do and return None.

    ``text`` is the notification text, already safe mrkdwn (escaped by the caller).
    """
    try:
        response = client.chat_postMessage(
            channel=channel,
            blocks=blocks,
            text=cut(text, FALLBACK_LIMIT),
            thread_ts=thread_ts,
            unfurl_links=False,
            unfurl_media=False,
            **extra,
        )
    except SlackApiError as exc:
        hint = cannot_post_hint(exc)
        if hint is None:
            raise
        log.info("cannot post in %s: %s", channel, exc.response.get("error"))
        tell(client, channel, user, hint, respond=respond)
        return None
    assert isinstance(response.data, dict), (
        "chat.postMessage answers JSON (slack-sdk gives bytes only for gzip files)"
    )
    return response.data


def tell(
    client: WebClient,
    channel: str,
    user: str,
    text: str,
    respond: Callable | None = None,
    thread_ts: str | None = None,
) -> None:
    """A private note to one person: through the command's
    response_url if there is one, else ephemeral.
    """
    if respond is not None:
        respond(response_type="ephemeral", replace_original=False, text=text)
        return
    try:
        # slack-sdk drops None arguments, so an empty
        # thread_ts is sent as no thread_ts at all (as before)
        client.chat_postEphemeral(
            channel=channel, user=user, text=text, thread_ts=thread_ts or None
        )
    except SlackApiError:
        log.info("could not reach %s with a private note either", user)


def find_by_metadata(
    client: WebClient,
    channel: str,
    event_type: str,
    key: str,
    value: str,
    since: dt.datetime,
    pages: int = 20,
) -> str | None:
    """The ts of the bot's post in ``channel`` whose
    metadata is ``event_type`` with ``key == value``.

    How a run that crashed between posting and recording finds its post again (digests, watch
    alerts): ``conversations.history`` with ``include_all_metadata``, from ``since``, at most
    ``pages`` pages of 200.
    """
    cursor = None
    for _ in range(pages):
        page = client.conversations_history(
            channel=channel,
            include_all_metadata=True,
            limit=200,
            oldest=f"{since.timestamp():.6f}",
            cursor=cursor,
        )
        messages: list[dict] = page.get("messages") or []
        for message in messages:
            meta = message.get("metadata") or {}
            if (
                meta.get("event_type") == event_type
                and (meta.get("event_payload") or {}).get(key) == value
            ):
                return message["ts"]
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        if not page.get("has_more") or not cursor:
            return None
    return None


def upload_chart(
    client: WebClient,
    channel: str,
    thread_ts: str | None,
    chart: str,
    filename: str,
    name: str,
    title: str | None = None,
    alt: str = "Training curves with the judged windows shaded, and stage scores",
) -> None:
    """A run's chart into a thread under the post it belongs to (``title``: what it shows, by
    default the curves behind a verdict); a refusal is logged, the post stands."""
    try:
        client.files_upload_v2(
            channel=channel,
            thread_ts=thread_ts,
            file=chart,
            filename=filename,
            title=title or f"{name}: the curves behind the verdict",
            alt_txt=alt,
        )
    except SlackApiError as exc:
        log.info("could not upload the chart %s: %s", filename, exc.response.get("error"))


def real_name(client: WebClient, user: str) -> str | None:
    """A person's real name (users.info), or None when Slack will not say."""
    try:
        found = client.users_info(user=user)["user"]
    except SlackApiError as exc:
        log.info("users.info for %s failed: %s", user, exc.response.get("error"))
        return None
    return (found.get("profile") or {}).get("real_name") or found.get("real_name") or None
