"""Watches: the paths a channel watches, what checking
has learnt, check claims and the alert ledger.

Revision ID: 0005
Revises: 0003 (0004 is on another branch; the chain is re-linked when they meet)
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "watches",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("path_key", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.UniqueConstraint("team", "channel", "path_key", name="uq_watches_path"),
    )
    op.create_table(
        "watch_state",
        sa.Column("watch_id", sa.String(64), primary_key=True),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("series", sa.LargeBinary),
        sa.Column("updated_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "watch_checks",
        sa.Column("check_id", sa.String(64), primary_key=True),
        sa.Column("watch_id", sa.String(64), nullable=False),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("slot", sa.String(80), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(300), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.UniqueConstraint("watch_id", "slot", name="uq_watch_checks_slot"),
    )
    # At most one check of a watch in progress: a `now`,
    # a scheduled slot and another replica take turns.
    op.execute(
        "CREATE UNIQUE INDEX IF NOT EXISTS uq_watch_checks_open ON watch_checks (watch_id) WHERE "
        "status = 'claimed'"
    )
    op.create_table(
        "watch_alerts",
        sa.Column("watch_id", sa.String(64), primary_key=True),
        sa.Column("condition", sa.String(64), primary_key=True),
        sa.Column("episode", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("alert_id", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("ts", sa.String(64)),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_watch_alerts_alert", "watch_alerts", ["alert_id"])
