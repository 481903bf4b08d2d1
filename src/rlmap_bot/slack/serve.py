"""Start the Slack app: Socket Mode (default, no public URL) or HTTP."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading

log = logging.getLogger(__name__)


def install_reload_signal(core) -> None:
    """SIGHUP rebuilds the knowledge store from the files; a bad file keeps the old one."""
    if not hasattr(signal, "SIGHUP"):
        return

    def rebuild() -> None:
        try:
            counts = core.reload()
            log.info("reloaded the catalog: %s", counts)
        except Exception as exc:  # noqa: BLE001 - a curator's mistake must not stop the bot
            log.error("reload failed, the previous catalog stays in use: %s", exc)

    def on_hup(_signum, _frame) -> None:
        # Rebuild off the signal handler, so the server's loop keeps serving meanwhile.
        threading.Thread(target=rebuild, name="rlmap-reload", daemon=True).start()

    signal.signal(signal.SIGHUP, on_hup)


class SocketModeRunner:
    """Bolt's Socket Mode adapter for ``websockets``, on its
    own asyncio loop in a thread; the app stays synchronous.

    Not slack-sdk's built-in client: on a connection refresh (Slack's ``disconnect``,
    ``refresh_requested``) that one holds every envelope of the new connection until its read of
    the old one times out (3 s, past Slack's 3 s ack deadline); websocket-client's adapter starts
    the new connection only once the old one's loop has wound down, sometimes a ping interval
    (10 s) later. This adapter opens the new connection and reads it before closing the old one.
    tests/test_slack_socket_mode.py reproduces both against a stand-in.
    """

    def __init__(self, app, app_token: str, api_url: str):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="rlmap-socket-mode", daemon=True
        )
        self.thread.start()

        async def make():
            from slack_bolt.adapter.socket_mode.websockets import SocketModeHandler
            from slack_sdk.web.async_client import AsyncWebClient

            # The adapter's client must be asynchronous: it
            # only opens connections (apps.connections.open).
            return SocketModeHandler(app, app_token, web_client=AsyncWebClient(base_url=api_url))

        self.handler = self._run(make())

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def connect(self) -> None:
        self._run(self.handler.connect_async())

    def close(self) -> None:
        try:
            self._run(self.handler.close_async())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


def serve_from_env(terminal, http: bool, host: str = "127.0.0.1", port: int = 3000) -> None:
    """Validate settings, open the core and the state store, and serve until interrupted.

    Configuration problems (a missing token, a wrong RLMAP_STATE_URL) raise
    :class:`~rlmap_bot.errors.RlmapError`, which the CLI prints as one line.
    """
    from rlmap_bot.jobs.housekeeping import Housekeeping
    from rlmap_bot.logs import configure
    from rlmap_bot.slack import preflight
    from rlmap_bot.slack.app import SlackFrontEnd
    from rlmap_bot.slack.client import make_client
    from rlmap_bot.slack.http import make_server

    settings = preflight.require(terminal.settings, http=http)  # what is missing, wrong kinds
    configure(settings)  # text or JSON lines, secrets redacted
    client = make_client(settings)
    preflight.check_bot_token(
        settings, client
    )  # a revoked token or no Slack: one line, before anything starts
    if not http:
        preflight.check_app_token(settings, client)
    core = terminal.core()
    _ = core.state  # open (and migrate) now: a wrong RLMAP_STATE_URL should fail at start, plainly
    front_end = SlackFrontEnd(core, settings)
    install_reload_signal(core)
    front_end.start_sweeper()
    front_end.jobs.register(Housekeeping(core))  # idle diagnoses expired, old claims forgotten
    caught_up = front_end.digests.start_scheduler()
    if caught_up:
        log.info("sent %d digest(s) missed while the bot was down", len(caught_up))
    front_end.curation.start()  # approved additions and kept suggestions, polled
    if front_end.curation.start_scout(front_end.jobs):
        log.info("caught up the weekly paper scan missed while the bot was down")
    watched = front_end.watches.start_scheduler()
    if watched:
        log.info(
            "checking %d watched run(s) once for the slots missed while the bot was down",
            len(watched),
        )
    health = {"entries": sum(core.store.counts().values())}
    if http:
        server = make_server(front_end.app, host, port, health=health, ready=front_end.ready)
        log.info(
            "serving Slack over HTTP at http://%s:%s/slack/events (health: /healthz, readiness: "
            "/readyz, metrics: /metrics)",
            host,
            server.effective_port,
        )
        try:
            server.run()
        except KeyboardInterrupt:
            pass
        finally:
            server.close()
        return
    assert settings.slack_app_token is not None, (
        "preflight.require(settings, http=False) checked it"
    )
    if settings.rlmap_metrics_port is not None:
        server = make_server(
            None, host, settings.rlmap_metrics_port, threads=2, health=health, ready=front_end.ready
        )
        threading.Thread(target=server.run, name="rlmap-metrics", daemon=True).start()
        log.info(
            "serving /healthz, /readyz and /metrics at http://%s:%s", host, server.effective_port
        )
    log.info("connecting to Slack in Socket Mode")
    handler = SocketModeRunner(
        front_end.app, settings.slack_app_token.get_secret_value(), settings.slack_api_url
    )
    handler.connect()
    try:
        threading.Event().wait()
    finally:
        handler.close()
