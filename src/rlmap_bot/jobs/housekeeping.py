"""The state store's hourly housekeeping, a kind of timed job like the others.

Idle guided diagnoses are expired after ``RLMAP_SESSION_TTL_HOURS``, and finished request claims
are forgotten once Slack can no longer retry their request (Slack retries for minutes; a week
keeps a wide margin). Both are safe to run twice or on every replica at once, so a tick claims
no slot, and a tick missed while the bot was down is not caught up: the next one does the same.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from apscheduler.triggers.interval import IntervalTrigger

from rlmap_bot.errors import UnavailableError

if TYPE_CHECKING:
    from rlmap_bot.core import Core

log = logging.getLogger(__name__)
CLAIMS_KEPT = dt.timedelta(days=7)


@dataclass(frozen=True)
class _Hourly:
    id: str = "hourly"


class Housekeeping:
    """One job, every hour (the first an hour after registering)."""

    name = "housekeeping"
    misfire_grace: dt.timedelta | None = None

    def __init__(self, core: Core):
        self.core = core

    def load(self) -> list[_Hourly]:
        return [_Hourly()]

    def trigger(self, item: _Hourly) -> IntervalTrigger:
        return IntervalTrigger(hours=1, timezone=dt.UTC)

    def due(self, item: _Hourly) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    def missed(self, items: Sequence[_Hourly], now: dt.datetime | None) -> dict[str, dt.datetime]:
        return {}

    def fire(self, item_id: str, due: dt.datetime) -> None:
        self.run(due)

    def run(self, now: dt.datetime | None = None) -> None:
        """Expire idle diagnoses and forget finished claims older than Slack ever retries."""
        now = now or dt.datetime.now(dt.UTC)
        try:
            expired = self.core.state.sessions.expire(now - self.core.session_ttl)
            forgotten = self.core.state.events.forget(now - CLAIMS_KEPT)
        except UnavailableError:
            log.warning("housekeeping skipped: state store unavailable")
            return
        log.info("housekeeping: %d diagnoses expired, %d old claims forgotten", expired, forgotten)
