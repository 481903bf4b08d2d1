"""Opening the state database and bringing its schema up to date.

SQLAlchemy Core on SQLite (the default file) or PostgreSQL (``RLMAP_STATE_URL``);
nothing outside ``state/`` knows which. The schema is Alembic migrations under
``migrations/versions``, each with its own frozen DDL, applied at start under a
PostgreSQL advisory lock so replicas starting together do not race. Databases
made before Alembic (a ``schema_migrations`` table) are stamped at the revision
they had reached.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from pathlib import Path
from typing import Any, Iterator

try:
    import fcntl
except ImportError:  # not POSIX: one process per SQLite file is the supported set-up there
    fcntl = None  # type: ignore[assignment]

import sqlalchemy as sa

from rlmap_bot.errors import ConfigError
from rlmap_bot.files import ensure_folder
from rlmap_bot.state.models import ConflictError, utcnow  # noqa: F401 - re-exported for the repositories

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_LOCK_KEY = 7274627  # any constant shared by every replica


class StateStoreError(ConfigError):
    """The state store cannot be opened; the message names it without its password."""


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="microseconds")


def safe_url(url: str) -> str:
    """The URL as it may appear in logs and errors: no password."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a path or a malformed URL
        return url.split("@")[-1] if "@" in url else url


def open_engine(url_or_path: str | Path) -> sa.Engine:
    """An engine for a URL or a SQLite file path, migrated to the newest schema."""
    url = str(url_or_path)
    if "://" not in url:
        path = Path(url).expanduser()
        try:
            ensure_folder(path.parent, f"the state store {path}")
        except ConfigError as exc:
            raise StateStoreError(str(exc)) from None
        url = f"sqlite:///{path}"
    try:
        engine = sa.create_engine(url, future=True, pool_pre_ping=True)
        if engine.dialect.name == "sqlite":
            sa.event.listen(engine, "connect", _sqlite_pragmas)
        migrate(engine)
    except (sa.exc.SQLAlchemyError, ImportError, ValueError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise StateStoreError(f"cannot open the state store {safe_url(url)}: {reason}") from None
    return engine


def migrate(engine: sa.Engine) -> str:
    """Apply every migration not yet applied; return the revision the database is at."""
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with _sqlite_file_lock(engine), engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql(f"select pg_advisory_xact_lock({_LOCK_KEY})")
        config.attributes["connection"] = conn
        _stamp_legacy(conn, config)
        command.upgrade(config, "head")
        return MigrationContext.configure(conn).get_current_revision() or ""


@contextlib.contextmanager
def _sqlite_file_lock(engine: sa.Engine) -> Iterator[None]:
    """SQLite has no advisory locks: processes (and threads) opening one file migrate one at a time."""
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:" or fcntl is None:
        yield
        return
    with open(f"{database}.migrate-lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _stamp_legacy(conn: sa.Connection, config: Any) -> None:
    """A database from before Alembic records its migrations in ``schema_migrations``: carry them over."""
    from alembic import command

    inspector = sa.inspect(conn)
    if "schema_migrations" not in inspector.get_table_names() or "alembic_version" in inspector.get_table_names():
        return
    done = conn.exec_driver_sql("select max(version) from schema_migrations").scalar()
    if done:
        command.stamp(config, f"{int(done):04d}")


def insert_ignoring_duplicates(engine: sa.Engine, table: sa.Table) -> Any:
    """INSERT that skips rows already there (ON CONFLICT DO NOTHING on both engines)."""
    if engine.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table).on_conflict_do_nothing()


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()
