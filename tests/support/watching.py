"""A watch over Slack, driven as the scheduler drives it: a clock moved by hand, the bot started
with it, a check fired for the next slot, and the watch posts read back from the stand-in."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from rlmap_bot.runs.sources.access import workspace_access_for
from rlmap_bot.watch.schedule import last_slot
from rlmap_bot.watch.service import WatchService
from support.bot import start_bot


class Clock:
    """The watch clock, moved by hand; from ``start``, or from now."""

    def __init__(self, start: dt.datetime | None = None) -> None:
        self.now = start or dt.datetime.now(dt.UTC).replace(microsecond=0)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, minutes: float = 15) -> dt.datetime:
        self.now += dt.timedelta(minutes=minutes)
        return self.now


def watch_service(core, roots: Path, clock: Clock) -> WatchService:
    """A watch service over ``core`` reading runs under ``roots``, with the workspace's access and
    ``clock``: the watch checked in process, without Slack."""
    settings = core.settings.model_copy(update={"rlmap_run_roots": str(roots)})
    return WatchService(
        core, access=workspace_access_for(settings, core.state), clock=clock, settings=settings
    )


def launch(standin, built_db, state: Path, roots: Path | None, clock: Clock, **settings):
    if roots is not None:
        settings["rlmap_run_roots"] = str(roots)
    bot = start_bot(standin, built_db, state, **settings)
    bot.front.watches.clock = clock
    return bot


def _advice(conditions) -> bool:
    """A post of advice on when to stop alone (``stop:...``, issue 37; tests/test_watch_stopping.py
    and tests/test_slack_scaling.py hold it), which the tests of faults and stages leave out."""
    return bool(conditions) and all(str(c).startswith("stop:") for c in conditions)


def watch_posts(standin, channel: str = "C1", advice: bool = False) -> list:
    out = []
    for call in standin.of("chat.postMessage"):
        meta = call.args.get("metadata")
        meta = json.loads(meta) if isinstance(meta, str) else meta
        if call.args["channel"] == channel and meta and meta.get("event_type") == "rlmap_watch":
            payload = meta["event_payload"]
            if advice or not _advice(payload.get("conditions") or [payload.get("condition")]):
                out.append((call, payload))
    return out


def tick(bot, clock: Clock, minutes: float = 15, watch_id: str | None = None, advice: bool = False):
    """The next scheduled check, as the scheduler would fire it (its stop advice left out of its
    alerts unless ``advice``)."""
    clock.advance(minutes)
    watches = bot.front.core.state.watches.list()
    watch = next(w for w in watches if watch_id in (None, w.id))
    result = bot.front.watches.fire(watch.id, last_slot(watch, clock.now))
    if not advice and result is not None:
        result.alerts = [a for a in result.alerts if not _advice(a.conditions)]
    return result
