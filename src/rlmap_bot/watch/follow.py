"""Following a run in a terminal: ``rlmap-bot watch SOURCE`` checks it over and over and says
each alert once, until Ctrl-C.

The checks are the watch's own (:func:`rlmap_bot.watch.check.check_run` and the service's
:func:`~rlmap_bot.watch.posts.plan`), with what checking learnt held in memory instead of the
state store: a terminal follow is one person's, nothing is posted or stored.  What it says:

* each alert and resolved note a watch would post, once;
* a run that stops logging: once, "no new metrics for N minutes", and again only after it grew;
* a source that cannot be read (a tracker or server down): once, then retried with the backoff
  of :mod:`rlmap_bot.watch.backoff` (the scheduled watches' too); once more when it is read again.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Callable

from rlmap_bot.results.watch import Alert, Said
from rlmap_bot.runs.growing.kept import KeptRun
from rlmap_bot.watch.backoff import BACKOFF_MAX, retry_delay
from rlmap_bot.watch.model import Tracking, Watch

if TYPE_CHECKING:
    from rlmap_bot.runs.sources.access import Access
    from rlmap_bot.watch.service import WatchService

__all__ = ["BACKOFF_MAX", "follow"]


def follow(
    service: WatchService,
    source: str,
    access: Access,
    say: Callable[[Said], None],
    sleep: Callable[[float], None],
    seconds: float,
    checks: int | None = None,
) -> None:
    """Check ``source`` every ``seconds`` (``checks`` times, or until interrupted), reading it
    with ``access``; say what is new."""
    from rlmap_bot.watch.check import check_run
    from rlmap_bot.watch.posts import plan

    watch = Watch(team="terminal", channel="terminal", path=source)
    tracking, kept = Tracking(), KeptRun()
    stalled = unreadable = False
    failures = 0
    n = 0
    while checks is None or n < checks:
        n += 1
        now = service.clock()
        outcome = check_run(
            watch,
            tracking,
            kept,
            engine=service.core.engine,
            aliases=service.aliases(),
            roots=service.roots,
            now=now,
            stall=service.stall,
            access=access,
        )
        tracking, kept = outcome.tracking, outcome.kept
        if outcome.status == "problem" or (outcome.pause == "stalled" and unreadable):
            failures += 1
            if not unreadable:
                unreadable = True
                say(
                    Said(
                        line=f"cannot read it now: {outcome.message}; retrying, less often "
                        f"meanwhile"
                    )
                )
        else:
            if unreadable:
                say(Said(line=f"reading {source} again"))
            unreadable, failures = False, 0
            if outcome.status == "paused" and outcome.pause == "stalled":
                if not stalled:
                    stalled = True
                    say(Said(line=f"{source}: {outcome.message}; still following it"))
            elif outcome.status == "paused":
                say(Said(line=f"stopped: {outcome.message}"))
                return
            elif outcome.status == "checked":
                stalled = False
                tracking.last_growth_at = now
                alert, note, _ = plan(watch, outcome, lambda *_: None)
                evaluation = outcome.judgement().evaluation
                for post in (alert, note):
                    for key in post.conditions if post is not None else []:
                        if key in evaluation.conditions:
                            evaluation.conditions[key].announced = True
                tracking.conditions, tracking.episodes = evaluation.conditions, evaluation.episodes
                posts: list[Alert] = [a for a in (alert, note) if a is not None]
                if posts or n == 1:
                    result = outcome.result(watch)
                    result.alerts, result.dry = posts, True
                    say(Said(result=result))
        if checks is not None and n >= checks:
            return
        sleep(retry_delay(dt.timedelta(seconds=seconds), failures).total_seconds())
