"""Where the real-log bank's files are, for the tests that read them.

The files are not in the repository (tests/data/real_logs/README.md): they are read from
``RLMAP_REAL_LOGS``, or ``../shared/real_logs`` beside the checkout as CI places them. The bank
grows by adding entries to bank.yaml while a CI's copy of the folder may still hold an older set,
so a missing log skips only the tests of that log, saying which and where it was looked for.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support import ROOT


def logs_folder() -> Path | None:
    """The folder holding the bank's log folders, or None when there is none."""
    given = os.environ.get("RLMAP_REAL_LOGS")
    if given:
        return Path(given)
    default = ROOT.parent / "shared" / "real_logs"
    return default if default.is_dir() else None


def bank_log(logs: Path, name: str, path: str) -> Path:
    """The file of the bank entry ``name`` (its ``path`` in bank.yaml); skips the calling test
    with one sentence when the entry's folder is not in ``logs``."""
    folder = logs / Path(path).parts[0]
    if not folder.is_dir():
        pytest.skip(f"the bank log {name} is not here: its folder is expected at {folder}")
    return logs / path
