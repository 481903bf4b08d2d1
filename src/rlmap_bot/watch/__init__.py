"""Watch a run: check a training log now and then, and tell the channel when something changes.

Knows nothing of Slack: it takes plain values and returns pydantic models; a
front-end supplies a :class:`~rlmap_bot.watch.service.Poster`.

``model``       Watch, Tracking, Alert, CheckResult (and interval parsing)
``roots``       which paths may be watched (RLMAP_RUN_ROOTS), resolved before every check
``series``      the bounded series kept between
checks (a uniform sample plus a full-resolution tail)
``faults``      NaN/inf, divergence and spikes at full resolution, and when a fault is over
``conditions``  what opens, what changes, what clears (with hysteresis)
``check``       one check: read what is new (incrementally for line logs), scan, derive, judge
``service``     exactly-once checks and announcements: slot claims, the ledger, recovery
``schedule``    watches as a kind of timed job
(:mod:`rlmap_bot.jobs`): interval jobs, catch-up after downtime
"""
