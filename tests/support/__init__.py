"""Helpers shared by the tests: the Slack stand-in, a running bot, drivers for cards and processes,
and synthetic training logs in real formats."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
KNOWLEDGE = ROOT / "knowledge"


def skip_unless_installed(module: str, reason: str) -> None:
    """Skip the calling test module when ``module`` is not installed, without importing it.

    For modules only a test's own subprocesses import (wandb: about a second of CPU to import),
    which ``pytest.importorskip`` would import in every pytest-xdist worker at collection.
    """
    if importlib.util.find_spec(module) is None:
        import pytest

        pytest.skip(reason, allow_module_level=True)
