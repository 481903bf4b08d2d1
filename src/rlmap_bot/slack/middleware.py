"""Bolt middleware: each Slack event is acted on once, whoever receives its retries."""

from __future__ import annotations

import logging
from typing import Callable

from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware

log = logging.getLogger(__name__)


class EventDedupe(Middleware):
    """Claims each ``event_id`` in the state store before any listener runs.

    Slack retries an event it thinks was not received, and with several replicas a
    retry may reach another one; the claim is a primary key, so exactly one of them
    goes on to the listeners and the others ack the retry without acting.
    """

    def __init__(self, claim: Callable[[str, str], bool]):
        self.claim = claim

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]) -> BoltResponse:
        body = req.body or {}
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        if event_id and not self.claim(event_id, body.get("team_id", "")):
            log.info("event %s already handled; acking the retry without acting", event_id)
            return BoltResponse(status=200, body="")
        return next()
