"""Running a digest exactly once per channel and slot, whatever crashes in between.

The order is: recover any earlier run left half-done; claim the slot (a unique
row, so a repeated trigger or a second replica gets nothing); post with the
digest id in the message metadata; write the ledger.  A crash between posting
and writing the ledger leaves a claimed run; recovery finds its post by the
metadata in the channel history and records it instead of posting again.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Protocol

from pydantic import BaseModel

from rlmap_bot.core import Core
from rlmap_bot.digest.content import Digest, build_digest, select_items
from rlmap_bot.state.models import Subscription

METADATA_EVENT = "rlmap_digest"


class Poster(Protocol):
    """What a front-end provides to deliver digests (Slack implements it)."""

    def post_digest(self, channel: str, digest: Digest, digest_id: str) -> str: ...

    def post_note(self, channel: str, text: str) -> None: ...

    def find_digest(self, channel: str, digest_id: str, since: dt.datetime) -> str | None: ...


class RunResult(BaseModel):
    status: str  # posted | empty | noted | duplicate
    digest_id: str | None = None
    ts: str | None = None
    entries: int = 0
    recovered: int = 0


class DigestService:
    def __init__(self, core: Core, max_items: int = 30):
        self.core = core
        self.max_items = max_items

    def preview(self, sub: Subscription, today: dt.date | None = None) -> Digest:
        """Exactly what the next digest for ``sub`` would say (``more`` counts what waits behind it)."""
        state = self.core.state
        items = select_items(self.core.store, state.delivered(sub.team, sub.channel), sub.filters,
                             appeared_after=sub.created_at)
        today = today or dt.datetime.now(dt.timezone.utc).date()
        digest = build_digest(items, today, sub.filters)
        shown = digest.items[: self.max_items]
        if len(shown) < len(items):
            digest = build_digest(shown, today, sub.filters).model_copy(update={"more": len(items) - len(shown)})
        return digest

    def recover(self, sub: Subscription, poster: Poster) -> int:
        """Settle runs claimed but not recorded: recorded if their post exists, else freed."""
        settled = 0
        for run in self.core.state.pending_digests(sub.team, sub.channel):
            since = dt.datetime.fromisoformat(run["created_at"]) - dt.timedelta(minutes=5)
            ts = poster.find_digest(sub.channel, run["digest_id"], since)
            if ts:
                self.core.state.record_digest(run["digest_id"], ts)
            else:
                self.core.state.abandon_digest(run["digest_id"])
            settled += 1
        return settled

    def run(self, sub: Subscription, slot: str, poster: Poster, now: dt.datetime | None = None) -> RunResult:
        now = now or dt.datetime.now(dt.timezone.utc)
        state = self.core.state
        recovered = self.recover(sub, poster)
        digest = self.preview(sub, now.date())
        digest_id = uuid.uuid4().hex
        entries = [(i.id, i.version, i.status) for i in digest.items]
        status = "claimed" if entries else "empty"
        if not state.claim_digest(digest_id, sub.team, sub.channel, slot, entries, status=status):
            return RunResult(status="duplicate", recovered=recovered)
        state.mark_subscription_run(sub, now)
        if not entries:
            if sub.on_empty == "note":
                poster.post_note(sub.channel, f"Nothing new in the RL Scaling Bottleneck Map since the last digest ({digest.period()}).")
                return RunResult(status="noted", recovered=recovered)
            return RunResult(status="empty", recovered=recovered)
        ts = poster.post_digest(sub.channel, digest, digest_id)
        state.record_digest(digest_id, ts)
        return RunResult(status="posted", digest_id=digest_id, ts=ts, entries=len(entries), recovered=recovered)

