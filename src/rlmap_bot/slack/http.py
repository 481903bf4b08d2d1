"""HTTP mode: Bolt behind a production WSGI server (waitress), plus health, readiness and metrics.

``/healthz`` is liveness: 200 while the process serves HTTP at all (restart it
when this fails). ``/readyz`` is readiness: 200 when the replica can work, 503
while its state store does not answer (a load balancer sends it no traffic
then). ``/metrics`` is Prometheus' text format (see :mod:`rlmap_bot.metrics`).

The request handler also works around a Bolt parsing quirk: Bolt treats any
form body that merely *contains* the word "payload" as an interactivity
payload, so `/rlmap ask what is in the payload?` would parse to nothing and be
dropped.  We parse such slash commands ourselves after Bolt's own parse; the
signature is still checked against the raw body, untouched.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Callable, Iterable
from urllib.parse import parse_qsl

from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.context import BoltContext
from slack_bolt.request import BoltRequest
from slack_bolt.request.internals import build_context
from slack_bolt.response import BoltResponse

from rlmap_bot import metrics
from rlmap_bot.slack.claims import identify

log = logging.getLogger(__name__)
EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
METRICS_PATH = "/metrics"


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
        started = time.perf_counter()
        bolt_request = repair_form_body(
            BoltRequest(
                body=request.get_body(), query=request.query_string, headers=request.get_headers()
            )
        )
        response = self.app.dispatch(bolt_request)
        found = identify(bolt_request.body)
        if found is not None:  # how long Slack waited for its answer (it gives up after 3 s)
            metrics.ACK_SECONDS.labels(found[0]).observe(time.perf_counter() - started)
        return response


class WsgiApp:
    """`/slack/events` to Bolt (when there is an app);
    `/healthz`, `/readyz`, `/metrics` here; else 404.
    """

    def __init__(
        self, app: App | None, health: dict | None = None, ready: Callable[[], bool] | None = None
    ):
        self.handler = RLMapRequestHandler(app, path=EVENTS_PATH) if app is not None else None
        self.health = health or {}
        self.ready = ready or (lambda: True)

    def __call__(self, environ: dict, start_response) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO"), environ.get("REQUEST_METHOD")
        if method in {"GET", "HEAD"}:
            if path == HEALTH_PATH:
                return _json(start_response, "200 OK", {"ok": True, **self.health})
            if path == READY_PATH:
                if self.ready():
                    return _json(start_response, "200 OK", {"ok": True})
                return _json(
                    start_response,
                    "503 Service Unavailable",
                    {"ok": False, "state_store": "unavailable"},
                )
            if path == METRICS_PATH:
                body, content_type = metrics.exposition()
                start_response(
                    "200 OK", [("Content-Type", content_type), ("Content-Length", str(len(body)))]
                )
                return [body]
        if self.handler is None:
            return _json(start_response, "404 Not Found", {"ok": False, "error": "not found"})
        return self.handler(environ, start_response)


def _json(start_response, status: str, payload: dict) -> list[bytes]:
    body = json.dumps(payload).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    )
    return [body]


def make_server(
    app: App | None,
    host: str,
    port: int,
    threads: int = 8,
    health: dict | None = None,
    ready: Callable[[], bool] | None = None,
):
    """A waitress server (not Bolt's development server); call ``.run()`` to serve."""
    from waitress.server import create_server

    return create_server(
        WsgiApp(app, health, ready), host=host, port=port, threads=threads, ident="rlmap-bot"
    )
