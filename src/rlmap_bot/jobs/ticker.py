"""A call repeated every few seconds on a daemon thread: the claims sweeper, the additions poller.

These run on every replica and need no slot or claim (each tick is safe to repeat), so
they are not scheduler jobs; they share this one loop instead of each writing its own.

A tick that raises never ends the loop. The state store not answering
(:class:`~rlmap_bot.errors.UnavailableError`) is logged once per outage by the store's
health (``state/health.py``), so a tick stopped by it adds nothing to the log; any other
error is logged as one record with its traceback (``log.exception``, one JSON line under
``RLMAP_LOG_FORMAT=json``), and the next tick comes as usual.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from rlmap_bot.errors import UnavailableError

log = logging.getLogger(__name__)


class Ticker:
    """``tick()`` every ``every`` seconds from :meth:`start` until :meth:`stop` (which waits)."""

    def __init__(self, name: str, every: float, tick: Callable[[], object]):
        self.name, self.every, self.tick = name, every, tick
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def run_once(self) -> None:
        """One tick, as the loop runs it: an error is logged, never raised."""
        try:
            self.tick()
        except UnavailableError:
            log.debug("%s: tick skipped, the state store is not answering", self.name)
        except Exception:  # noqa: BLE001 - the loop outlives any one failing tick
            log.exception("%s: tick failed; the next one runs in %g s", self.name, self.every)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.run_once()
