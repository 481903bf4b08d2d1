"""The state store: everything the bot remembers between messages and restarts.

Diagnosis sessions, processed event ids (and, later, subscriptions and the
digest ledger) live here, behind this one module.  It speaks SQLAlchemy Core,
so the same code runs on the default SQLite file and on PostgreSQL; nothing
else in the project knows which engine is behind it.  Schema changes are
numbered migrations recorded in ``schema_migrations``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Callable

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from rlmap_bot.state.models import Session, Subscription

metadata = sa.MetaData()

schema_migrations = sa.Table(
    "schema_migrations", metadata,
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("applied_at", sa.String(40), nullable=False),
)

sessions = sa.Table(
    "sessions", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("thread_ts", sa.String(64)),
    sa.Column("user_id", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Index("ix_sessions_thread", "team", "channel", "thread_ts"),
    sa.Index("ix_sessions_user", "team", "user_id", "status"),
)

processed_events = sa.Table(
    "processed_events", metadata,
    sa.Column("event_id", sa.String(128), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("seen_at", sa.String(40), nullable=False),
)


subscriptions = sa.Table(
    "subscriptions", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("team", "channel", name="uq_subscriptions_channel"),
)

digest_runs = sa.Table(
    "digest_runs", metadata,
    sa.Column("digest_id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("slot", sa.String(80), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # claimed | posted | empty | abandoned
    sa.Column("entries", sa.Text, nullable=False),  # JSON list of [entry_id, version, kind]
    sa.Column("ts", sa.String(64)),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("team", "channel", "slot", name="uq_digest_runs_slot"),
)

digest_ledger = sa.Table(
    "digest_ledger", metadata,
    sa.Column("team", sa.String(64), primary_key=True),
    sa.Column("channel", sa.String(64), primary_key=True),
    sa.Column("entry_id", sa.String(128), primary_key=True),
    sa.Column("version", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),  # new | updated
    sa.Column("digest_id", sa.String(64), nullable=False),
    sa.Column("sent_at", sa.String(40), nullable=False),
)


def _m1(conn: sa.Connection) -> None:
    for table in (sessions, processed_events):
        table.create(conn, checkfirst=True)


def _m2(conn: sa.Connection) -> None:
    for table in (subscriptions, digest_runs, digest_ledger):
        table.create(conn, checkfirst=True)


def _m3(conn: sa.Connection) -> None:
    """At most one digest run in progress per channel: concurrent runs cannot both post."""
    conn.exec_driver_sql(  # a partial unique index: same DDL on SQLite and PostgreSQL
        "CREATE UNIQUE INDEX IF NOT EXISTS uq_digest_runs_open ON digest_runs (team, channel) "
        "WHERE status = 'claimed'"
    )


MIGRATIONS: list[tuple[int, Callable[[sa.Connection], None]]] = [(1, _m1), (2, _m2), (3, _m3)]


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="microseconds")


class StateStoreError(RuntimeError):
    """The state store cannot be opened; the message names it without its password."""


def safe_url(url: str) -> str:
    """The URL as it may appear in logs and errors: no password."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a path or a malformed URL
        return url.split("@")[-1] if "@" in url else url


class ConflictError(RuntimeError):
    """Someone else changed the session first (a double click, another replica)."""


class StateStore:
    """Sessions and processed events, on SQLite by default."""

    def __init__(self, url_or_path: str | Path):
        url = str(url_or_path)
        if "://" not in url:
            try:
                Path(url).expanduser().parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StateStoreError(f"cannot create the state store folder for {url}: {exc.strerror or exc}") from None
            url = f"sqlite:///{Path(url).expanduser()}"
        self.url = url
        try:
            self.engine: Engine = sa.create_engine(url, future=True, pool_pre_ping=True)
            if self.engine.dialect.name == "sqlite":
                sa.event.listen(self.engine, "connect", _sqlite_pragmas)
            self.migrate()
        except (sa.exc.SQLAlchemyError, ImportError, ValueError) as exc:
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            raise StateStoreError(f"cannot open the state store {safe_url(url)}: {reason}") from None

    def migrate(self) -> int:
        """Apply every migration not yet recorded; return the schema version."""
        with self.engine.begin() as conn:
            if self.engine.dialect.name == "postgresql":
                # Replicas start together; one migrates while the others wait for the lock.
                conn.exec_driver_sql("select pg_advisory_xact_lock(7274627)")
            schema_migrations.create(conn, checkfirst=True)
            done = {r[0] for r in conn.execute(sa.select(schema_migrations.c.version))}
            for version, step in MIGRATIONS:
                if version not in done:
                    step(conn)
                    conn.execute(schema_migrations.insert().values(version=version, applied_at=_iso(utcnow())))
        return MIGRATIONS[-1][0]

    def close(self) -> None:
        self.engine.dispose()

    # -- diagnosis sessions -----------------------------------------------------------------
    def create_session(self, session: Session) -> Session:
        with self.engine.begin() as conn:
            conn.execute(sessions.insert().values(**_session_row(session)))
        return session

    def save_session(self, session: Session) -> Session:
        """Write ``session`` if nobody saved a newer version first; bump its version."""
        expected = session.version
        session = session.model_copy(update={"version": expected + 1, "updated_at": utcnow()})
        with self.engine.begin() as conn:
            result = conn.execute(
                sessions.update()
                .where(sessions.c.id == session.id, sessions.c.version == expected)
                .values(**_session_row(session))
            )
        if result.rowcount != 1:
            raise ConflictError(f"session {session.id} changed meanwhile")
        return session

    def get_session(self, session_id: str) -> Session | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(sessions.c.data, sessions.c.version).where(sessions.c.id == session_id)).first()
        return _session_from(row) if row else None

    def find_session(self, team: str, channel: str, thread_ts: str, status: str = "open") -> Session | None:
        """The newest session in a thread with this status."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(sessions.c.data, sessions.c.version)
                .where(sessions.c.team == team, sessions.c.channel == channel,
                       sessions.c.thread_ts == thread_ts, sessions.c.status == status)
                .order_by(sessions.c.started_at.desc())
                .limit(1)
            ).first()
        return _session_from(row) if row else None

    def list_sessions(self, team: str | None = None, user: str | None = None, status: str | None = "open") -> list[Session]:
        query = sa.select(sessions.c.data, sessions.c.version).order_by(sessions.c.updated_at.desc())
        if team is not None:
            query = query.where(sessions.c.team == team)
        if user is not None:
            query = query.where(sessions.c.user_id == user)
        if status is not None:
            query = query.where(sessions.c.status == status)
        with self.engine.connect() as conn:
            return [_session_from(r) for r in conn.execute(query)]

    def expire_sessions(self, older_than: dt.datetime) -> int:
        """Mark open sessions untouched since ``older_than`` as expired; return how many."""
        expired = 0
        for session in self.list_sessions(status="open"):
            if session.updated_at < older_than:
                try:
                    self.save_session(session.model_copy(update={"status": "expired"}))
                    expired += 1
                except ConflictError:
                    continue
        return expired

    # -- processed events -------------------------------------------------------------------
    def claim_event(self, event_id: str, team: str = "") -> bool:
        """True the first time an event id is claimed, False for every repeat (retries)."""
        try:
            with self.engine.begin() as conn:
                conn.execute(processed_events.insert().values(event_id=event_id, team=team, seen_at=_iso(utcnow())))
            return True
        except sa.exc.IntegrityError:
            return False

    # -- digest subscriptions ---------------------------------------------------------------
    def save_subscription(self, sub: Subscription) -> Subscription:
        """Create or replace the channel's subscription (one per channel)."""
        row = {"id": sub.id, "team": sub.team, "channel": sub.channel, "data": sub.model_dump_json(),
               "created_at": _iso(sub.created_at)}
        for _ in range(2):  # update, else insert; a concurrent insert makes the retry an update
            try:
                with self.engine.begin() as conn:
                    updated = conn.execute(subscriptions.update().where(
                        subscriptions.c.team == sub.team, subscriptions.c.channel == sub.channel).values(**row))
                    if updated.rowcount == 0:
                        conn.execute(subscriptions.insert().values(**row))
                return sub
            except sa.exc.IntegrityError:
                continue
        raise ConflictError(f"subscription for {sub.channel} changed meanwhile")

    def get_subscription(self, team: str, channel: str) -> Subscription | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(subscriptions.c.data).where(
                subscriptions.c.team == team, subscriptions.c.channel == channel)).first()
        return Subscription.model_validate_json(row[0]) if row else None

    def list_subscriptions(self, team: str | None = None) -> list[Subscription]:
        query = sa.select(subscriptions.c.data).order_by(subscriptions.c.created_at)
        if team is not None:
            query = query.where(subscriptions.c.team == team)
        with self.engine.connect() as conn:
            return [Subscription.model_validate_json(r[0]) for r in conn.execute(query)]

    def delete_subscription(self, team: str, channel: str) -> bool:
        with self.engine.begin() as conn:
            return conn.execute(subscriptions.delete().where(
                subscriptions.c.team == team, subscriptions.c.channel == channel)).rowcount > 0

    def mark_subscription_run(self, sub: Subscription, at: dt.datetime) -> None:
        """Record a run on this very subscription (a re-subscription meanwhile is left alone)."""
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(subscriptions.c.data).where(subscriptions.c.id == sub.id)).first()
            if row is None:
                return
            current = Subscription.model_validate_json(row[0]).model_copy(update={"last_run_at": at})
            conn.execute(subscriptions.update().where(subscriptions.c.id == sub.id)
                         .values(data=current.model_dump_json()))

    # -- digest runs and the ledger ---------------------------------------------------------
    def claim_digest(self, digest_id: str, team: str, channel: str, slot: str, entries: list[tuple[str, str, str]],
                     status: str = "claimed") -> bool:
        """Claim a digest slot; False when that slot was run already or another run is in progress."""
        try:
            with self.engine.begin() as conn:
                conn.execute(digest_runs.insert().values(
                    digest_id=digest_id, team=team, channel=channel, slot=slot, status=status,
                    entries=json.dumps(entries), created_at=_iso(utcnow())))
            return True
        except sa.exc.IntegrityError:
            return False

    def pending_digests(self, team: str, channel: str) -> list[dict]:
        """Runs claimed but never recorded as posted: a crash may sit between post and record."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(digest_runs).where(
                digest_runs.c.team == team, digest_runs.c.channel == channel,
                digest_runs.c.status == "claimed")).mappings().all()
        return [dict(r) for r in rows]

    def set_digest_entries(self, digest_id: str, entries: list[tuple[str, str, str]]) -> None:
        """What a claimed run is about to post (written before posting, for recovery)."""
        with self.engine.begin() as conn:
            conn.execute(digest_runs.update().where(digest_runs.c.digest_id == digest_id)
                         .values(entries=json.dumps(entries)))

    def record_digest(self, digest_id: str, ts: str | None) -> None:
        """The post exists: write every entry it carried to the ledger, in one transaction."""
        with self.engine.begin() as conn:
            run = conn.execute(sa.select(digest_runs).where(digest_runs.c.digest_id == digest_id)).mappings().first()
            if run is None or run["status"] == "posted":
                return
            now = _iso(utcnow())
            rows = [dict(team=run["team"], channel=run["channel"], entry_id=entry_id, version=version,
                         kind=kind, digest_id=digest_id, sent_at=now)
                    for entry_id, version, kind in json.loads(run["entries"])]
            if rows:
                conn.execute(self._insert_ignoring_duplicates(digest_ledger), rows)
            conn.execute(digest_runs.update().where(digest_runs.c.digest_id == digest_id)
                         .values(status="posted", ts=ts))

    def finish_digest(self, digest_id: str, status: str) -> None:
        """Close a claimed run without a post: 'empty' (nothing new) or 'abandoned' (never posted)."""
        with self.engine.begin() as conn:
            conn.execute(digest_runs.update().where(digest_runs.c.digest_id == digest_id,
                                                    digest_runs.c.status == "claimed").values(status=status))

    def _insert_ignoring_duplicates(self, table: sa.Table):
        """INSERT that skips rows already there (ON CONFLICT DO NOTHING on both engines)."""
        if self.engine.dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        return insert(table).on_conflict_do_nothing()

    def delivered(self, team: str, channel: str) -> set[tuple[str, str]]:
        """(entry_id, version) pairs this channel has received."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(digest_ledger.c.entry_id, digest_ledger.c.version).where(
                digest_ledger.c.team == team, digest_ledger.c.channel == channel))
            return {(r[0], r[1]) for r in rows}

    def forget_team(self, team: str) -> dict[str, int]:
        """Remove everything kept for a workspace (on uninstall); return rows removed per table."""
        removed = {}
        with self.engine.begin() as conn:
            for table in (subscriptions, sessions, digest_ledger, digest_runs, processed_events):
                removed[table.name] = conn.execute(table.delete().where(table.c.team == team)).rowcount
        return removed

    def forget_events(self, older_than: dt.datetime) -> int:
        with self.engine.begin() as conn:
            return conn.execute(processed_events.delete().where(processed_events.c.seen_at < _iso(older_than))).rowcount


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def _session_row(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "team": session.team,
        "channel": session.channel,
        "thread_ts": session.thread_ts,
        "user_id": session.user,
        "status": session.status,
        "version": session.version,
        "data": session.model_dump_json(),
        "started_at": _iso(session.started_at),
        "updated_at": _iso(session.updated_at),
    }


def _session_from(row: Any) -> Session:
    session = Session.model_validate(json.loads(row[0]))
    return session.model_copy(update={"version": row[1]})
