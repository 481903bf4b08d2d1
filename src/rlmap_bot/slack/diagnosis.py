"""Diagnoses in Slack threads: the card updated in place, typed answers.

A card's buttons are the `diagnose move` command (slack/listeners/actions.py), shown here.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rlmap_bot import wording
from rlmap_bot.core import Core
from rlmap_bot.diagnosis.flow import Flow, FlowError, SupersededError
from rlmap_bot.results.diagnosis import Session, Step
from rlmap_bot.slack import posting
from rlmap_bot.slack.blocks import diagnosis as cards
from rlmap_bot.slack.blocks.common import FALLBACK_LIMIT
from rlmap_bot.slack.markup import cut, escape, prose
from rlmap_bot.state.models import ConflictError

log = logging.getLogger(__name__)


# Typed answers in one thread are applied one at a
# time: Bolt runs listeners on a thread pool, so two
# replies typed a second apart would otherwise race
# for the same question.  Striped locks keep memory
# bounded; two threads sharing a stripe only wait for each other's (millisecond) update.
_STRIPES = 64


def message_key(channel: str | None, ts: str | None) -> str:
    """A typed reply's key ("channel:ts"), the form :func:`superseded` reads back."""
    return f"{channel}:{ts}"


def _ts(key: str) -> tuple[int, ...] | None:
    """The Slack ts inside a message key ("channel:ts")
    as comparable numbers; None if it has none.
    """
    try:
        return tuple(int(part) for part in key.rsplit(":", 1)[1].split("."))
    except (IndexError, ValueError):
        return None


def superseded(moves: list[str], key: str | None) -> bool:
    """Whether a later message in the same channel has already been applied to the session.

    Several replicas, or a slow thread, can see replies out of order; an older reply applied after a
    newer one would answer the wrong question, so it is refused (and the person told) instead.
    """
    if key is None or key in moves:
        return False
    mine = _ts(key)
    channel = key.rsplit(":", 1)[0]
    later = (_ts(m) for m in moves if m.rsplit(":", 1)[0] == channel)
    return mine is not None and any(t is not None and t > mine for t in later)


class DiagnosisThreads:
    def __init__(self, core: Core):
        self.core = core
        self._locks = [threading.Lock() for _ in range(_STRIPES)]

    def _lock(self, team: str, channel: str, thread_ts: str) -> threading.Lock:
        return self._locks[hash((team, channel, thread_ts)) % _STRIPES]

    def post_first_card(
        self, client: WebClient, channel: str, step: Step, respond: Callable | None = None
    ) -> None:
        """Post the first question in the session's thread and remember the card."""
        session = step.session
        card = posting.post(
            client,
            channel,
            session.user,
            blocks=cards.step_blocks(step),
            text=escape(cards.step_text(step)),
            thread_ts=session.thread_ts,
            respond=respond,
        )
        if card is None:
            self.core.flow.stop(session.id)  # nobody can see it: do not leave it open
            return
        self.core.flow.attach(session.id, message_ts=card["ts"])
        if respond is not None:
            respond(response_type="ephemeral", text=wording.DIAGNOSIS_THREAD_OPENED)

    def typed_answer(
        self,
        client: WebClient,
        team: str,
        channel: str,
        thread_ts: str,
        user: str,
        text: str,
        key: str | None = None,
    ) -> bool:
        """A reply in a diagnosis thread: the answer to the
        current question. False if no diagnosis here.

        ``key`` names the message: handled again (a takeover after a crash), a reply already
        applied changes nothing and the card is redrawn as it is now.  Replies in one thread are
        applied one at a time, and one older than a reply already applied is refused.
        """
        with self._lock(team, channel, thread_ts):
            return self._typed_answer(client, team, channel, thread_ts, user, text, key)

    def _typed_answer(
        self,
        client: WebClient,
        team: str,
        channel: str,
        thread_ts: str,
        user: str,
        text: str,
        key: str | None,
    ) -> bool:
        found = self.core.state.sessions.newest(
            team, channel, thread_ts, ("open", "done", "stopped")
        )
        session = found.get("open")
        if session is None and key is not None:  # the reply that finished it, handled again
            finished = (found.get(status) for status in ("done", "stopped"))
            session = next((s for s in finished if s is not None and key in s.moves), None)
        if session is None or (session.current is None and key not in session.moves):
            return False
        flow = self.core.flow
        if not text.strip():
            return True  # an empty reply (an image, a file) is not an answer
        try:
            step = flow.reply(session.id, text, key=key, stale=lambda moves: superseded(moves, key))
        except SupersededError:
            posting.tell(
                client,
                channel,
                user,
                wording.reply_superseded(cut(escape(text), 60)),
                thread_ts=thread_ts,
            )
            return True
        except (FlowError, ConflictError) as exc:
            posting.tell(
                client,
                channel,
                user,
                f"{prose(exc)}. Use the buttons, or type a value, '?', 'back', 'help' or 'stop'.",
                thread_ts=thread_ts,
            )
            return True
        if step.help and step.question is not None:
            posting.tell(
                client,
                channel,
                user,
                f"How to measure *{escape(step.question.title)}*: {prose(step.help)}",
                thread_ts=thread_ts,
            )
            return True
        ts = step.session.message_ts or card_of(flow, step.session.id)
        self.show_step(client, channel, step, ts=ts, note=step.note, by=user, thread_ts=thread_ts)
        return True

    def show_step(
        self,
        client: WebClient,
        channel: str,
        step: Step,
        ts: str | None,
        note: str | None,
        by: str | None = None,
        thread_ts: str | None = None,
    ) -> None:
        """Update the diagnosis card in place (post a new one if it is gone); a verdict's card
        gets its Details button, its verdict kept for it."""
        details = None
        if step.verdict is not None:
            details = self.core.state.details.keep(
                step.session.team, "Verdict", step.verdict.model_dump_json()
            )
        blocks = cards.step_blocks(step, note, by, details)
        text = escape(cards.step_text(step))
        if ts:
            try:
                client.chat_update(
                    channel=channel, ts=ts, blocks=blocks, text=cut(text, FALLBACK_LIMIT)
                )
                return
            except SlackApiError as exc:
                if exc.response.get("error") not in {"message_not_found", "cant_update_message"}:
                    raise
        card = posting.post(
            client,
            channel,
            step.session.user,
            blocks=blocks,
            text=text,
            thread_ts=thread_ts or step.session.thread_ts,
        )
        if card is not None and not step.finished:
            self.core.flow.attach(step.session.id, message_ts=card["ts"])


def card_of(flow: Flow, session_id: str, wait: float = 3.0) -> str | None:
    """The ts of a session's card, waiting briefly while the request that started it posts it.

    A reply can reach another thread (or replica) between the card being posted and its ts being
    recorded; waiting here keeps one card per diagnosis instead of a second one (tenacity polls the
    store every 50 ms, a cheap read, for at most ``wait`` seconds).
    """
    from tenacity import RetryCallState, Retrying, retry_if_result, stop_after_delay, wait_fixed

    def posted(session: Session | None) -> bool:
        return session is None or bool(session.message_ts)

    def last_read(
        state: RetryCallState,
    ) -> Session | None:  # waited long enough: what the store says now
        return state.outcome.result() if state.outcome else None

    retrying = Retrying(
        retry=retry_if_result(lambda s: not posted(s)),
        stop=stop_after_delay(wait),
        wait=wait_fixed(0.05),
        retry_error_callback=last_read,
    )
    session = retrying(flow.store.sessions.get, session_id)
    return session.message_ts if session else None
