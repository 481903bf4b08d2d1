"""Digest subscriptions: one per channel, the source of truth for every replica's schedule."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from rlmap_bot.state.db import ConflictError, iso
from rlmap_bot.state.models import Subscription
from rlmap_bot.state.tables import subscriptions


class SubscriptionRepository:
    def __init__(self, engine: sa.Engine):
        self.engine = engine

    def save(self, sub: Subscription) -> Subscription:
        """Create or replace the channel's subscription (one per channel)."""
        row = {
            "id": sub.id,
            "team": sub.team,
            "channel": sub.channel,
            "data": sub.model_dump_json(),
            "created_at": iso(sub.created_at),
        }
        for _ in range(2):  # update, else insert; a concurrent insert makes the retry an update
            try:
                with self.engine.begin() as conn:
                    updated = conn.execute(
                        subscriptions.update()
                        .where(
                            subscriptions.c.team == sub.team, subscriptions.c.channel == sub.channel
                        )
                        .values(**row)
                    )
                    if updated.rowcount == 0:
                        conn.execute(subscriptions.insert().values(**row))
                return sub
            except sa.exc.IntegrityError:
                continue
        raise ConflictError(f"subscription for {sub.channel} changed meanwhile")

    def get(self, team: str, channel: str) -> Subscription | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(subscriptions.c.data).where(
                    subscriptions.c.team == team, subscriptions.c.channel == channel
                )
            ).first()
        return Subscription.model_validate_json(row[0]) if row else None

    def by_id(self, sub_id: str) -> Subscription | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(subscriptions.c.data).where(subscriptions.c.id == sub_id)
            ).first()
        return Subscription.model_validate_json(row[0]) if row else None

    def list(self, team: str | None = None) -> list[Subscription]:
        query = sa.select(subscriptions.c.data).order_by(subscriptions.c.created_at)
        if team is not None:
            query = query.where(subscriptions.c.team == team)
        with self.engine.connect() as conn:
            return [Subscription.model_validate_json(r[0]) for r in conn.execute(query)]

    def delete(self, team: str, channel: str) -> bool:
        with self.engine.begin() as conn:
            return (
                conn.execute(
                    subscriptions.delete().where(
                        subscriptions.c.team == team, subscriptions.c.channel == channel
                    )
                ).rowcount
                > 0
            )

    def mark_run(self, sub: Subscription, at: dt.datetime) -> None:
        """Record a run on this very subscription (a re-subscription meanwhile is left alone)."""
        with self.engine.begin() as conn:
            row = conn.execute(
                sa.select(subscriptions.c.data).where(subscriptions.c.id == sub.id)
            ).first()
            if row is None:
                return
            current = Subscription.model_validate_json(row[0]).model_copy(
                update={"last_run_at": at}
            )
            conn.execute(
                subscriptions.update()
                .where(subscriptions.c.id == sub.id)
                .values(data=current.model_dump_json())
            )
