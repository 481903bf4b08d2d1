"""Digest runs (a claimed slot per channel) and the ledger of entries each channel received."""

from __future__ import annotations

import json
from typing import Sequence

import sqlalchemy as sa

from rlmap_bot.state.db import insert_ignoring_duplicates, iso, utcnow
from rlmap_bot.state.tables import digest_ledger, digest_runs


class DigestRepository:
    def __init__(self, engine: sa.Engine):
        self.engine = engine

    def claim(self, digest_id: str, team: str, channel: str, slot: str, entries: list[tuple[str, str, str]],
              status: str = "claimed") -> bool:
        """Claim a digest slot; False when that slot was run already or another run is in progress."""
        try:
            with self.engine.begin() as conn:
                conn.execute(digest_runs.insert().values(
                    digest_id=digest_id, team=team, channel=channel, slot=slot, status=status,
                    entries=json.dumps(entries), created_at=iso(utcnow())))
            return True
        except sa.exc.IntegrityError:
            return False

    def pending(self, team: str, channel: str) -> list[dict]:
        """Runs claimed but never recorded as posted: a crash may sit between post and record."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(digest_runs).where(
                digest_runs.c.team == team, digest_runs.c.channel == channel,
                digest_runs.c.status == "claimed")).mappings().all()
        return [dict(r) for r in rows]

    def set_entries(self, digest_id: str, entries: Sequence[tuple[str, str, str]]) -> None:
        """What a claimed run is about to post (written before posting, for recovery)."""
        with self.engine.begin() as conn:
            conn.execute(digest_runs.update().where(digest_runs.c.digest_id == digest_id)
                         .values(entries=json.dumps(entries)))

    def record(self, digest_id: str, ts: str | None) -> None:
        """The post exists: write every entry it carried to the ledger, in one transaction."""
        with self.engine.begin() as conn:
            run = conn.execute(sa.select(digest_runs).where(digest_runs.c.digest_id == digest_id)).mappings().first()
            if run is None or run["status"] == "posted":
                return
            now = iso(utcnow())
            rows = [dict(team=run["team"], channel=run["channel"], entry_id=entry_id, version=version,
                         kind=kind, digest_id=digest_id, sent_at=now)
                    for entry_id, version, kind in json.loads(run["entries"])]
            if rows:
                conn.execute(insert_ignoring_duplicates(self.engine, digest_ledger), rows)
            conn.execute(digest_runs.update().where(digest_runs.c.digest_id == digest_id)
                         .values(status="posted", ts=ts))

    def finish(self, digest_id: str, status: str) -> None:
        """Close a claimed run without a post: 'empty' (nothing new) or 'abandoned' (never posted)."""
        with self.engine.begin() as conn:
            conn.execute(digest_runs.update().where(digest_runs.c.digest_id == digest_id,
                                                    digest_runs.c.status == "claimed").values(status=status))

    def delivered(self, team: str, channel: str) -> set[tuple[str, str]]:
        """(entry_id, version) pairs this channel has received."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(digest_ledger.c.entry_id, digest_ledger.c.version).where(
                digest_ledger.c.team == team, digest_ledger.c.channel == channel))
            return {(r[0], r[1]) for r in rows}
