"""Shared fixtures: real stores in temporary folders, built from the bundled catalog."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KNOWLEDGE = ROOT / "knowledge"

# Never let a developer's own data dir or Slack tokens leak into a test run.
for _name in ("RLMAP_DB", "RLMAP_KNOWLEDGE", "RLMAP_STATE_DB", "RLMAP_STATE_URL", "RLMAP_HOME",
              "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"):
    os.environ.pop(_name, None)


@pytest.fixture(scope="session")
def built_db(tmp_path_factory) -> Path:
    """A knowledge store built once from the bundled catalog (read-only use)."""
    from rlmap_bot.knowledge.store import build_store

    db = tmp_path_factory.mktemp("kb") / "knowledge.db"
    build_store(KNOWLEDGE, db)
    return db


@pytest.fixture(scope="session")
def core(built_db, tmp_path_factory):
    """A Core over the bundled catalog, with its own state store."""
    from rlmap_bot.core import Core

    state = tmp_path_factory.mktemp("state") / "state.db"
    return Core(KNOWLEDGE, built_db, state_url=state)


@pytest.fixture
def knowledge_copy(tmp_path) -> Path:
    """A writable copy of the bundled catalog, for tests that change or break files."""
    dest = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE, dest)
    return dest


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """Environment for running the real `rlmap-bot` command in a subprocess."""
    out = dict(os.environ)
    out.update(RLMAP_HOME=str(tmp_path / "home"), RLMAP_DB=str(tmp_path / "home" / "knowledge.db"))
    return out


def run_cli(args: list[str], env: dict[str, str], stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the installed console script exactly as a user would."""
    exe = Path(sys.executable).with_name("rlmap-bot")
    return subprocess.run([str(exe), *args], input=stdin, capture_output=True, text=True, env=env, timeout=timeout)
