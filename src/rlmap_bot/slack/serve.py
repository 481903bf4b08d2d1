"""Start the Slack app: Socket Mode (default, no public URL) or HTTP."""

from __future__ import annotations

import logging
import signal
import sys
import threading

from rlmap_bot.slack.settings import SettingsError, load_settings

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


def serve_from_env(paths, http: bool, host: str = "127.0.0.1", port: int = 3000) -> None:
    """Validate settings, open the core, and serve until interrupted."""
    from rlmap_bot.slack.app import SlackFrontEnd

    try:
        settings = load_settings().require(http=http)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    core = paths.core()
    from rlmap_bot.state.store import StateStoreError

    try:
        core.state  # open (and migrate) now: a wrong RLMAP_STATE_URL should fail at start, plainly
    except StateStoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    front = SlackFrontEnd(core, settings)
    install_reload_signal(core)
    caught_up = front.digests.start_scheduler()
    if caught_up:
        log.info("sent %d digest(s) missed while the bot was down", len(caught_up))
    if http:
        from rlmap_bot.slack.http import make_server

        server = make_server(front.app, host, port, health={"entries": sum(core.store.counts().values())})
        log.info("serving Slack over HTTP at http://%s:%s/slack/events (health: /healthz)", host, server.effective_port)
        try:
            server.run()
        except KeyboardInterrupt:
            pass
        finally:
            server.close()
        return
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    log.info("connecting to Slack in Socket Mode")
    SocketModeHandler(front.app, settings.slack_app_token.get_secret_value()).start()
