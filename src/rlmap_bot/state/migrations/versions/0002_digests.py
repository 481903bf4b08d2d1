"""Digest subscriptions, runs (one row per channel and slot) and the ledger of entries sent.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "subscriptions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.UniqueConstraint("team", "channel", name="uq_subscriptions_channel"),
    )
    op.create_table(
        "digest_runs",
        sa.Column("digest_id", sa.String(64), primary_key=True),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("slot", sa.String(80), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("entries", sa.Text, nullable=False),
        sa.Column("ts", sa.String(64)),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.UniqueConstraint("team", "channel", "slot", name="uq_digest_runs_slot"),
    )
    op.create_table(
        "digest_ledger",
        sa.Column("team", sa.String(64), primary_key=True),
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("entry_id", sa.String(128), primary_key=True),
        sa.Column("version", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("digest_id", sa.String(64), nullable=False),
        sa.Column("sent_at", sa.String(40), nullable=False),
    )
