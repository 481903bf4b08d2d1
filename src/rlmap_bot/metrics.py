"""Prometheus metrics, one named object each, served
at ``/metrics`` (see the README, "Reliability").

Any module increments what it does, e.g. ``metrics.WATCH_POSTS.inc()`` after a
watch posts an update. Counters live in prometheus-client's default registry, one
per process: every replica is scraped on its own, and sums or maxima are taken
in Prometheus. ``kind`` is what Slack sent: ``event``, ``action`` (a button
click) or ``command`` (``/rlmap``).
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest

EVENTS_RECEIVED = Counter(
    "rlmap_events_received",
    "Requests from Slack that carry work, as received (a retry counts again)",
    ["kind"],
)
EVENTS_ANSWERED = Counter(
    "rlmap_events_answered", "Requests whose handling finished (reply posted)", ["kind"]
)
EVENTS_DEDUPLICATED = Counter(
    "rlmap_events_deduplicated",
    "Requests acked without acting: finished already, or another replica holds a live lease on "
    "them",
    ["kind"],
)
EVENTS_TAKEN_OVER = Counter(
    "rlmap_events_taken_over",
    "Unfinished requests whose lease ran out and that this replica took over, by who found them: "
    "Slack's retry or the sweeper",
    ["kind", "by"],
)
EVENTS_FAILED = Counter(
    "rlmap_events_failed",
    "Requests given up on: the handler failed with a bug, or the request was taken over too often",
    ["kind"],
)
ACK_SECONDS = Histogram(
    "rlmap_ack_seconds",
    "From a request reaching the bot to its HTTP response (Slack allows 3 s)",
    ["kind"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5),
)
REPLY_SECONDS = Histogram(
    "rlmap_reply_seconds",
    "From a request's first claim to its handling finished, takeovers included",
    ["kind"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 90, 180),
)
DIGEST_POSTS = Counter("rlmap_digest_posts", "Digests posted to a channel")
WATCH_POSTS = Counter("rlmap_watch_posts", "Updates posted by watched runs")
RATE_LIMITED = Counter("rlmap_slack_rate_limited", "429 answers from the Slack Web API", ["method"])
STATE_STORE_ERRORS = Counter(
    "rlmap_state_store_errors",
    "State-store operations that failed because the database did not answer",
)
STATE_STORE_UP = Gauge(
    "rlmap_state_store_up", "1 while the state store answers, 0 during an outage"
)
CLAIMS_UNFINISHED = Gauge(
    "rlmap_event_claims_unfinished",
    "Claims not finished yet, across all replicas (as of this replica's last sweep)",
)
CLAIMS_OLDEST_SECONDS = Gauge(
    "rlmap_event_claims_oldest_unfinished_seconds",
    "Age of the oldest unfinished claim, across all replicas (as of this replica's last sweep)",
)


def exposition() -> tuple[bytes, str]:
    """The current values in Prometheus' text format, and its content type."""
    return generate_latest(), CONTENT_TYPE_LATEST
