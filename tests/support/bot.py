"""The real Bolt app against the stand-in: in process
(requests go straight into Bolt's dispatch, as the
WSGI handler would pass them) or on a real WSGI server
over HTTP for the tests where HTTP is the point."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from rlmap_bot.core import Core
from rlmap_bot.settings import Settings
from rlmap_bot.slack.app import SlackFrontEnd
from rlmap_bot.slack.http import make_server
from support import KNOWLEDGE
from support.http import stop_server
from support.standin import BOT_TOKEN, SIGNING_SECRET, Slack, StandIn

# A key for the OAuth tests (tokens are encrypted at rest): made for the tests, protects nothing.
ENCRYPTION_KEY = "dGVzdC1rZXktcmxtYXAtYm90LW5vdC1hLXNlY3JldCE="


@dataclass
class RunningBot:
    front: SlackFrontEnd
    server: object | None
    thread: threading.Thread | None
    slack: Slack

    @property
    def url(self) -> str:
        assert self.server is not None, (
            "an in-process bot has no URL; use start_bot(..., http=True)"
        )
        return f"http://127.0.0.1:{self.server.effective_port}"

    def stop(self) -> None:
        self.front.claims.stop()
        if self.server is not None:
            # Let requests in flight finish before the server's sockets close under them.
            self.stopping.set()
            self.server.task_dispatcher.shutdown(cancel_pending=False, timeout=5)
            stop_server(self.server, self.thread)
        self.front.app.listener_runner.listener_executor.shutdown(wait=True)


def _front(
    standin: StandIn, db: Path, state: Path | str, knowledge: Path, settings: dict
) -> SlackFrontEnd:
    values = dict(
        slack_bot_token=BOT_TOKEN,
        slack_signing_secret=SIGNING_SECRET,
        slack_api_url=standin.base_url,
        rlmap_admins="UADMIN",
    )
    values.update(settings)
    front = SlackFrontEnd(Core(knowledge, db, state_url=state), Settings(**values))
    front.start_sweeper()
    return front


def start_bot(
    standin: StandIn,
    db: Path,
    state: Path | str,
    knowledge: Path = KNOWLEDGE,
    http: bool = False,
    **settings,
) -> RunningBot:
    """A running bot; ``http=True`` serves it on a real WSGI server (waitress) on loopback."""
    front = _front(standin, db, state, knowledge, settings)
    if not http:
        bot = RunningBot(front, None, None, Slack("http://in-process", standin))
        bot.slack.dispatch = in_process(front.app)
        return bot
    server = make_server(front.app, "127.0.0.1", 0, threads=4, ready=front.ready)
    stopping = threading.Event()

    def serve() -> None:
        try:
            server.run()
        except (OSError, ValueError):
            if not stopping.is_set():  # only a failure while closing is expected
                raise

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    bot = RunningBot(front, server, thread, None)  # type: ignore[arg-type]
    bot.stopping = stopping
    bot.slack = Slack(bot.url, standin)
    return bot


def start_oauth_bot(standin: StandIn, db: Path, state: Path | str, **settings) -> RunningBot:
    """A bot for many workspaces, installed through the OAuth flow (no one bot token; each
    workspace's token sealed at rest), served over HTTP as the flow needs."""
    oauth = dict(
        slack_bot_token=None,
        slack_client_id="client-id",
        slack_client_secret="client-secret",
        slack_signing_secret=SIGNING_SECRET,
        rlmap_encryption_key=ENCRYPTION_KEY,
    )
    return start_bot(standin, db, state, http=True, **{**oauth, **settings})


def in_process(app):
    """Deliver a signed request straight to Bolt, as the
    WSGI handler does (with its form-body repair).
    """
    from slack_bolt.request import BoltRequest

    from rlmap_bot.slack.http import repair_form_body

    def dispatch(body: str, headers: dict[str, str]) -> tuple[int, str]:
        response = app.dispatch(repair_form_body(BoltRequest(body=body, headers=headers)))
        return response.status, response.body

    return dispatch
