"""The state store: everything the bot remembers between messages and restarts.

One database (see :mod:`rlmap_bot.state.db`), one small repository per aggregate:
``sessions`` (guided diagnoses), ``events`` (claims on the requests Slack sent),
``subscriptions`` and ``digests`` (digest runs and the ledger), ``watches``
(watched runs, check claims and the alert ledger), ``curation`` (suggested papers, approved
additions, the curators' channel, scout slots), ``credentials`` (a workspace's tracker keys,
sealed), ``details`` (what a card leaves out, for its Details button). Nothing else in
the project knows which engine is behind it.
"""

from __future__ import annotations

from pathlib import Path

from rlmap_bot.state.additions import CurationRepository
from rlmap_bot.state.credentials import CredentialRepository
from rlmap_bot.state.db import (
    ConflictError,
    StateStoreError,
    StateUnavailableError,
    iso,
    open_engine,
    safe_url,
    utcnow,
)
from rlmap_bot.state.details import DetailsRepository
from rlmap_bot.state.digests import DigestRepository
from rlmap_bot.state.events import EventRepository
from rlmap_bot.state.health import StateHealth
from rlmap_bot.state.sessions import SessionRepository
from rlmap_bot.state.subscriptions import SubscriptionRepository
from rlmap_bot.state.tables import PER_TEAM
from rlmap_bot.state.watches import WatchRepository


class StateStore:
    """The repositories over one database (SQLite by default)."""

    def __init__(self, url_or_path: str | Path):
        self.health = StateHealth()
        self.engine = open_engine(url_or_path, self.health)
        self.url = str(self.engine.url)
        self.sessions = SessionRepository(self.engine)
        self.events = EventRepository(self.engine)
        self.subscriptions = SubscriptionRepository(self.engine)
        self.digests = DigestRepository(self.engine)
        self.watches = WatchRepository(self.engine)
        self.curation = CurationRepository(self.engine)
        self.credentials = CredentialRepository(self.engine)
        self.details = DetailsRepository(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def ready(self) -> bool:
        """Does the database answer now? (``/readyz``)"""
        return self.health.probe(self.engine)

    def forget_team(self, team: str) -> dict[str, int]:
        """Remove everything kept for a workspace (on uninstall); return rows removed per table."""
        removed = {}
        with self.engine.begin() as conn:
            for table in PER_TEAM:
                removed[table.name] = conn.execute(
                    table.delete().where(table.c.team == team)
                ).rowcount
        return removed


__all__ = [
    "StateStore",
    "StateStoreError",
    "StateUnavailableError",
    "ConflictError",
    "safe_url",
    "utcnow",
    "iso",
]
