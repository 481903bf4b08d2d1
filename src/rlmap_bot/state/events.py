"""Claims on the requests Slack sends (events, clicks,
slash commands): at-least-once, answered once.

A request is claimed before any work, with its payload (sealed by the caller:
this module refuses a body without the seal's marker, so no request text is ever
written in clear) and a lease: the replica
that claims it owns it until the lease runs out, and keeps renewing the lease
while it works. When the reply is posted the claim is marked done (and its
payload dropped). A claim still unfinished when its lease has run out belongs to
a replica that died (or lost the database): Slack's retry of it, or the sweeper
of any replica, takes it over with a conditional update, so exactly one of them
does. The replies a claim posted are recorded on it, by its owner only, so a
takeover skips what was already posted.

The claim, the lease, its renewal and the takeover are the state store's one lease
primitive (:mod:`rlmap_bot.state.leases`); this module adds what a request needs on
top: its payload, the replies it posted, and when it was claimed and finished.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any, Literal

import sqlalchemy as sa

from rlmap_bot.crypto import marked
from rlmap_bot.state.db import iso, utcnow
from rlmap_bot.state.leases import GaveUp, Leases
from rlmap_bot.state.tables import event_claims

Outcome = Literal["new", "takeover", "done", "busy", "gave_up"]


@dataclass
class Claim:
    """One claimed request as its owner sees it (``body``: the request, sealed as stored)."""

    key: str
    kind: str
    team: str
    owner: str
    attempts: int
    body: str | None
    claimed_at: str
    replies: dict[str, dict] = field(default_factory=dict)

    @property
    def taken_over(self) -> bool:
        return self.attempts > 1


class EventRepository:
    def __init__(self, engine: sa.Engine):
        self.engine = engine
        self.leases = Leases(engine, event_claims, held="working")

    # -- claiming ---------------------------------------------------------------------------------
    def claim(
        self,
        key: str,
        kind: str,
        team: str,
        body: str | None,
        owner: str,
        lease: dt.timedelta,
        max_attempts: int = 3,
    ) -> tuple[Outcome, Claim | None]:
        """Claim a request for ``owner``; ``body`` is the request sealed (``crypto.SEALED``), or
        None to keep none (then nothing can answer it if the owner dies).

        ``new``: first sight, the caller works on it. ``takeover``: it was claimed before but
        its lease ran out unfinished, and the caller now owns it. ``done``: answered (or given
        up) already. ``busy``: another replica holds a live lease on it (it will finish it, or
        the sweeper will when its lease runs out). ``gave_up``: it was taken over ``max_attempts``
        times already and is now marked failed.
        """
        if body is not None and not marked(body):
            raise ValueError("a claim keeps the request sealed, never in clear")
        now = utcnow()
        claimed_at = iso(now)
        row = dict(
            key=key,
            kind=kind,
            team=team,
            body=body,
            replies="{}",
            claimed_at=claimed_at,
        )
        if self.leases.claim(row, owner, lease, now):
            return "new", Claim(key, kind, team, owner, 1, body, claimed_at)
        try:
            claim = self.take_over(key, owner, lease, now=now, max_attempts=max_attempts)
        except GaveUp:
            return "gave_up", None
        if claim is not None:
            return "takeover", claim
        with self.engine.connect() as conn:
            status = conn.execute(
                sa.select(event_claims.c.status).where(event_claims.c.key == key)
            ).scalar()
        return ("busy" if status == "working" else "done"), None

    def take_over(
        self,
        key: str,
        owner: str,
        lease: dt.timedelta,
        now: dt.datetime | None = None,
        max_attempts: int = 3,
    ) -> Claim | None:
        """Own an unfinished claim whose lease has run out; None if not (or someone was first).

        A claim tried ``max_attempts`` times already is what kills replicas (or always fails): it is
        marked failed, its payload dropped, and :class:`GaveUp` raised, not passed around.
        """
        now = now or utcnow()
        row = self.leases.take_over(
            event_claims.c.key == key,
            key,
            owner,
            lease,
            now,
            max_attempts,
            on_give_up=dict(body=None, finished_at=iso(now)),
        )
        if row is None:
            return None
        return Claim(
            key,
            row["kind"],
            row["team"],
            owner,
            row["attempts"],
            row["body"] or None,
            row["claimed_at"],
            json.loads(row["replies"] or "{}"),
        )

    def expired(self, now: dt.datetime | None = None, limit: int = 20) -> list[str]:
        """Keys of unfinished claims whose lease has run out, oldest first."""
        return [r[0] for r in self.leases.expired([event_claims.c.key], now, limit)]

    # -- while working ----------------------------------------------------------------------------
    def renew(self, keys: list[str], owner: str, lease: dt.timedelta) -> int:
        """Extend the leases ``owner`` holds on ``keys``; returns how many it still holds."""
        if not keys:
            return 0
        return self.leases.renew(event_claims.c.key.in_(keys), owner, lease)

    def owner_of(self, key: str) -> str | None:
        return self.leases.holder(event_claims.c.key == key)

    def record_replies(self, key: str, owner: str, replies: dict[str, dict]) -> bool:
        """Write what the claim has posted so far; False if ``owner`` no longer owns it."""
        c = event_claims.c
        with self.engine.begin() as conn:
            return (
                conn.execute(
                    event_claims.update()
                    .where(c.key == key, c.owner == owner)
                    .values(replies=json.dumps(replies))
                ).rowcount
                == 1
            )

    def finish(self, key: str, owner: str, status: str = "done") -> bool:
        """Mark the claim done (or failed) and drop its
        payload; False if ``owner`` no longer owns it.
        """
        return (
            self.leases.release(
                event_claims.c.key == key, status, owner=owner, body=None, finished_at=iso(utcnow())
            )
            == 1
        )

    # -- watching and housekeeping
    #  ------------------------------------------------------------------
    def unfinished(self, now: dt.datetime | None = None) -> tuple[int, float]:
        """(claims unfinished, age in seconds of the oldest), for the metrics."""
        c = event_claims.c
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(sa.func.count(), sa.func.min(c.claimed_at)).where(c.status == "working")
            ).one()
        count, oldest = int(row[0] or 0), str(row[1] or "")
        if not oldest:
            return 0, 0.0
        age = ((now or utcnow()) - dt.datetime.fromisoformat(oldest)).total_seconds()
        return count, max(age, 0.0)

    def get(self, key: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = (
                conn.execute(sa.select(event_claims).where(event_claims.c.key == key))
                .mappings()
                .first()
            )
        return dict(row) if row else None

    def forget(self, older_than: dt.datetime) -> int:
        """Drop finished claims older than Slack ever retries (the caller says how old)."""
        c = event_claims.c
        with self.engine.begin() as conn:
            return conn.execute(
                event_claims.delete().where(c.status != "working", c.claimed_at < iso(older_than))
            ).rowcount


__all__ = ["Claim", "EventRepository", "GaveUp", "Outcome"]
