"""The Bolt app: wiring only. Listeners live in ``listeners/``, Block Kit in ``blocks/``.

Nothing here decides anything about RL: listeners translate a Slack payload to a
registry command or a flow move, and the result to blocks.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from slack_bolt import App
from slack_sdk import WebClient

from rlmap_bot import wording
from rlmap_bot.core import Core
from rlmap_bot.settings import Settings
from rlmap_bot.slack import listeners
from rlmap_bot.slack.client import make_client
from rlmap_bot.slack.digests import SlackDigests
from rlmap_bot.slack.diagnosis import DiagnosisThreads
from rlmap_bot.slack.dispatch import SlackCommands
from rlmap_bot.slack.middleware import EventDedupe
from rlmap_bot.slack.runfiles import RunFiles
from rlmap_bot.slack.watches import SlackWatches

log = logging.getLogger(__name__)


class SlackFrontEnd:
    """Holds the core and the Bolt app; one instance per process."""

    def __init__(self, core: Core, settings: Settings):
        self.core = core
        self.settings = settings
        secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
        self.installations = None
        oauth_settings = None
        if settings.oauth:
            from rlmap_bot.slack.oauth import oauth_setup

            self.installations, oauth_settings = oauth_setup(settings, core.state.engine)
        self.app = App(
            client=make_client(settings),
            signing_secret=secret,
            process_before_response=False,
            oauth_settings=oauth_settings,
            logger=logging.getLogger("rlmap_bot.slack.bolt"),
        )
        self.threads = DiagnosisThreads(core)
        self.commands = SlackCommands(core, settings, self.threads)
        self.run_files = RunFiles(core, settings, self.threads)
        self.digests = SlackDigests(core, self.client_for)
        self.watches = SlackWatches(core, self.client_for, settings)
        self.commands.extra["watch_service"] = self.watches.service
        self.app.use(EventDedupe(core.state.events.claim))
        listeners.register(self)
        self.app.error(self.on_error)

    def client_for(self, team: str) -> WebClient:
        """The Web API client for a workspace: its installation's token, or the one bot token."""
        if self.installations is None:
            return self.app.client
        bot = self.installations.find_bot(enterprise_id=None, team_id=team)
        if bot is None:
            raise LookupError(f"workspace {team} has no installation")
        return make_client(self.settings, token=bot.bot_token)

    def forget_workspace(self, team: str, enterprise: str | None = None) -> None:
        """The workspace removed the app: forget its tokens, subscriptions, sessions and ledger."""
        if self.installations is not None:
            self.installations.delete_all(enterprise_id=enterprise, team_id=team)
        removed = self.core.state.forget_team(team)
        self.digests.resync()
        self.watches.resync()
        log.info("workspace %s uninstalled the app; removed %s", team, removed)

    def on_error(self, error: Exception, body: dict, logger: logging.Logger, respond: Callable | None = None) -> Any:
        # Tokens are never in request bodies or in our exceptions' messages, so the trace is safe to log.
        logger.error("listener failed: %s: %s", type(error).__name__, error, exc_info=error)
        if respond is not None and body.get("response_url"):
            try:  # never silence: the person who clicked or typed hears that it failed
                respond(response_type="ephemeral", replace_original=False, text=wording.SOMETHING_WENT_WRONG)
            except Exception:  # noqa: BLE001 - the reply is best effort
                logger.info("could not tell the user about the failure")


def build_app(core: Core, settings: Settings) -> App:
    return SlackFrontEnd(core, settings).app
