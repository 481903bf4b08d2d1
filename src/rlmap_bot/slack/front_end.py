"""What listeners need from the Slack front-end, as a protocol.

:class:`rlmap_bot.slack.app.SlackFrontEnd` builds the app and registers the
listeners; the listeners see it only through :class:`FrontEnd`, so ``listeners/``
never imports ``app`` (no import cycle between the wiring and what it wires).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from slack_bolt import App
    from slack_sdk.oauth.installation_store import InstallationStore

    from rlmap_bot.core import Core
    from rlmap_bot.slack.diagnosis import DiagnosisThreads
    from rlmap_bot.slack.dispatch import SlackCommands
    from rlmap_bot.slack.runfiles import RunFiles
    from rlmap_bot.watch.schedule import ScheduledWatches


class FrontEnd(Protocol):
    @property
    def app(self) -> App: ...

    @property
    def core(self) -> Core: ...

    @property
    def threads(self) -> DiagnosisThreads: ...

    @property
    def commands(self) -> SlackCommands: ...

    @property
    def run_files(self) -> RunFiles: ...

    @property
    def watches(self) -> ScheduledWatches: ...

    @property
    def installations(self) -> InstallationStore | None: ...

    def after_ack(
        self, context: Any, respond: Callable | None
    ) -> contextlib.AbstractContextManager[None]:
        """Run a listener's work after its ack; any failure
        is logged and told, never raised to Bolt.
        """
        ...

    def forget_workspace(self, team: str, enterprise: str | None = None) -> None:
        """The workspace removed the app: forget everything the bot keeps for it."""
        ...
