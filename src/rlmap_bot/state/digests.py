"""Digest runs (a claimed slot per channel) and the ledger of entries each channel received.

A run is claimed with the state store's one lease primitive (:mod:`rlmap_bot.state.leases`):
a unique row per channel and slot, at most one claimed per channel, held by its replica
until its lease runs out. A claimed run is settled later by whoever finds it: recorded if
its post exists, given up once its lease has run out if not.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Sequence

import sqlalchemy as sa

from rlmap_bot.state.db import insert_ignoring_duplicates, iso, utcnow
from rlmap_bot.state.leases import OWNER, Leases
from rlmap_bot.state.tables import digest_ledger, digest_runs

# How long a claimed run owns its slot: a run still unposted by then is given up when its post
# cannot be found (it may still be posting before that: Slack can take a while to answer).
# Judgement: a digest is one post, so two minutes covers slow answers and 429 waits.
LEASE = dt.timedelta(minutes=2)


class DigestRepository:
    def __init__(self, engine: sa.Engine):
        self.engine = engine
        self.leases = Leases(engine, digest_runs, held="claimed")

    def claim(
        self,
        digest_id: str,
        team: str,
        channel: str,
        slot: str,
        entries: list[tuple[str, str, str]],
        lease: dt.timedelta = LEASE,
        owner: str = OWNER,
    ) -> bool:
        """Claim a digest slot; False when that slot was
        run already or another run is in progress.
        """
        now = utcnow()
        row = dict(
            digest_id=digest_id,
            team=team,
            channel=channel,
            slot=slot,
            entries=json.dumps(entries),
            created_at=iso(now),
        )
        return self.leases.claim(row, owner, lease, now)

    def pending(self, team: str, channel: str) -> list[dict]:
        """Runs claimed but never recorded as posted: a crash may sit between post and record."""
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    sa.select(digest_runs).where(
                        digest_runs.c.team == team,
                        digest_runs.c.channel == channel,
                        digest_runs.c.status == "claimed",
                    )
                )
                .mappings()
                .all()
            )
        return [dict(r) for r in rows]

    def set_entries(self, digest_id: str, entries: Sequence[tuple[str, str, str]]) -> None:
        """What a claimed run is about to post (written before posting, for recovery)."""
        with self.engine.begin() as conn:
            conn.execute(
                digest_runs.update()
                .where(digest_runs.c.digest_id == digest_id)
                .values(entries=json.dumps(entries))
            )

    def record(self, digest_id: str, ts: str | None) -> None:
        """The post exists: write every entry it carried to the ledger, in one transaction."""
        with self.engine.begin() as conn:
            run = (
                conn.execute(sa.select(digest_runs).where(digest_runs.c.digest_id == digest_id))
                .mappings()
                .first()
            )
            if run is None or run["status"] == "posted":
                return
            now = iso(utcnow())
            rows = [
                dict(
                    team=run["team"],
                    channel=run["channel"],
                    entry_id=entry_id,
                    version=version,
                    kind=kind,
                    digest_id=digest_id,
                    sent_at=now,
                )
                for entry_id, version, kind in json.loads(run["entries"])
            ]
            if rows:
                conn.execute(insert_ignoring_duplicates(self.engine, digest_ledger), rows)
            conn.execute(
                digest_runs.update()
                .where(digest_runs.c.digest_id == digest_id)
                .values(status="posted", ts=ts)
            )

    def finish(self, digest_id: str, status: str) -> None:
        """Close a claimed run without a post: 'empty'
        (nothing new) or 'abandoned' (never posted).
        """
        self.leases.release(digest_runs.c.digest_id == digest_id, status)

    def give_up(self, digest_id: str, now: dt.datetime | None = None) -> bool:
        """Abandon a claimed run whose lease has run out (its post was looked for and not found)."""
        where = digest_runs.c.digest_id == digest_id
        return self.leases.release(where, "abandoned", expired_by=now or utcnow()) == 1

    def delivered(self, team: str, channel: str) -> set[tuple[str, str]]:
        """(entry_id, version) pairs this channel has received."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(digest_ledger.c.entry_id, digest_ledger.c.version).where(
                    digest_ledger.c.team == team, digest_ledger.c.channel == channel
                )
            )
            return {(r[0], r[1]) for r in rows}
