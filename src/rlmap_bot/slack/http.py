"""HTTP mode: Bolt behind a production WSGI server (waitress), plus a health endpoint.

The request handler also works around a Bolt parsing quirk: Bolt treats any
form body that merely *contains* the word "payload" as an interactivity
payload, so `/rlmap ask what is in the payload?` would parse to nothing and be
dropped.  We parse such slash commands ourselves after Bolt's own parse; the
signature is still checked against the raw body, untouched.
"""

from __future__ import annotations

import json
import logging
from typing import Iterable
from urllib.parse import parse_qsl

from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.context import BoltContext
from slack_bolt.request import BoltRequest
from slack_bolt.request.internals import build_context
from slack_bolt.response import BoltResponse

log = logging.getLogger(__name__)
EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"


def repair_form_body(request: BoltRequest) -> BoltRequest:
    """Re-parse a slash command whose text contained the word "payload"."""
    raw = request.raw_body
    if request.body or not raw or raw.lstrip().startswith("{"):
        return request
    params = dict(parse_qsl(raw, keep_blank_values=True))
    if "payload" not in params and "command" in params:
        request.body = params
        request.context = build_context(BoltContext({}), params)
    return request


class RLMapRequestHandler(SlackRequestHandler):
    def dispatch(self, request: WsgiHttpRequest) -> BoltResponse:
        bolt_request = BoltRequest(body=request.get_body(), query=request.query_string, headers=request.get_headers())
        return self.app.dispatch(repair_form_body(bolt_request))


class WsgiApp:
    """`/slack/events` to Bolt, `/healthz` answered here, everything else 404."""

    def __init__(self, app: App, health: dict | None = None):
        self.handler = RLMapRequestHandler(app, path=EVENTS_PATH)
        self.health = health or {}

    def __call__(self, environ: dict, start_response) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == HEALTH_PATH and environ.get("REQUEST_METHOD") in {"GET", "HEAD"}:
            body = json.dumps({"ok": True, **self.health}).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        return self.handler(environ, start_response)


def make_server(app: App, host: str, port: int, threads: int = 8, health: dict | None = None):
    """A waitress server (not Bolt's development server); call ``.run()`` to serve."""
    from waitress.server import create_server

    return create_server(WsgiApp(app, health), host=host, port=port, threads=threads, ident="rlmap-bot")
