"""Watch a run: check a training log now and then, and tell the channel when something changes.

Knows nothing of Slack: it takes plain values and returns pydantic models; a front-end supplies a
:class:`~rlmap_bot.watch.service.Poster` and the access a watch of its workspaces reads with.

``model``       Watch, Tracking (the state store's records) and interval parsing
``conditions``  what opens, what changes, what clears (with hysteresis)
``check``       one check: read what is new, then scan, keep and judge it
                (:mod:`rlmap_bot.runs.growing`)
``posts``       what a check posts, as typed changes
``service``     setting watches; exactly-once checks and announcements: slot claims, the ledger,
                recovery
``schedule``    watches as a kind of timed job (:mod:`rlmap_bot.jobs`): interval jobs, catch-up
                after downtime, the scheduler's checks
``follow``      a terminal following a run until Ctrl-C
``backoff``     the wait before reading again a source that could not be read
"""
