"""Diagnosis sessions: one row per session, saved with optimistic versions."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import sqlalchemy as sa

from rlmap_bot.results.diagnosis import Session
from rlmap_bot.state.db import ConflictError, iso, utcnow
from rlmap_bot.state.tables import sessions


class SessionRepository:
    def __init__(self, engine: sa.Engine):
        self.engine = engine

    def create(self, session: Session) -> Session:
        with self.engine.begin() as conn:
            conn.execute(sessions.insert().values(**_row(session)))
        return session

    def save(self, session: Session) -> Session:
        """Write ``session`` if nobody saved a newer version first; bump its version."""
        expected = session.version
        session = session.model_copy(update={"version": expected + 1, "updated_at": utcnow()})
        with self.engine.begin() as conn:
            result = conn.execute(
                sessions.update()
                .where(sessions.c.id == session.id, sessions.c.version == expected)
                .values(**_row(session))
            )
        if result.rowcount != 1:
            raise ConflictError(f"session {session.id} changed meanwhile")
        return session

    def delete(self, session_id: str) -> bool:
        with self.engine.begin() as conn:
            return conn.execute(sessions.delete().where(sessions.c.id == session_id)).rowcount > 0

    def get(self, session_id: str) -> Session | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(sessions.c.data, sessions.c.version).where(sessions.c.id == session_id)
            ).first()
        return _from(row) if row else None

    def find(self, team: str, channel: str, thread_ts: str, status: str = "open") -> Session | None:
        """The newest session in a thread with this status."""
        return self.newest(team, channel, thread_ts, (status,)).get(status)

    def newest(
        self, team: str, channel: str, thread_ts: str, statuses: tuple[str, ...]
    ) -> dict[str, Session]:
        """The newest session in a thread for each of ``statuses`` that has one, in one query."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(sessions.c.status, sessions.c.data, sessions.c.version)
                .where(
                    sessions.c.team == team,
                    sessions.c.channel == channel,
                    sessions.c.thread_ts == thread_ts,
                    sessions.c.status.in_(statuses),
                )
                .order_by(sessions.c.started_at.desc())
            ).all()
        found: dict[str, Session] = {}
        for row in rows:
            if row[0] not in found:
                found[row[0]] = _from(row[1:])
        return found

    def list(
        self, team: str | None = None, user: str | None = None, status: str | None = "open"
    ) -> list[Session]:
        query = sa.select(sessions.c.data, sessions.c.version).order_by(
            sessions.c.updated_at.desc()
        )
        if team is not None:
            query = query.where(sessions.c.team == team)
        if user is not None:
            query = query.where(sessions.c.user_id == user)
        if status is not None:
            query = query.where(sessions.c.status == status)
        with self.engine.connect() as conn:
            return [_from(r) for r in conn.execute(query)]

    def expire(self, older_than: dt.datetime) -> int:
        """Mark open sessions untouched since ``older_than`` as expired; return how many."""
        expired = 0
        for session in self.list(status="open"):
            if session.updated_at < older_than:
                try:
                    self.save(session.model_copy(update={"status": "expired"}))
                    expired += 1
                except ConflictError:
                    continue
        return expired


def _row(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "team": session.team,
        "channel": session.channel,
        "thread_ts": session.thread_ts,
        "user_id": session.user,
        "status": session.status,
        "version": session.version,
        "data": session.model_dump_json(),
        "started_at": iso(session.started_at),
        "updated_at": iso(session.updated_at),
    }


def _from(row: Any) -> Session:
    session = Session.model_validate(json.loads(row[0]))
    return session.model_copy(update={"version": row[1]})
