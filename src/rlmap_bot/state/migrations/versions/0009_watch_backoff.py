"""Watch backoff: a watch whose source cannot be read waits longer between reads, and every
replica (and a restart) knows until when.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "watch_backoff",
        sa.Column("watch_id", sa.String(64), primary_key=True),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("retry_at", sa.String(40), nullable=False),
        sa.Column("since", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("watch_backoff")
