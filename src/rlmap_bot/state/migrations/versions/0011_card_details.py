"""Card details: what a verdict or alert card leaves out, kept for its Details button.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "card_details",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_card_details_created", "card_details", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_card_details_created", "card_details")
    op.drop_table("card_details")
