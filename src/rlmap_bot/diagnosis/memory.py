"""Diagnosis sessions kept in memory, for simulations and one-off runs that need no state store.

It offers the part of :class:`~rlmap_bot.state.store.StateStore` the guided flow
uses (a ``sessions`` repository), with the same optimistic versioning, so the flow
runs unchanged on it.
"""

from __future__ import annotations

import datetime as dt

from rlmap_bot.results.diagnosis import Session
from rlmap_bot.state.models import ConflictError, utcnow


class MemorySessionRepository:
    """Sessions in a dict; nothing outlives the object."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}

    def create(self, session: Session) -> Session:
        self._sessions[session.id] = session
        return session

    def save(self, session: Session) -> Session:
        stored = self._sessions.get(session.id)
        if stored is not None and stored.version != session.version:
            raise ConflictError(f"session {session.id} changed meanwhile")
        saved = session.model_copy(update={"version": session.version + 1, "updated_at": utcnow()})
        self._sessions[session.id] = saved
        return saved

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def delete(self, session_id: str) -> bool:
        return self._sessions.pop(session_id, None) is not None

    def list(
        self, team: str | None = None, user: str | None = None, status: str | None = "open"
    ) -> list[Session]:
        found = [
            s
            for s in self._sessions.values()
            if (team is None or s.team == team)
            and (user is None or s.user == user)
            and (status is None or s.status == status)
        ]
        return sorted(found, key=lambda s: s.updated_at, reverse=True)

    def expire(self, older_than: dt.datetime) -> int:
        expired = 0
        for session in self.list(status="open"):
            if session.updated_at < older_than:
                self.save(session.model_copy(update={"status": "expired"}))
                expired += 1
        return expired


class MemoryState:
    """A stand-in for the state store with only what the guided flow needs."""

    def __init__(self) -> None:
        self.sessions = MemorySessionRepository()
