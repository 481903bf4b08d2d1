"""What a card leaves out, kept for its Details button.

A verdict or alert card shows three lines and a few readings; the rest of its result
(every reading with its provenance, the stages' points, what the logs could not give) is kept here
as the result's JSON under an id the card's Details button carries, and read back when the button
is clicked, on any replica. Keyed by workspace, so one workspace never reads another's; forgotten
after :data:`DETAILS_KEPT` by the housekeeping.
"""

from __future__ import annotations

import datetime as dt
import uuid

import sqlalchemy as sa

from rlmap_bot.state.db import iso, utcnow
from rlmap_bot.state.tables import card_details as table

#: How long a card's details are kept. A judgement: a card is read the day it is posted and now
#: and then in the weeks after; a month keeps every Details button of a run's life working while
#: the table stays small (a few kilobytes a card).
DETAILS_KEPT = dt.timedelta(days=30)


class DetailsRepository:
    def __init__(self, engine: sa.Engine):
        self.engine = engine

    def keep(self, team: str, kind: str, body: str) -> str:
        """Keep a result's JSON; returns the id its Details button carries."""
        details_id = uuid.uuid4().hex
        with self.engine.begin() as conn:
            conn.execute(
                table.insert().values(
                    id=details_id, team=team, kind=kind, body=body, created_at=iso(utcnow())
                )
            )
        return details_id

    def get(self, team: str, details_id: str) -> tuple[str, str] | None:
        """(kind, body) kept under this id for this workspace; None when gone or another's."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(table.c.kind, table.c.body).where(
                    table.c.id == details_id, table.c.team == team
                )
            ).first()
        return (row[0], row[1]) if row else None

    def forget(self, before: dt.datetime) -> int:
        """Drop details kept before ``before``; returns how many."""
        with self.engine.begin() as conn:
            return conn.execute(table.delete().where(table.c.created_at < iso(before))).rowcount
