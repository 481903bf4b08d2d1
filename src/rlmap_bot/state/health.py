"""Is the state store answering? Outages are logged once, with their start and end.

Every failed database operation reports here (see :func:`rlmap_bot.state.db.open_engine`):
the first failure of an outage is logged with its traceback, the rest are only
counted (each request that failed logs its own one line where it is handled),
and the first success after it logs that the outage is over, with when it began
and ended. ``/readyz`` asks :meth:`StateHealth.probe`.

There is no threshold: an outage starts at the first failed operation and ends at
the first success. A single failure is worth its one traceback (it is rare, and
it is the only one logged for as long as the store stays down), and detection
takes no longer than the failed operation itself: a refused connection at once,
an unreachable host within the connect time-out (``PG_CONNECT_TIMEOUT_S``).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from typing import Any

from rlmap_bot import metrics

log = logging.getLogger("rlmap_bot.state")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _stamp(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="milliseconds")


class StateHealth:
    def __init__(self) -> None:
        self.down_since: dt.datetime | None = None
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
        if first:
            metrics.STATE_STORE_UP.set(0)
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            log.error("state store unavailable since %s: %s", _stamp(since), reason, exc_info=error)

    def ok(self) -> None:
        with self._lock:
            since, errors = self.down_since, self.errors
            if since is None:
                return
            self.down_since = None
        end = _now()
        metrics.STATE_STORE_UP.set(1)
        log.warning("state store answering again: outage from %s to %s (%.1f s, %d failed operations)",
                    _stamp(since), _stamp(end), (end - since).total_seconds(), errors)

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
