"""Running a digest exactly once per channel and slot, whatever crashes in between.

The order is: settle any earlier run left half-done; claim the slot (a unique
row per slot, and at most one run in progress per channel, so a repeated
trigger, a second replica or a concurrent "now" gets nothing); choose the
entries; post with the digest id in the message metadata; write the ledger.
A crash between posting and writing the ledger leaves a claimed run; the next
run finds its post by the metadata in the channel history and records it
instead of posting again.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

from rlmap_bot import jobs
from rlmap_bot.digest.content import MAX_ITEMS, capped_digest, select_items
from rlmap_bot.results.digest import Digest
from rlmap_bot.state.models import Subscription

if TYPE_CHECKING:
    from rlmap_bot.core import Core

METADATA_EVENT = "rlmap_digest"
# A claimed run whose post cannot be found is taken as dead when its lease runs out (it may still be
# posting before then); the lease is the state store's (state/digests.py).


class Poster(jobs.Poster, Protocol):
    """What a front-end provides to deliver digests (Slack
    implements it); ``find`` looks a digest up by its id.
    """

    def post_digest(self, channel: str, digest: Digest, digest_id: str) -> str: ...

    def post_note(self, channel: str, text: str) -> None: ...


class RunResult(BaseModel):
    status: str  # posted | empty | noted | duplicate
    digest_id: str | None = None
    ts: str | None = None
    entries: int = 0
    recovered: int = 0


class DigestService:
    def __init__(self, core: Core, max_items: int = MAX_ITEMS):
        self.core = core
        self.max_items = max_items

    def preview(self, sub: Subscription, now: dt.datetime | None = None) -> Digest:
        """Exactly what the next digest for ``sub`` would
        say (``more`` counts what waits behind it).
        """
        now = now or dt.datetime.now(dt.UTC)
        items = select_items(
            self.core.store,
            self.core.state.digests.delivered(sub.team, sub.channel),
            sub.filters,
            since=sub.created_at,
        )
        period_start = (sub.last_run_at or sub.created_at).date()
        return capped_digest(items, period_start, now.date(), sub.filters, self.max_items)

    def recover(self, sub: Subscription, poster: Poster, now: dt.datetime | None = None) -> int:
        """Settle runs claimed but not recorded: recorded
        if their post exists, freed if long dead.
        """
        now = now or dt.datetime.now(dt.UTC)
        settled = 0
        for run in self.core.state.digests.pending(sub.team, sub.channel):
            started = dt.datetime.fromisoformat(run["created_at"])
            ts = poster.find(sub.channel, run["digest_id"], started - dt.timedelta(minutes=5))
            if ts:
                self.core.state.digests.record(run["digest_id"], ts)
                settled += 1
            elif self.core.state.digests.give_up(run["digest_id"], now):
                settled += 1
        return settled

    def run(
        self, sub: Subscription, slot: str, poster: Poster, now: dt.datetime | None = None
    ) -> RunResult:
        now = now or dt.datetime.now(dt.UTC)
        state = self.core.state
        recovered = self.recover(sub, poster, now)
        digest_id = uuid.uuid4().hex
        if not state.digests.claim(digest_id, sub.team, sub.channel, slot, []):
            return RunResult(status="duplicate", recovered=recovered)
        try:
            digest = self.preview(sub, now)  # chosen under the claim: no other run can interleave
            entries = [(i.id, i.version, i.status) for i in digest.items]
            if not entries:
                state.digests.finish(digest_id, "empty")
                state.subscriptions.mark_run(sub, now)
                if sub.on_empty == "note":
                    poster.post_note(
                        sub.channel,
                        f"Nothing new in the RL Scaling Bottleneck Map since the last digest "
                        f"({digest.period()}).",
                    )
                    return RunResult(status="noted", recovered=recovered)
                return RunResult(status="empty", recovered=recovered)
            state.digests.set_entries(digest_id, entries)
            ts = poster.post_digest(sub.channel, digest, digest_id)
        except jobs.NotPosted:
            state.digests.finish(
                digest_id, "abandoned"
            )  # surely not posted: the entries stay eligible
            raise
        # Any other failure leaves the run claimed: recovery will look for its post.
        state.digests.record(digest_id, ts)
        state.subscriptions.mark_run(sub, now)
        return RunResult(
            status="posted", digest_id=digest_id, ts=ts, entries=len(entries), recovered=recovered
        )
