"""How long to wait before reading again a source that could not be read: one policy for the
terminal follow (:mod:`rlmap_bot.watch.follow`) and the scheduled watches
(:meth:`rlmap_bot.watch.service.WatchService.run`).

After ``failures`` reads in a row that failed, the next read is ``interval * 2**failures`` later,
at most :data:`BACKOFF_MAX` intervals and at most :data:`BACKOFF_CEILING` (never less than one
interval: a watch is never read more often than it was asked to be).
"""

from __future__ import annotations

import datetime as dt

#: The longest wait between retries, in intervals.  Judgement: a tracker down for maintenance is
#: back within the hour; 8 intervals of the default minute keeps a terminal follow from hammering
#: it, and from missing its return by more than a few minutes.
BACKOFF_MAX = 8
#: The longest wait between retries, in time, whatever the interval.  Judgement: the same hour of
#: maintenance; without it a daily watch would wait 8 days before trying again.
BACKOFF_CEILING = dt.timedelta(hours=1)


def retry_delay(interval: dt.timedelta, failures: int) -> dt.timedelta:
    """The wait before the next read, after ``failures`` failed reads in a row (0: the interval)."""
    if failures <= 0:
        return interval
    longer = interval * min(2**failures, BACKOFF_MAX)
    return max(interval, min(longer, BACKOFF_CEILING))


def due(retry_at: dt.datetime | None, now: dt.datetime, interval: dt.timedelta) -> bool:
    """Whether a scheduled check at ``now`` may read again.  Slots fire on a grid of the interval,
    a little late; the slot nearest ``retry_at`` (within half an interval) takes the retry."""
    return retry_at is None or now + interval / 2 >= retry_at
