"""The state tables as the repositories query them today.

Migrations do not import this module: each migration under ``migrations/versions``
freezes its own DDL, so editing a table here never changes what an old migration
did. A change here needs a new migration beside it (``tests/test_state_migrations.py``
checks that a migrated database matches these definitions).
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

sessions = sa.Table(
    "sessions",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("thread_ts", sa.String(64)),
    sa.Column("user_id", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Index("ix_sessions_thread", "team", "channel", "thread_ts"),
    sa.Index("ix_sessions_user", "team", "user_id", "status"),
)

# One row per request Slack sent (an event, a click,
# a slash command): claimed with its payload and a
# lease before any work, done after the reply; see state/events.py.
event_claims = sa.Table(
    "event_claims",
    metadata,
    sa.Column(
        "key", sa.String(160), primary_key=True
    ),  # "event:Ev...", "action:TRIGGER", "command:TRIGGER"
    sa.Column("kind", sa.String(16), nullable=False),  # event | action | command
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # working | done | failed
    sa.Column("owner", sa.String(80), nullable=False),  # leases.OWNER of the replica working on it
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("lease_until", sa.String(40), nullable=False),
    sa.Column(
        "body", sa.Text
    ),  # the request as JSON, sealed (crypto.SEALED), while unfinished; cleared when finished
    sa.Column(
        "replies", sa.Text, nullable=False
    ),  # JSON {"1": {"method", "channel", "ts"}, ...}: what was posted
    sa.Column("claimed_at", sa.String(40), nullable=False),
    sa.Column("finished_at", sa.String(40)),
    sa.Index("ix_event_claims_status_lease", "status", "lease_until"),
)

subscriptions = sa.Table(
    "subscriptions",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("team", "channel", name="uq_subscriptions_channel"),
)

digest_runs = sa.Table(
    "digest_runs",
    metadata,
    sa.Column("digest_id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("slot", sa.String(80), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # claimed | posted | empty | abandoned
    sa.Column("entries", sa.Text, nullable=False),  # JSON list of [entry_id, version, kind]
    sa.Column("ts", sa.String(64)),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("owner", sa.String(80)),  # leases.OWNER of the replica that claimed it
    sa.Column("lease_until", sa.String(40)),  # unposted then (and not found): given up
    sa.UniqueConstraint("team", "channel", "slot", name="uq_digest_runs_slot"),
)

digest_ledger = sa.Table(
    "digest_ledger",
    metadata,
    sa.Column("team", sa.String(64), primary_key=True),
    sa.Column("channel", sa.String(64), primary_key=True),
    sa.Column("entry_id", sa.String(128), primary_key=True),
    sa.Column("version", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),  # new | updated
    sa.Column("digest_id", sa.String(64), nullable=False),
    sa.Column("sent_at", sa.String(40), nullable=False),
)

watches = sa.Table(
    "watches",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column(
        "path_key", sa.String(64), nullable=False
    ),  # sha256 of the resolved path: one watch per path and channel
    sa.Column("status", sa.String(16), nullable=False),  # active | paused
    sa.Column("data", sa.Text, nullable=False),  # the Watch model as JSON
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("team", "channel", "path_key", name="uq_watches_path"),
)

watch_state = sa.Table(
    "watch_state",
    metadata,
    sa.Column("watch_id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column(
        "version", sa.Integer, nullable=False
    ),  # optimistic: a check that was given up cannot overwrite
    sa.Column(
        "data", sa.Text, nullable=False
    ),  # Tracking as JSON: reader offsets, conditions, last verdict
    sa.Column("series", sa.LargeBinary),  # the bounded kept series (npz, compressed)
    sa.Column("updated_at", sa.String(40), nullable=False),
)

watch_checks = sa.Table(
    "watch_checks",
    metadata,
    sa.Column("check_id", sa.String(64), primary_key=True),
    sa.Column("watch_id", sa.String(64), nullable=False),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("slot", sa.String(80), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # claimed | done | failed | abandoned
    sa.Column("owner", sa.String(300), nullable=False),  # leases.OWNER of the claiming process
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("lease_until", sa.String(40)),  # still running then: given up for dead
    sa.UniqueConstraint("watch_id", "slot", name="uq_watch_checks_slot"),
)

watch_alerts = sa.Table(
    "watch_alerts",
    metadata,
    sa.Column("watch_id", sa.String(64), primary_key=True),
    sa.Column("condition", sa.String(64), primary_key=True),
    sa.Column("episode", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(16), primary_key=True),  # alert | resolved | paused
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("alert_id", sa.String(64), nullable=False),  # one post may carry several conditions
    sa.Column("status", sa.String(16), nullable=False),  # claimed | posted
    sa.Column("ts", sa.String(64)),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Index("ix_watch_alerts_alert", "alert_id"),
)

# A watch whose source could not be read: how many reads in a row failed and when the next
# scheduled check may read again (watch/backoff.py), shared by every replica and kept over a
# restart.  No row: the source read at its last check.
watch_backoff = sa.Table(
    "watch_backoff",
    metadata,
    sa.Column("watch_id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("failures", sa.Integer, nullable=False),
    sa.Column("retry_at", sa.String(40), nullable=False),
    sa.Column("since", sa.String(40), nullable=False),  # the first failed read of this spell
)

# Every claimed row (event_claims, digest_runs, watch_checks, suggestions, scout_runs) holds its
# lease in the columns state/leases.py works on: status, owner, a lease time and, where work is
# handed on, attempts.

# Curation (see state/additions.py): papers suggested
# from Slack or by the scout, and what curators decided.
suggestions = sa.Table(
    "suggestions",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("arxiv_id", sa.String(32), nullable=False),
    sa.Column(
        "status", sa.String(16), nullable=False
    ),  # waiting (for arXiv) | pending | approved | rejected | dropped
    sa.Column("source", sa.String(16), nullable=False),  # person | scout
    sa.Column("user_id", sa.String(64), nullable=False),  # who suggested it ("scout" for the scan)
    sa.Column(
        "channel", sa.String(64), nullable=False
    ),  # where it was suggested (the suggester is told there)
    sa.Column("data", sa.Text),  # the Candidate as JSON, once arXiv answered
    sa.Column("attempts", sa.Integer, nullable=False),  # arXiv look-ups tried
    sa.Column(
        "next_try_at", sa.String(40)
    ),  # waiting: when to try arXiv again (also the lease of a replica trying)
    sa.Column("card_channel", sa.String(64)),
    sa.Column("card_ts", sa.String(64)),
    sa.Column("decided_by", sa.String(64)),
    sa.Column("reason", sa.Text),  # a rejection's reason
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Column("owner", sa.String(80)),  # leases.OWNER of the replica that took the latest arXiv try
    sa.Index("ix_suggestions_arxiv", "arxiv_id", "status"),
    sa.Index("ix_suggestions_due", "status", "next_try_at"),
)

# Approved papers, live in every replica's knowledge store until a knowledge file takes the id over.
additions = sa.Table(
    "additions",
    metadata,
    sa.Column("entry_id", sa.String(128), primary_key=True),
    sa.Column("arxiv_id", sa.String(32), nullable=False),
    sa.Column("suggestion_id", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # live | retired (a file has it) | removed
    sa.Column(
        "data", sa.Text, nullable=False
    ),  # the Paper entry as JSON, validated like a knowledge file
    sa.Column("suggested_by", sa.String(64), nullable=False),
    sa.Column("approved_by", sa.String(64), nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),
)

curator_channels = sa.Table(
    "curator_channels",
    metadata,
    sa.Column("team", sa.String(64), primary_key=True),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("set_by", sa.String(64), nullable=False),
    sa.Column("set_at", sa.String(40), nullable=False),
)

scout_runs = sa.Table(
    "scout_runs",
    metadata,
    sa.Column(
        "slot", sa.String(80), primary_key=True
    ),  # one weekly scan, claimed once across replicas
    sa.Column("status", sa.String(16), nullable=False),  # claimed | done | failed
    sa.Column("owner", sa.String(300), nullable=False),
    sa.Column("posted", sa.Integer, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("lease_until", sa.String(40)),
)

# A workspace's tracker credentials (a W&B API key, an MLflow token), set by an admin; ``value`` is
# sealed with RLMAP_ENCRYPTION_KEY and marked so (crypto.SEALED), never stored plain. See
# state/credentials.py.
workspace_credentials = sa.Table(
    "workspace_credentials",
    metadata,
    sa.Column("team", sa.String(64), primary_key=True),
    sa.Column(
        "name", sa.String(64), primary_key=True
    ),  # WANDB_API_KEY | MLFLOW_TRACKING_TOKEN | ...
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("set_by", sa.String(64), nullable=False),
    sa.Column("set_at", sa.String(40), nullable=False),
)

# One value every start of the Slack app keeps sealed under the first RLMAP_ENCRYPTION_KEY: a start
# whose keys open it has the right key, whatever else fails to open (slack/sealing.py).
encryption_check = sa.Table(
    "encryption_check",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("set_at", sa.String(40), nullable=False),
)

# What a card leaves out, kept for its Details button: the card's result as JSON, by an id the
# button carries; forgotten after a while (state/details.py, DETAILS_KEPT).
card_details = sa.Table(
    "card_details",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("kind", sa.String(40), nullable=False),  # the result's type: RunDiagnosis, Alert, ...
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Index("ix_card_details_created", "created_at"),
)

# Tables that hold a workspace's data, for uninstall.
PER_TEAM = (
    subscriptions,
    sessions,
    digest_ledger,
    digest_runs,
    event_claims,
    watches,
    watch_state,
    watch_checks,
    watch_alerts,
    suggestions,
    curator_channels,
    workspace_credentials,
    watch_backoff,
    card_details,
)
