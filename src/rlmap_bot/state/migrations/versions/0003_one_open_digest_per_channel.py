"""At most one digest run in progress per channel: concurrent runs cannot both post.

Revision ID: 0003
Revises: 0002
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A partial unique index: the same DDL on SQLite and PostgreSQL.
    op.execute(
        "CREATE UNIQUE INDEX IF NOT EXISTS uq_digest_runs_open ON digest_runs (team, channel) "
        "WHERE status = 'claimed'"
    )
