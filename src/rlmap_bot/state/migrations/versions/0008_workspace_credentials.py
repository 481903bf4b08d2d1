"""Workspace credentials: tracker keys and tokens an admin sets, sealed at rest.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workspace_credentials",
        sa.Column("team", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("set_by", sa.String(64), nullable=False),
        sa.Column("set_at", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("workspace_credentials")
