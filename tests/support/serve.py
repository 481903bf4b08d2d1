"""`rlmap-bot serve --http` as a real process, for tests that kill and restart it."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

EXE = str(Path(sys.executable).with_name("rlmap-bot"))


def start(env: dict, log: Path) -> tuple[subprocess.Popen, str]:
    pattern = r"serving Slack over HTTP at (http://[\d.]+:\d+)/slack/events"
    before = len(re.findall(pattern, log.read_text())) if log.exists() else 0
    handle = open(log, "a")
    proc = subprocess.Popen(
        [EXE, "serve", "--http", "--port", "0"], env=env, stdout=handle, stderr=subprocess.STDOUT
    )
    # Generous: start-up may build the knowledge store, which takes several times longer on a
    # loaded CI machine (two replicas and the test workers on two cores); a working start is quick.
    started = time.time()
    deadline = started + 120
    while time.time() < deadline:
        found = re.findall(pattern, log.read_text())
        if len(found) > before:
            return proc, found[-1]
        if proc.poll() is not None:
            raise AssertionError(f"serve exited: {log.read_text()}")
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"serve did not start in {time.time() - started:.0f} s: {log.read_text()}")
