"""The Bolt app: wiring only. Listeners live in ``listeners/``, Block Kit in ``blocks/``.

Nothing here decides anything about RL: listeners translate a Slack payload to a
registry command or a flow move, and the result to blocks.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Callable, Iterator

from slack_bolt import App
from slack_sdk import WebClient

from rlmap_bot import wording
from rlmap_bot.core import Core
from rlmap_bot.digest.schedule import DigestSchedule
from rlmap_bot.errors import UnavailableError
from rlmap_bot.jobs import Scheduler
from rlmap_bot.runs.sources.access import workspace_access_for
from rlmap_bot.settings import Settings
from rlmap_bot.slack import listeners
from rlmap_bot.slack.claims import ClaimingExecutor, Claims, LeaseLost, request_key, set_outcome
from rlmap_bot.slack.client import make_client
from rlmap_bot.slack.curation import SlackCuration
from rlmap_bot.slack.diagnosis import DiagnosisThreads
from rlmap_bot.slack.digests import SlackPoster
from rlmap_bot.slack.dispatch import SlackCommands, keeper
from rlmap_bot.slack.middleware import EventClaims
from rlmap_bot.slack.runfiles import RunFiles
from rlmap_bot.slack.watches import SlackWatchPoster
from rlmap_bot.watch.schedule import ScheduledWatches
from rlmap_bot.watch.service import WatchService

log = logging.getLogger(__name__)


class SlackFrontEnd:
    """Holds the core and the Bolt app; one instance per process."""

    def __init__(self, core: Core, settings: Settings):
        self.core = core
        self.settings = settings
        secret = (
            settings.slack_signing_secret.get_secret_value()
            if settings.slack_signing_secret
            else ""
        )
        self.installations = None
        oauth_settings = None
        if settings.oauth:
            from rlmap_bot.slack.oauth import oauth_setup

            self.installations, oauth_settings = oauth_setup(settings, core.state.engine)
        self.claims = Claims(core.state, settings)
        self.seal_at_start()
        # Bolt's documented App arguments: listeners run after the ack (process_before_response
        # off) on an executor of ours that finishes each request's claim when its listener returns.
        self.app = App(
            client=make_client(settings),
            signing_secret=secret,
            process_before_response=False,
            listener_executor=ClaimingExecutor(self.claims),
            oauth_settings=oauth_settings,
            logger=logging.getLogger("rlmap_bot.slack.bolt"),
        )
        self.threads = DiagnosisThreads(core)
        self.commands = SlackCommands(core, settings, self.threads)
        self.run_files = RunFiles(core, settings, self.threads)
        self.jobs = Scheduler()  # digests, watches and any other timed work share one scheduler
        self.digests = DigestSchedule(
            core, lambda team: SlackPoster(self.client_for(team)), self.jobs
        )
        # Watches check on their own schedule, each read with its workspace's access and posted
        # through the workspace's client.
        service = WatchService(
            core, access=workspace_access_for(settings, core.state), settings=settings
        )
        self.watches = ScheduledWatches(
            service,
            lambda team: SlackWatchPoster(self.client_for(team), keep=keeper(core, team)),
            self.jobs,
        )
        self.commands.watch_service = service
        self.curation = SlackCuration(core, settings, self.client_for)
        self.commands.curation, self.commands.curator_cards = (
            self.curation.flow,
            self.curation.cards,
        )
        self.app.use(EventClaims(self.claims))  # claims each request before any listener runs
        # The curation listeners go before the catch-all ones.
        self.curation.register(self.app, self.after_ack, self.commands)
        listeners.register(self)
        self.app.error(self.on_error)

    def seal_at_start(self) -> int:
        """Seal the stored Slack tokens and tracker credentials again under the first
        RLMAP_ENCRYPTION_KEY (slack/sealing.py); WrongKeyError (one line) when it opens nothing."""
        from rlmap_bot.slack.sealing import seal_at_start

        return seal_at_start(self.settings, self.core.state, self.installations)

    def start_sweeper(self) -> None:
        """Renew this replica's leases and finish requests
        other replicas left unfinished (a thread).
        """
        self.claims.start(self.app.dispatch)

    def ready(self) -> bool:
        """Can this replica work? (``/readyz``: the state store answers.)"""
        return self.core.state.ready()

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

    def on_error(
        self,
        error: Exception,
        body: dict,
        logger: logging.Logger,
        respond: Callable | None = None,
        context: Any = None,
    ) -> Any:
        what = request_key(context, body)
        if isinstance(error, UnavailableError):
            # One line per request; the outage itself is
            # logged once, with its traceback, start and end.
            set_outcome(context, "retry")
            logger.warning("%s: state store unavailable; to be handled again when it answers", what)
            return
        if isinstance(error, LeaseLost):
            logger.info("%s: %s; stopped without replying", what, error)
            return
        set_outcome(context, "failed")
        # Tokens are never in request bodies or in our
        # exceptions' messages, so the trace is safe to log.
        logger.error("listener failed: %s: %s", type(error).__name__, error, exc_info=error)
        if respond is not None and body.get("response_url"):
            self._tell(respond, wording.SOMETHING_WENT_WRONG)

    @contextlib.contextmanager
    def after_ack(self, context: Any, respond: Callable | None) -> Iterator[None]:
        """Wrap a click or command listener's work after ``ack()``: any failure keeps the ack.

        Bolt drops the ack of a listener that raises after acking (Slack then shows the person
        its own error after 3 s on top of ours); here the failure is caught: the state store
        not answering is one log line and "briefly unavailable" to the person, anything else
        is logged with its traceback and "something went wrong".
        """
        try:
            yield
        except UnavailableError:
            set_outcome(context, "told")
            log.warning(
                "%s: state store unavailable; told the person to try again", request_key(context)
            )
            self._tell(respond, wording.BRIEFLY_UNAVAILABLE)
        except LeaseLost as exc:
            log.info("%s: %s; stopped without replying", request_key(context), exc)
        except Exception as exc:  # noqa: BLE001 - every failure is logged and told, none escapes to Bolt
            set_outcome(context, "failed")
            log.error("listener failed: %s: %s", type(exc).__name__, exc, exc_info=exc)
            self._tell(respond, wording.SOMETHING_WENT_WRONG)

    @staticmethod
    def _tell(respond: Callable | None, text: str) -> None:
        if respond is None:
            return
        respond = getattr(
            respond, "inner", respond
        )  # not a reply to record: the store may be what failed
        try:  # never silence: the person who clicked or typed hears that it failed
            respond(response_type="ephemeral", replace_original=False, text=text)
        except Exception:  # noqa: BLE001 - the reply is best effort
            log.info("could not tell the user about the failure")
