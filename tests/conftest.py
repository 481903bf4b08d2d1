"""Shared fixtures: real stores in temporary folders, built from the bundled catalog."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from support import KNOWLEDGE, ROOT  # noqa: E402,F401 - re-exported for tests

# Never let a developer's own data dir or Slack tokens leak into a test run.
for _name in list(os.environ):
    if _name.startswith(("RLMAP_", "SLACK_")) and _name not in (
        "RLMAP_TEST_PG_URL",
        "RLMAP_REAL_LOGS",
    ):
        os.environ.pop(_name)
# Everything a test writes by default (the shell's log,
# stores) goes to a scratch home, never the developer's.
os.environ["RLMAP_HOME"] = tempfile.mkdtemp(prefix="rlmap-test-home-")


@pytest.fixture(scope="session")
def catalog():
    """The bundled catalog, loaded (read-only use)."""
    from rlmap_bot.knowledge.loader import load_catalog

    return load_catalog(KNOWLEDGE)


@pytest.fixture(scope="session")
def aliases():
    """The bundled catalog's metric-name alias table (read-only use)."""
    from rlmap_bot.runs.aliases import load_aliases

    return load_aliases(KNOWLEDGE)


@pytest.fixture(scope="session")
def built_db(tmp_path_factory) -> Path:
    """A knowledge store built once from the bundled catalog (read-only use)."""
    from rlmap_bot.search.index import build_store

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
def env(tmp_path, built_db) -> dict[str, str]:
    """Environment for running `rlmap-bot` as a user would,
    with its own home and a copy of the built store.

    The copy is fresh for the bundled catalog, so a
    command does not rebuild it first (a test that wants
    a first-use build sets RLMAP_DB elsewhere).
    """
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(built_db, home / "knowledge.db")
    out = dict(os.environ)
    out.update(RLMAP_HOME=str(home), RLMAP_DB=str(home / "knowledge.db"))
    return out


@pytest.fixture
def store_copy(tmp_path, built_db):
    """``store_copy(name)``: a replica's own copy of the
    built store (fresh, so its start builds nothing).
    """

    def copy(name: str) -> str:
        path = tmp_path / f"{name}-knowledge.db"
        if not path.exists():
            shutil.copy(built_db, path)
        return str(path)

    return copy


PG_URL = os.environ.get("RLMAP_TEST_PG_URL", "")
PG_SKIP = "PostgreSQL not available: set RLMAP_TEST_PG_URL to a server URL (.ci/run starts one)"


def _fresh_pg_database(admin_url: str) -> tuple[str, callable]:
    """A new, empty database on the test server, and a function that drops it."""
    import uuid

    import sqlalchemy as sa

    name = f"rlmap_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'create database "{name}"')
    url = sa.engine.make_url(admin_url).set(database=name).render_as_string(hide_password=False)

    def drop() -> None:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'drop database if exists "{name}" with (force)')
        admin.dispose()

    return url, drop


@pytest.fixture(params=["sqlite", "postgresql"])
def state_url(request, tmp_path):
    """A state store URL on each engine: a SQLite file, and a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "state.db")
        return
    if not PG_URL:
        pytest.skip(PG_SKIP)
    url, drop = _fresh_pg_database(PG_URL)
    yield url
    drop()


@pytest.fixture
def pg_url():
    """A fresh PostgreSQL database (skipped, with the reason, when there is no server)."""
    if not PG_URL:
        pytest.skip(PG_SKIP)
    url, drop = _fresh_pg_database(PG_URL)
    yield url
    drop()


@pytest.fixture
def arxiv():
    """The local arXiv API stand-in, serving recorded
    arXiv answers (see support/arxiv_standin.py).
    """
    from support.arxiv_standin import ArxivStandIn

    s = ArxivStandIn().start()
    yield s
    s.stop()


@pytest.fixture
def standin():
    """The local Slack Web API stand-in (see support/standin.py)."""
    from support.standin import StandIn

    s = StandIn().start()
    yield s
    s.stop()


@pytest.fixture
def bot(standin, built_db, tmp_path):
    """The real Bolt app, in process: signed requests go
    straight into Bolt's dispatch; it talks to the stand-in.
    """
    from support.bot import start_bot

    running = start_bot(standin, built_db, tmp_path / "state.db")
    yield running
    running.stop()


@pytest.fixture
def http_bot(standin, built_db, tmp_path):
    """The real Bolt app on a real WSGI server (waitress) over
    loopback HTTP, for the tests where HTTP is the point.
    """
    from support.bot import start_bot

    running = start_bot(standin, built_db, tmp_path / "state.db", http=True)
    yield running
    running.stop()


@pytest.fixture
def serve_env(env, standin):
    """Environment for `rlmap-bot serve --http` as a process, pointed at the stand-in."""
    from support.standin import BOT_TOKEN, SIGNING_SECRET

    env.update(
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_URL=standin.base_url,
    )
    env.pop("SLACK_APP_TOKEN", None)
    return env


@pytest.fixture
def processes():
    """Start `rlmap-bot serve --http` processes on demand: ``launch(env, log) -> (process, url)``.

    Every one still running is stopped at the end
    (SIGTERM, then SIGKILL). Request it after ``pg_url``
    so the processes stop before their database is dropped.
    """
    import signal
    import subprocess

    from support.serve import start

    started: list = []

    def launch(env: dict, log):
        proc, url = start(env, log)
        started.append(proc)
        return proc, url

    yield launch
    for proc in started:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
