"""Replies sent under a claim, each once: the request's Web API client and its ``respond``.

:class:`RecordingClient` (a ``WebClient`` subclass built with the documented constructor) and
:class:`RecordingRespond` number every ``chat.postMessage`` and ``response_url`` reply a listener
makes under a claim (:mod:`rlmap_bot.slack.claims`), so a listener run again after a takeover
finds what was already sent and does not send it twice.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from rlmap_bot.state.events import Claim

log = logging.getLogger(__name__)

REPLY_EVENT = "rlmap_reply"  # message metadata event_type on every post made under a claim
# How far before the claim a post made under it may be (clock differences between the replicas and
# Slack); the history search for a reply by its metadata starts there.
LOOKUP_SLACK_S = 120


class LeaseLost(Exception):
    """Another replica took the claim over (this one was
    cut off for a whole lease): stop, post nothing.
    """


@dataclass
class Handling:
    """A claim being worked on in this process, and what became of it."""

    claim: Claim
    outcome: str | None = (
        None  # None: done; "failed" (a bug); "retry" (the store blinked); "told"; "lost"
    )
    sent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def key(self) -> str:
        return self.claim.key


class ClaimsLike(Protocol):
    """What a recording reply asks of the claims: run a numbered send once, and who owns it."""

    def once(
        self,
        handling: Handling,
        method: str,
        send: Callable[[int], Any],
        again: Callable[[int, dict], Any],
        lookup: Callable[[int], dict | None] | None = None,
    ) -> Any: ...

    def check_owner(self, handling: Handling) -> None: ...


UPDATABLE = (
    "text",
    "blocks",
    "attachments",
    "metadata",
    "link_names",
    "parse",
    "reply_broadcast",
    "markdown_text",
)


def where_posted(result: Any) -> dict:
    data = getattr(result, "data", None)
    if not isinstance(data, dict):
        return {}
    return {"channel": data.get("channel"), "ts": data.get("ts") or data.get("message_ts")}


class RecordingClient(WebClient):
    """The request's Web API client under a claim, sending each reply once (see the module doc).

    A ``WebClient`` subclass built with ``WebClient``'s documented constructor from the
    request's client's public settings, the ones Bolt itself copies into each request's client
    (token, ``base_url``, ``timeout``, ``ssl``, ``proxy``, ``headers``, the team id of
    ``default_params``, ``logger``, ``retry_handlers``). It overrides two of the client's public
    Web API methods, ``chat_postMessage`` and ``chat_postEphemeral``, and calls the others
    (``chat_update``, ``conversations_history``, ``conversations_replies``) as documented.
    """

    def __init__(self, base: WebClient, claims: ClaimsLike, handling: Handling):
        super().__init__(
            token=base.token,
            base_url=base.base_url,
            timeout=base.timeout,
            ssl=base.ssl,
            proxy=base.proxy,
            headers=dict(base.headers),
            team_id=base.default_params.get("team_id"),
            logger=base.logger,
            retry_handlers=list(base.retry_handlers),
        )
        self.claims, self.handling = claims, handling

    def chat_postMessage(self, **kwargs: Any) -> SlackResponse:  # noqa: N802 - slack-sdk's name
        key = self.handling.key

        def metadata(n: int) -> dict:
            mine = {"event_type": REPLY_EVENT, "event_payload": {"claim": key, "n": n}}
            return kwargs.get("metadata") or mine

        def send(n: int) -> SlackResponse:
            return WebClient.chat_postMessage(self, **{**kwargs, "metadata": metadata(n)})

        def again(n: int, reply: dict) -> SlackResponse:
            assert reply.get("channel") and reply.get("ts"), "a recorded post has a channel and ts"
            update = {k: v for k, v in kwargs.items() if k in UPDATABLE}
            where = {"channel": reply["channel"], "ts": reply["ts"], "metadata": metadata(n)}
            return WebClient.chat_update(self, **{**update, **where})

        channel, thread = kwargs.get("channel"), kwargs.get("thread_ts")
        return self.claims.once(
            self.handling,
            "chat.postMessage",
            send,
            again,
            lambda n: self._find_post(channel, thread, key, n),
        )

    def chat_postEphemeral(self, **kwargs: Any) -> SlackResponse:  # noqa: N802 - slack-sdk's name
        self.claims.check_owner(self.handling)
        return super().chat_postEphemeral(**kwargs)

    def _find_post(self, channel: str | None, thread: str | None, key: str, n: int) -> dict | None:
        """A post of this claim's reply n in the channel (or thread), by its metadata."""
        if channel is None:
            # chat.postMessage always names its channel; without one there is nowhere to look
            return None
        claimed = dt.datetime.fromisoformat(self.handling.claim.claimed_at).timestamp()
        oldest = f"{claimed - LOOKUP_SLACK_S:.6f}"
        try:
            if thread:
                page = self.conversations_replies(
                    channel=channel, ts=thread, oldest=oldest, limit=200, include_all_metadata=True
                )
            else:
                page = self.conversations_history(
                    channel=channel, oldest=oldest, limit=200, include_all_metadata=True
                )
        except SlackApiError as exc:
            log.info(
                "%s: could not look for reply %d (%s); posting it",
                key,
                n,
                exc.response.get("error"),
            )
            return None
        for message in page.get("messages") or []:
            meta = message.get("metadata") or {}
            payload = meta.get("event_payload") or {}
            if (
                meta.get("event_type") == REPLY_EVENT
                and payload.get("claim") == key
                and payload.get("n") == n
            ):
                return {"method": "chat.postMessage", "channel": channel, "ts": message.get("ts")}
        return None


class RecordingRespond:
    """The request's ``respond`` (its response_url), sending each reply once per claim.

    Bolt's ``respond`` is a callable its listeners are given; this wraps it and calls it as
    documented. A reply sent before a takeover is not sent again, and the call returns None then
    (a response_url answers nothing a listener reads).
    """

    def __init__(self, inner: Callable[..., Any], claims: ClaimsLike, handling: Handling):
        self.inner, self.claims, self.handling = inner, claims, handling

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.claims.once(
            self.handling,
            "response_url",
            lambda _n: self.inner(*args, **kwargs),
            lambda _n, _reply: None,
        )
