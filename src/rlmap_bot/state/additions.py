"""Curation state: suggestions and their decisions,
approved additions, the curators' channel, scout slots.

Decisions are compare-and-set on the suggestion's status, so two curators clicking at once
(or one click handled by two replicas) decide once. A retry of a kept suggestion and a
weekly scan are claimed with the state store's lease primitive (:mod:`rlmap_bot.state.leases`).
Additions carry a fingerprint (how many,
and the latest change) that every replica polls to know when to rebuild its knowledge store.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

import sqlalchemy as sa

from rlmap_bot.state.db import iso, utcnow
from rlmap_bot.state.leases import OWNER, Leases
from rlmap_bot.state.tables import additions, curator_channels, scout_runs, suggestions

OPEN = ("waiting", "pending")
# A scan's claim, for the record: a slot is run once and never taken over, so nothing waits on it.
# Judgement: an hour is longer than any scan (one arXiv search and a few card posts).
SCAN_LEASE = dt.timedelta(hours=1)


@dataclass
class Suggestion:
    id: str
    team: str
    arxiv_id: str
    status: str
    source: str
    user: str
    channel: str
    data: str | None
    attempts: int
    next_try_at: str | None
    card_channel: str | None
    card_ts: str | None
    decided_by: str | None
    reason: str | None
    created_at: str
    updated_at: str


@dataclass
class Addition:
    entry_id: str
    arxiv_id: str
    suggestion_id: str
    status: str
    data: str
    suggested_by: str
    approved_by: str
    created_at: str
    updated_at: str


def _suggestion(row: sa.RowMapping) -> Suggestion:
    return Suggestion(
        id=row["id"],
        team=row["team"],
        arxiv_id=row["arxiv_id"],
        status=row["status"],
        source=row["source"],
        user=row["user_id"],
        channel=row["channel"],
        data=row["data"],
        attempts=row["attempts"],
        next_try_at=row["next_try_at"],
        card_channel=row["card_channel"],
        card_ts=row["card_ts"],
        decided_by=row["decided_by"],
        reason=row["reason"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class CurationRepository:
    def __init__(self, engine: sa.Engine):
        self.engine = engine
        self.retries = Leases(engine, suggestions, held="waiting", until="next_try_at")
        self.scans = Leases(engine, scout_runs, held="claimed")

    # -- suggestions ------------------------------------------------------------------------------
    def suggest(
        self,
        team: str,
        arxiv_id: str,
        user: str,
        channel: str,
        status: str,
        data: str | None = None,
        source: str = "person",
        next_try_at: dt.datetime | None = None,
    ) -> Suggestion:
        now = iso(utcnow())
        row = dict(
            id=uuid.uuid4().hex,
            team=team,
            arxiv_id=arxiv_id,
            status=status,
            source=source,
            user_id=user,
            channel=channel,
            data=data,
            attempts=0,
            next_try_at=iso(next_try_at) if next_try_at else None,
            card_channel=None,
            card_ts=None,
            decided_by=None,
            reason=None,
            created_at=now,
            updated_at=now,
        )
        with self.engine.begin() as conn:
            conn.execute(suggestions.insert().values(**row))
        return _suggestion(row)  # type: ignore[arg-type]

    def get(self, suggestion_id: str) -> Suggestion | None:
        with self.engine.connect() as conn:
            row = (
                conn.execute(sa.select(suggestions).where(suggestions.c.id == suggestion_id))
                .mappings()
                .first()
            )
        return _suggestion(row) if row else None

    def latest(
        self, arxiv_id: str, statuses: tuple[str, ...] = (*OPEN, "approved", "rejected")
    ) -> Suggestion | None:
        """The newest suggestion of this paper in one of ``statuses`` (a rejection, an open one)."""
        with self.engine.connect() as conn:
            row = (
                conn.execute(
                    sa.select(suggestions)
                    .where(suggestions.c.arxiv_id == arxiv_id, suggestions.c.status.in_(statuses))
                    .order_by(suggestions.c.created_at.desc())
                    .limit(1)
                )
                .mappings()
                .first()
            )
        return _suggestion(row) if row else None

    def known(self) -> set[str]:
        """arXiv ids suggested and not dropped: open,
        approved or rejected (the scout skips them).
        """
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(suggestions.c.arxiv_id)
                .where(suggestions.c.status != "dropped")
                .distinct()
            )
            return {r[0] for r in rows}

    def due(self, now: dt.datetime, limit: int = 20) -> list[Suggestion]:
        """Suggestions waiting for arXiv whose next try is due."""
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    sa.select(suggestions)
                    .where(suggestions.c.status == "waiting", suggestions.c.next_try_at <= iso(now))
                    .order_by(suggestions.c.next_try_at)
                    .limit(limit)
                )
                .mappings()
                .all()
            )
        return [_suggestion(r) for r in rows]

    def take(
        self,
        suggestion_id: str,
        lease: dt.timedelta,
        now: dt.datetime | None = None,
        owner: str = OWNER,
    ) -> bool:
        """Claim a due retry for ``owner``: its next try moves a ``lease`` on, unless taken first.

        ``next_try_at`` is the lease (:mod:`rlmap_bot.state.leases`): a waiting suggestion whose
        next try is due is one whose lease has run out, so the replica trying arXiv owns the try
        until then.
        """
        now = now or utcnow()
        where = suggestions.c.id == suggestion_id
        taken = self.retries.take_over(where, suggestion_id, owner, lease, now)
        if taken is not None:
            self._touch(suggestion_id)
        return taken is not None

    def _touch(self, suggestion_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                suggestions.update()
                .where(suggestions.c.id == suggestion_id)
                .values(updated_at=iso(utcnow()))
            )

    def retry_at(self, suggestion_id: str, when: dt.datetime) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                suggestions.update()
                .where(suggestions.c.id == suggestion_id)
                .values(next_try_at=iso(when), updated_at=iso(utcnow()))
            )

    def resolve(
        self, suggestion_id: str, status: str, data: str | None = None, reason: str | None = None
    ) -> bool:
        """A waiting suggestion that arXiv answered:
        pending (to the curators) or dropped (with why).
        """
        with self.engine.begin() as conn:
            done = conn.execute(
                suggestions.update()
                .where(suggestions.c.id == suggestion_id, suggestions.c.status == "waiting")
                .values(
                    status=status,
                    data=data,
                    reason=reason,
                    next_try_at=None,
                    updated_at=iso(utcnow()),
                )
            )
            return done.rowcount == 1

    def drop(self, suggestion_id: str, reason: str) -> None:
        """A suggestion that never reached the curators (its
        card could not be posted): forgotten, with why.
        """
        with self.engine.begin() as conn:
            conn.execute(
                suggestions.update()
                .where(suggestions.c.id == suggestion_id)
                .values(status="dropped", reason=reason, next_try_at=None, updated_at=iso(utcnow()))
            )

    def set_card(self, suggestion_id: str, channel: str, ts: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                suggestions.update()
                .where(suggestions.c.id == suggestion_id)
                .values(card_channel=channel, card_ts=ts, updated_at=iso(utcnow()))
            )

    def decide(self, suggestion_id: str, status: str, by: str, reason: str | None = None) -> bool:
        """pending -> approved or rejected, once: False when someone decided first."""
        with self.engine.begin() as conn:
            done = conn.execute(
                suggestions.update()
                .where(suggestions.c.id == suggestion_id, suggestions.c.status == "pending")
                .values(status=status, decided_by=by, reason=reason, updated_at=iso(utcnow()))
            )
            return done.rowcount == 1

    def undecide(self, suggestion_id: str) -> None:
        """Back to pending (an approval whose entry could not be made)."""
        with self.engine.begin() as conn:
            conn.execute(
                suggestions.update()
                .where(suggestions.c.id == suggestion_id)
                .values(status="pending", decided_by=None, updated_at=iso(utcnow()))
            )

    # -- additions --------------------------------------------------------------------------------
    def add(
        self,
        entry_id: str,
        arxiv_id: str,
        suggestion_id: str,
        data: str,
        suggested_by: str,
        approved_by: str,
    ) -> None:
        now = iso(utcnow())
        with self.engine.begin() as conn:
            conn.execute(
                additions.insert().values(
                    entry_id=entry_id,
                    arxiv_id=arxiv_id,
                    suggestion_id=suggestion_id,
                    status="live",
                    data=data,
                    suggested_by=suggested_by,
                    approved_by=approved_by,
                    created_at=now,
                    updated_at=now,
                )
            )

    def additions(self, status: str | None = "live") -> list[Addition]:
        query = sa.select(additions).order_by(additions.c.created_at)
        if status is not None:
            query = query.where(additions.c.status == status)
        with self.engine.connect() as conn:
            return [Addition(**dict(r)) for r in conn.execute(query).mappings().all()]

    def addition(self, entry_id: str) -> Addition | None:
        with self.engine.connect() as conn:
            row = (
                conn.execute(sa.select(additions).where(additions.c.entry_id == entry_id))
                .mappings()
                .first()
            )
        return Addition(**dict(row)) if row else None

    def set_status(self, entry_ids: list[str], status: str, only_from: str = "live") -> int:
        """live -> retired (a knowledge file has the id now) or removed (a curator took it out)."""
        if not entry_ids:
            return 0
        with self.engine.begin() as conn:
            return conn.execute(
                additions.update()
                .where(additions.c.entry_id.in_(entry_ids), additions.c.status == only_from)
                .values(status=status, updated_at=iso(utcnow()))
            ).rowcount

    def fingerprint(self) -> str:
        """Changes whenever an addition is made, retired or removed: what replicas poll."""
        with self.engine.connect() as conn:
            count, latest = conn.execute(
                sa.select(sa.func.count(), sa.func.max(additions.c.updated_at))
            ).one()
        return f"{count}:{latest or ''}" if count else ""

    # -- the curators' channel --------------------------------------------------------------------
    def set_channel(self, team: str, channel: str, by: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(curator_channels.delete().where(curator_channels.c.team == team))
            conn.execute(
                curator_channels.insert().values(
                    team=team, channel=channel, set_by=by, set_at=iso(utcnow())
                )
            )

    def channel(self, team: str) -> str | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(curator_channels.c.channel).where(curator_channels.c.team == team)
            ).first()
        return row[0] if row else None

    def channels(self) -> list[tuple[str, str]]:
        """(team, channel) of every workspace that chose a curators' channel."""
        with self.engine.connect() as conn:
            return [
                (r[0], r[1])
                for r in conn.execute(
                    sa.select(curator_channels.c.team, curator_channels.c.channel)
                )
            ]

    # -- scout slots ------------------------------------------------------------------------------
    def claim_scan(self, slot: str, owner: str = OWNER) -> bool:
        """Claim a weekly scan's slot once across replicas (a slot runs once: never taken over)."""
        now = utcnow()
        row = dict(slot=slot, posted=0, created_at=iso(now))
        return self.scans.claim(row, owner, SCAN_LEASE, now)

    def finish_scan(self, slot: str, status: str, posted: int) -> None:
        self.scans.release(scout_runs.c.slot == slot, status, posted=posted)
