"""Event claims: at-least-once handling of Slack events, clicks and slash commands.

Each request Slack sends is claimed with its payload and a lease before any work;
the claim is marked done after the reply is posted, and a claim whose lease ran
out unfinished is taken over (by Slack's retry or by a sweeper on any replica).
The replies a claim posted are recorded on it, so a takeover never posts twice.

``processed_events`` (event ids only, claimed forever) is carried over as
finished claims, so a retry of an event handled before the upgrade is still
answered once, and then dropped.

Slack tokens are encrypted at rest from this version on (``RLMAP_ENCRYPTION_KEY``);
a Fernet token is longer than the plain one, so on PostgreSQL the token columns
of slack-sdk's installation tables, where they exist already, become TEXT.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# slack-sdk's installation tables (created by slack-sdk when OAuth is on) and their secret columns.
SECRET_COLUMNS = {
    "slack_installations": (
        "bot_token",
        "bot_refresh_token",
        "user_token",
        "user_refresh_token",
        "incoming_webhook_url",
    ),
    "slack_bots": ("bot_token", "bot_refresh_token"),
}


def upgrade() -> None:
    op.create_table(
        "event_claims",
        sa.Column("key", sa.String(160), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(80), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("lease_until", sa.String(40), nullable=False),
        sa.Column("body", sa.Text),
        sa.Column("replies", sa.Text, nullable=False),
        sa.Column("claimed_at", sa.String(40), nullable=False),
        sa.Column("finished_at", sa.String(40)),
    )
    op.create_index("ix_event_claims_status_lease", "event_claims", ["status", "lease_until"])
    op.execute(
        "INSERT INTO event_claims (key, kind, team, status, owner, attempts, lease_until, body, "
        "replies, claimed_at, finished_at) SELECT 'event:' || event_id, 'event', team, 'done', '', "
        "1, seen_at, NULL, '{}', seen_at, seen_at FROM processed_events"
    )
    op.drop_table("processed_events")

    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        present = set(sa.inspect(bind).get_table_names())
        for table, columns in SECRET_COLUMNS.items():
            if table in present:
                for column in columns:
                    op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE TEXT")
