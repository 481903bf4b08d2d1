"""Bolt middleware: each request Slack sends is claimed before any listener, and acted on once.

A global middleware (``App.use``, Bolt's documented hook that runs before any listener) is
where a request is claimed; the claim is finished by
:class:`~rlmap_bot.slack.claims.ClaimingExecutor` when the listener returns.
"""

from __future__ import annotations

import logging
from typing import Callable

from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware

from rlmap_bot import metrics
from rlmap_bot.errors import UnavailableError
from rlmap_bot.slack.claims import HANDED_OVER, KEY, REPLAY, Claims, identify

log = logging.getLogger(__name__)


class EventClaims(Middleware):
    """Claims each event, button click and slash command
    in the state store before any listener runs.

    Slack retries an event it thinks was not received, and with several replicas a
    retry may reach another one. A first sight is claimed with its payload and a lease
    and goes on to the listeners; a repeat of a finished claim, or of one another
    replica is still working on, is acked without acting; a repeat of an unfinished
    claim whose lease ran out (its replica died) takes it over and goes on. The
    sweeper's replays of taken-over claims come through here already claimed.

    When the state store does not answer, an event gets HTTP 500, which Slack
    retries; a click or a slash command (never retried by Slack) goes on unclaimed,
    and its listener tells the person the bot is briefly unavailable if it needs
    the store.
    """

    def __init__(self, claims: Claims):
        self.claims = claims

    def process(
        self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]
    ) -> BoltResponse:
        HANDED_OVER.set(None)  # nothing goes to this request's listener unless claimed below
        replay = req.context.get(REPLAY)
        if replay is not None:
            self.claims.attach(req, replay)
            return next()
        found = identify(req.body)
        if found is None:
            return next()
        kind, key, team = found
        req.context[KEY] = key
        metrics.EVENTS_RECEIVED.labels(kind).inc()
        try:
            outcome, handling = self.claims.claim(kind, key, team, req.body)
        except UnavailableError:
            if kind == "event":
                log.warning(
                    "%s: state store unavailable; answered 500 so that Slack retries it", key
                )
                return BoltResponse(status=500, body="")
            # One line per request: the listener logs it if
            # it needs the store (and tells the person).
            log.debug("%s: state store unavailable; handled without a claim", key)
            return next()
        if handling is None:
            metrics.EVENTS_DEDUPLICATED.labels(kind).inc()
            log.info(
                "%s: %s; acked without acting",
                key,
                {
                    "done": "handled already",
                    "busy": "another replica is handling it",
                    "gave_up": "given up on",
                }.get(outcome, outcome),
            )
            return BoltResponse(status=200, body="")
        self.claims.attach(req, handling)
        return next()
