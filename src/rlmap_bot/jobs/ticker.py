"""A call repeated every few seconds on a daemon thread: the claims sweeper, the additions poller.

These run on every replica and need no slot or claim (each tick is safe to repeat), so
they are not scheduler jobs; they share this one loop instead of each writing its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Ticker:
    """``tick()`` every ``every`` seconds from :meth:`start` until :meth:`stop` (which waits for it)."""

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

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.tick()
