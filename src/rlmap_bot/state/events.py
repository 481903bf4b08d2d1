"""Slack event ids already handled, so retries and other replicas answer each event once."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from rlmap_bot.state.db import iso, utcnow
from rlmap_bot.state.tables import processed_events


class EventRepository:
    def __init__(self, engine: sa.Engine):
        self.engine = engine

    def claim(self, event_id: str, team: str = "") -> bool:
        """True the first time an event id is claimed, False for every repeat (retries)."""
        try:
            with self.engine.begin() as conn:
                conn.execute(processed_events.insert().values(event_id=event_id, team=team, seen_at=iso(utcnow())))
            return True
        except sa.exc.IntegrityError:
            return False

    def forget(self, older_than: dt.datetime) -> int:
        with self.engine.begin() as conn:
            return conn.execute(processed_events.delete().where(processed_events.c.seen_at < iso(older_than))).rowcount
