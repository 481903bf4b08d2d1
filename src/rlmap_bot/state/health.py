"""Is the state store answering? Outages are logged once, with their start and end.

Every failed database operation reports here (see :func:`rlmap_bot.state.db.open_engine`):
the first failure of an outage is logged with its traceback, the rest are only
counted (each request that failed logs its own one line where it is handled),
and the first success after it logs that the outage is over, with when it began
and ended. ``/readyz`` asks :meth:`StateHealth.probe`.

An outage starts at the first failed operation: a single failure is worth its one
traceback (it is rare, and it is the only one logged for as long as the store stays
down), and detection takes no longer than the failed operation itself: a refused
connection at once, an unreachable host within the connect time-out
(``PG_CONNECT_TIMEOUT_S``). It ends at the first success that proves the store is
back: one over a connection opened after the outage began, or any success once
:data:`SETTLE_S` has passed since the last failure. A connection opened before it
can still answer for a moment while the others are cut (seen under load in CI: an
outage "ended" 13 ms after it began and began again 13 ms later, with a second
traceback), which is the same outage, not a recovery.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from typing import Any

from rlmap_bot import metrics

log = logging.getLogger("rlmap_bot.state")
# How long after the last failure any success counts as recovery. Judgement: connections that
# outlive a cut answer for milliseconds (13 ms in the CI run above); a second is far beyond that,
# and short beside readiness probes, which come every few seconds.
SETTLE_S = 1.0


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _stamp(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="milliseconds")


class StateHealth:
    def __init__(self) -> None:
        self.down_since: dt.datetime | None = None
        self.last_failure: dt.datetime | None = None
        self.errors = 0
        self._lock = threading.Lock()
        metrics.STATE_STORE_UP.set(1)

    def failed(self, error: BaseException) -> None:
        metrics.STATE_STORE_ERRORS.inc()
        with self._lock:
            since = self.down_since
            first = since is None
            if since is None:
                since = self.down_since = _now()
                self.errors = 0
            self.errors += 1
            self.last_failure = _now()
        if first:
            metrics.STATE_STORE_UP.set(0)
            reason = (
                str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            )
            log.error("state store unavailable since %s: %s", _stamp(since), reason, exc_info=error)

    def ok(self, connected_at: float | None = None) -> None:
        """A success. ``connected_at`` (epoch seconds): when the connection it used was opened; one
        older than the outage proves nothing until SETTLE_S has passed since the last failure."""
        with self._lock:
            since, errors = self.down_since, self.errors
            if since is None:
                return
            fresh = connected_at is not None and connected_at >= since.timestamp()
            settled = (
                self.last_failure is None
                or (_now() - self.last_failure).total_seconds() >= SETTLE_S
            )
            if not (fresh or settled):
                return
            self.down_since = None
        end = _now()
        metrics.STATE_STORE_UP.set(1)
        log.warning(
            "state store answering again: outage from %s to %s (%.1f s, %d failed operations)",
            _stamp(since),
            _stamp(end),
            (end - since).total_seconds(),
            errors,
        )

    def probe(self, engine: Any) -> bool:
        """One round trip to the database; True when it answered."""
        from rlmap_bot.errors import UnavailableError

        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("select 1")
        except UnavailableError:
            return False
        except Exception as exc:  # noqa: BLE001 - anything else is also "not ready"; counted as a failure
            self.failed(exc)
            return False
        self.ok()
        return True
