"""A watch over Slack, driven as the scheduler drives it: a clock moved by hand, the bot started
with it, a check fired for the next slot, and the watch posts read back from the stand-in."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from rlmap_bot.watch.schedule import last_slot
from support.bot import start_bot


class Clock:
    """The watch clock, moved by hand."""

    def __init__(self) -> None:
        self.now = dt.datetime.now(dt.UTC).replace(microsecond=0)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, minutes: float = 15) -> dt.datetime:
        self.now += dt.timedelta(minutes=minutes)
        return self.now


def launch(standin, built_db, state: Path, roots: Path | None, clock: Clock, **settings):
    if roots is not None:
        settings["rlmap_run_roots"] = str(roots)
    bot = start_bot(standin, built_db, state, **settings)
    bot.front.watches.clock = clock
    return bot


def watch_posts(standin, channel: str = "C1") -> list:
    out = []
    for call in standin.of("chat.postMessage"):
        meta = call.args.get("metadata")
        meta = json.loads(meta) if isinstance(meta, str) else meta
        if call.args["channel"] == channel and meta and meta.get("event_type") == "rlmap_watch":
            out.append((call, meta["event_payload"]))
    return out


def tick(bot, clock: Clock, minutes: float = 15, watch_id: str | None = None):
    """The next scheduled check, as the scheduler would fire it."""
    clock.advance(minutes)
    watches = bot.front.core.state.watches.list()
    watch = next(w for w in watches if watch_id in (None, w.id))
    return bot.front.watches.fire(watch.id, last_slot(watch, clock.now))
