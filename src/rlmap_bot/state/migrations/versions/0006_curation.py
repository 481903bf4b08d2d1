"""Curation: suggested papers and their decisions,
approved additions, the curators' channel, scout slots.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "suggestions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("arxiv_id", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("data", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_try_at", sa.String(40)),
        sa.Column("card_channel", sa.String(64)),
        sa.Column("card_ts", sa.String(64)),
        sa.Column("decided_by", sa.String(64)),
        sa.Column("reason", sa.Text),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
        sa.Index("ix_suggestions_arxiv", "arxiv_id", "status"),
        sa.Index("ix_suggestions_due", "status", "next_try_at"),
    )
    op.create_table(
        "additions",
        sa.Column("entry_id", sa.String(128), primary_key=True),
        sa.Column("arxiv_id", sa.String(32), nullable=False),
        sa.Column("suggestion_id", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("suggested_by", sa.String(64), nullable=False),
        sa.Column("approved_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "curator_channels",
        sa.Column("team", sa.String(64), primary_key=True),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("set_by", sa.String(64), nullable=False),
        sa.Column("set_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "scout_runs",
        sa.Column("slot", sa.String(80), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(300), nullable=False),
        sa.Column("posted", sa.Integer, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    for table in ("scout_runs", "curator_channels", "additions", "suggestions"):
        op.drop_table(table)
