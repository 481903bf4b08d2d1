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


def wandb_offline_env(root: Path) -> dict[str, str]:
    """This process's environment for the W&B SDK writing an offline run under ``root``: no
    account, no network, no git, no console capture, none of the caller's own WANDB_ settings."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update(
        WANDB_MODE="offline",
        WANDB_SILENT="true",
        WANDB_DIR=str(root),
        WANDB_CONFIG_DIR=str(root / ".config"),
        WANDB_CACHE_DIR=str(root / ".cache"),
        WANDB_DATA_DIR=str(root / ".data"),
        WANDB_CONSOLE="off",
        WANDB_DISABLE_GIT="true",
    )
    return env


def python_says(script: str, env: dict[str, str], timeout: float = 180) -> str:
    """Run ``script`` (dedented) in a fresh Python with ``env`` added to this environment, as a
    training job would use a tracker's own SDK; what it printed last as ``OUT=...``."""
    import os
    import subprocess
    import sys
    import textwrap

    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said = [line for line in done.stdout.splitlines() if line.startswith("OUT=")]
    return said[-1].removeprefix("OUT=")
