"""Fixtures that run the real Bolt app on a real WSGI server against the stand-in."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from rlmap_bot.core import Core
from rlmap_bot.slack.app import SlackFrontEnd
from rlmap_bot.slack.http import make_server
from rlmap_bot.settings import Settings

from support import KNOWLEDGE
from support.standin import BOT_TOKEN, SIGNING_SECRET, Slack, StandIn

# A key for the OAuth tests (tokens are encrypted at rest): made for the tests, protects nothing.
ENCRYPTION_KEY = "dGVzdC1rZXktcmxtYXAtYm90LW5vdC1hLXNlY3JldCE="


@dataclass
class RunningBot:
    front: SlackFrontEnd
    server: object
    thread: threading.Thread
    slack: Slack

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.effective_port}"

    def stop(self) -> None:
        # Let requests in flight finish before the server's sockets close under them.
        self.stopping.set()
        self.front.claims.stop()
        self.server.task_dispatcher.shutdown(cancel_pending=False, timeout=5)
        self.server.close()
        self.thread.join(timeout=5)
        self.front.app.listener_runner.listener_executor.shutdown(wait=True)


def start_bot(standin: StandIn, db: Path, state: Path, knowledge: Path = KNOWLEDGE, **settings) -> RunningBot:
    values = dict(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=standin.base_url,
                  rlmap_admins="UADMIN")
    values.update(settings)
    front = SlackFrontEnd(Core(knowledge, db, state_url=state), Settings(**values))
    front.start_sweeper()
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
