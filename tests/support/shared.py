"""Test data built once per test run and shared by every pytest-xdist worker.

A session fixture runs once in each worker that draws one of its tests, so data that takes seconds
of CPU to write (runs logged by a tracker's own SDK, in its own processes) was written up to four
times. :func:`once_per_run` builds it once, in the run's temporary folder that all workers share
(pytest-xdist's documented recipe: the parent of each worker's ``basetemp``), under a file lock; the
other workers wait for it and read the same folder. Tests that change what is in it copy it first.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def once_per_run(
    factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]
) -> tuple[Path, Any]:
    """``(folder, result)``: ``build(folder)`` run once for the whole test run.

    ``result`` must be JSON (it is kept beside the folder for the workers that did not build it).
    A build that failed leaves no mark, so the next worker to ask builds again and fails the same
    way in its own tests, instead of reading half-written data.
    """
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # every worker's basetemp is a folder of the run's own
    folder, done = root / f"shared-{name}", root / f"shared-{name}.json"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            done.write_text(json.dumps(build(folder)))
        return folder, json.loads(done.read_text())
