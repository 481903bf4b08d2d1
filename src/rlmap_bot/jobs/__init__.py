"""Timed work: one scheduler for digests, watches and
any kind that comes next (the weekly arXiv scan).

Every timed job is a *kind* over items the state store keeps (digest subscriptions,
watches, ...). The store is the truth: a kind's jobs are created from its items
when it is registered and re-synced every few minutes (other replicas add, change
and drop items), in memory, so nothing is migrated when APScheduler changes.

Exactly once is not the scheduler's doing. Every firing carries its slot (the
scheduled moment it stands for); the kind's service claims :func:`slot_key` of it
in the state store before doing anything, so a slot fired twice (two replicas, a
restart, a catch-up) runs once. Posts carry their id in the message metadata
(:class:`Poster.find`), so a crash between posting and recording is settled by
finding the post again instead of posting twice; :class:`NotPosted` is how a
poster says a post surely did not happen.

A new kind is a class with six members, registered with the front-end's scheduler::

    class ArxivScan:
        name = "arxiv"
        misfire_grace = dt.timedelta(hours=12)       # a tick this late still runs (None: always)

        def load(self):                              # the items; anything with an ``id``
            return state.scans.list()
        def trigger(self, item):                     # when it fires; None: not now (paused)
            return CronTrigger(day_of_week="mon", hour=6, timezone=dt.UTC)
        def due(self, item):                         # the slot a tick now stands for
            return last_fire_time(self.trigger(item), utcnow())
        def missed(self, items, now):                # at start: item id -> the one slot to catch up
            return {}
        def fire(self, item_id, due):                # the work, claiming slot_key(due) first
            ScanService(core).run(item_id, slot_key(due), poster)

    caught_up = front.jobs.register(ArxivScan())

:meth:`Scheduler.every` adds housekeeping that belongs to no item; a :class:`Registration` holds
a kind's place (start with its housekeeping, re-sync, stop) for the front-end that runs it.
"""

from rlmap_bot.jobs.delivery import NotPosted, Poster
from rlmap_bot.jobs.schedule import Item, Kind, Registration, Scheduler, slot_key

__all__ = ["Item", "Kind", "NotPosted", "Poster", "Registration", "Scheduler", "slot_key"]
