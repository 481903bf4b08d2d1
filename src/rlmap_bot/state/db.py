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

    HAVE_FCNTL = True
except ImportError:  # not POSIX: one process per SQLite file is the supported set-up there
    HAVE_FCNTL = False

import sqlalchemy as sa

from rlmap_bot.errors import ConfigError, UnavailableError
from rlmap_bot.files import ensure_folder, is_sqlite_file
from rlmap_bot.state.health import StateHealth
from rlmap_bot.state.models import ConflictError, utcnow  # noqa: F401 - re-exported for the repositories

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_LOCK_KEY = 7274627  # any constant shared by every replica

# How long opening a PostgreSQL connection may take. Without it a database host that drops packets
# (rather than refusing) hangs each request for the system's TCP time-out, minutes; 2 s is libpq's
# minimum and fits inside Slack's 3 s deadline, so an event still gets its HTTP 500 (and Slack
# retries it) instead of a time-out.
PG_CONNECT_TIMEOUT_S = 2
# How long sent data may go unacknowledged on an open PostgreSQL connection before the kernel gives
# up on it: a query on a connection whose server vanished fails within 5 s instead of ~15 minutes of
# retransmissions. Longer than any round trip on a working network, so it never cuts a healthy one.
PG_TCP_USER_TIMEOUT_MS = 5000


class StateStoreError(ConfigError):
    """The state store cannot be opened; the message names it without its password."""


class StateUnavailableError(UnavailableError):
    """The state store stopped answering while the bot runs (a restart, a network blip, a lock)."""

    def __init__(self, message: str = "the state store is not answering"):
        super().__init__(message)


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat(timespec="microseconds")


def safe_url(url: str) -> str:
    """The URL as it may appear in logs and errors: no password."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a path or a malformed URL
        return url.split("@")[-1] if "@" in url else url


def open_engine(url_or_path: str | Path, health: StateHealth | None = None) -> sa.Engine:
    """An engine for a URL or a SQLite file path, migrated to the newest schema.

    Once open, a database that stops answering raises :class:`StateUnavailableError` (an
    :class:`~rlmap_bot.errors.UnavailableError`) from every repository, and ``health`` hears of
    each failure and of the first success after one.
    """
    url = str(url_or_path)
    if "://" not in url:
        path = Path(url).expanduser()
        try:
            ensure_folder(path.parent, f"the state store {path}")
        except ConfigError as exc:
            raise StateStoreError(str(exc)) from None
        _check_state_file(path)
        url = f"sqlite:///{path}"
    try:
        engine = sa.create_engine(
            url, future=True, pool_pre_ping=True, connect_args=_connect_args(url)
        )
        if engine.dialect.name == "sqlite":
            sa.event.listen(engine, "connect", _sqlite_pragmas)
        migrate(engine)
    except (sa.exc.SQLAlchemyError, ImportError, ValueError, OSError) as exc:
        reason = (
            getattr(exc, "strerror", None)
            or str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        )
        raise StateStoreError(f"cannot open the state store {safe_url(url)}: {reason}") from None
    _watch(engine, health or StateHealth())
    return engine


def _check_state_file(path: Path) -> None:
    """Write only into a file the bot made: missing, empty,
    or a SQLite database holding no tables or ours.

    Migrations create tables in whatever database they are pointed at, so a mistyped path to another
    program's database would be changed, and a text file would be reported as "not a database" only
    after a lock file had been left beside it.
    """
    if path.is_dir():
        raise StateStoreError(f"{path} is a folder, not a state store file")
    if not path.exists() or path.stat().st_size == 0:
        return
    reason = "it is not a SQLite database"
    if is_sqlite_file(path):
        import sqlite3

        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                tables = {
                    r[0]
                    for r in conn.execute("select name from sqlite_master where type = 'table'")
                }
            finally:
                conn.close()
        except sqlite3.Error as exc:
            tables, reason = {"?"}, f"it cannot be read ({exc})"
        if not tables or tables & {"alembic_version", "schema_migrations"}:
            return
        if "?" not in tables:
            reason = "it is another program's database"
    raise StateStoreError(
        f"{path} is not a state store ({reason}), so it is left as it is; name a new file or an "
        f"existing state store"
    )


def _connect_args(url: str) -> dict[str, Any]:
    """Time-outs for PostgreSQL connections (see the
    constants above), unless the URL sets its own.
    """
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "postgresql":
        return {}
    args: dict[str, Any] = {}
    if "connect_timeout" not in parsed.query:
        args["connect_timeout"] = PG_CONNECT_TIMEOUT_S
    if "tcp_user_timeout" not in parsed.query:
        args["tcp_user_timeout"] = PG_TCP_USER_TIMEOUT_MS
    return args


def _unavailable(engine: sa.Engine, ctx: Any) -> bool:
    """Is this error the database not answering (as
    opposed to a constraint, or a bug in a query)?
    """
    if ctx.is_pre_ping:  # the pool is testing a connection and reconnects by itself
        return False
    error = ctx.sqlalchemy_exception
    if isinstance(error, sa.exc.IntegrityError):
        return False
    if engine.dialect.name == "sqlite":
        # A local file does not go away like a server: "locked" or "busy" is a blip worth retrying,
        # while "file is not a database" or "no such table" is damage or a bug, not an outage.
        text = str(ctx.original_exception).lower()
        return any(word in text for word in ("locked", "busy", "unable to open", "disk i/o"))
    if ctx.is_disconnect or ctx.connection is None and isinstance(error, sa.exc.DBAPIError):
        return True  # lost the connection, or could not open one
    if isinstance(error, sa.exc.InterfaceError):
        return True
    if isinstance(error, sa.exc.OperationalError):
        return True  # PostgreSQL: admin shutdown, cannot connect, cancelled, deadlock: all pass
    return False


def _watch(engine: sa.Engine, health: StateHealth) -> None:
    """Turn "the database is not answering" into
    StateUnavailableError and keep ``health`` informed.
    """

    def on_error(ctx: Any) -> Exception | None:
        if not _unavailable(engine, ctx):
            return None
        health.failed(ctx.original_exception)
        return StateUnavailableError()

    def on_checkout(_dbapi: Any, record: Any, *_args: Any) -> None:
        if health.down_since is not None:  # a connection works again: the outage may be over
            health.ok(connected_at=getattr(record, "starttime", None))

    sa.event.listen(engine, "handle_error", on_error)
    sa.event.listen(engine.pool, "checkout", on_checkout)


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
    """SQLite has no advisory locks: processes (and
    threads) opening one file migrate one at a time.
    """
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:" or not HAVE_FCNTL:
        yield
        return
    with open(f"{database}.migrate-lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _stamp_legacy(conn: sa.Connection, config: Any) -> None:
    """A database from before Alembic records its migrations
    in ``schema_migrations``: carry them over.
    """
    from alembic import command

    inspector = sa.inspect(conn)
    if (
        "schema_migrations" not in inspector.get_table_names()
        or "alembic_version" in inspector.get_table_names()
    ):
        return
    done = conn.exec_driver_sql("select max(version) from schema_migrations").scalar()
    if done:
        command.stamp(config, f"{int(done):04d}")


def insert_ignoring_duplicates(engine: sa.Engine, table: sa.Table) -> Any:
    """INSERT that skips rows already there (ON CONFLICT DO NOTHING on both engines)."""
    if engine.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table).on_conflict_do_nothing()
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table).on_conflict_do_nothing()


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()
