"""`rlmap-bot` on a real terminal (a pseudo-terminal): read and typed at as a person would."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path


class RealTerminal:
    """The installed script run with ``args`` on a pseudo-terminal; use it in a ``with``."""

    def __init__(self, args: list[str], env: dict[str, str]):
        pid, fd = pty.fork()
        if pid == 0:  # the child: the real command on a real terminal
            # As a terminal's shell starts it: a job started in the background (CI often is)
            # inherits SIGINT ignored, and Python then never turns Ctrl-C into KeyboardInterrupt.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            exe = str(Path(sys.executable).with_name("rlmap-bot"))
            os.execve(exe, ["rlmap-bot", *args], env)
        self.pid, self.fd = pid, fd
        self.seen = b""  # everything the terminal showed
        self._read = 0  # how much of it a read_until has taken

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def read_until(self, marker: bytes, timeout: float = 60, nudge: bytes = b"") -> bytes:
        """What the terminal shows from the end of the last marker found to the end of this one;
        while it stays quiet, type ``nudge`` again (as a person would)."""
        deadline = time.time() + timeout
        while marker not in self.seen[self._read :] and time.time() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.5)
            if ready:
                try:
                    self.seen += os.read(self.fd, 65536)
                except OSError:
                    break
            elif nudge:
                self.type(nudge)
        found = self.seen.find(marker, self._read)
        assert found >= 0, self.seen[-800:]
        shown, self._read = self.seen[self._read : found + len(marker)], found + len(marker)
        return shown

    def exit_code(self) -> int:
        """Wait for the command to end; its exit code."""
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        return os.waitstatus_to_exitcode(status)

    def __enter__(self) -> RealTerminal:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
        os.close(self.fd)
