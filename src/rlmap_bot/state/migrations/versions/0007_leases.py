"""One lease for every claim: digest runs, watch checks, suggestions and scout runs get its columns.

Event claims already hold ``status``, ``owner``, ``attempts`` and ``lease_until``. Digest runs
gain ``owner`` and ``lease_until``, watch checks and scout runs ``lease_until``, and suggestions
``owner`` (their lease is ``next_try_at``), so ``state/leases.py`` works on all of them alike.

Rows claimed when this runs get the lease their claim gave them before: a digest run 2 minutes
and a watch check 10 minutes from when it was claimed (``RECOVER_AFTER`` and ``CHECK_STALE``
then). A column that is there already (a table made from later definitions) is left as it is.

Revision ID: 0007
Revises: 0006
"""

import datetime as dt

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

COLUMNS = {
    "digest_runs": (("owner", 80), ("lease_until", 40)),
    "watch_checks": (("lease_until", 40),),
    "suggestions": (("owner", 80),),
    "scout_runs": (("lease_until", 40),),
}
# The lease a claimed row had before this revision, counted from its created_at.
HELD_FOR = {
    "digest_runs": dt.timedelta(minutes=2),
    "watch_checks": dt.timedelta(minutes=10),
    "scout_runs": dt.timedelta(0),
}
KEYS = {"digest_runs": "digest_id", "watch_checks": "check_id", "scout_runs": "slot"}


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    for table, columns in COLUMNS.items():
        present = {c["name"] for c in inspector.get_columns(table)}
        for name, length in columns:
            if name not in present:
                op.add_column(table, sa.Column(name, sa.String(length), nullable=True))
    for table, held in HELD_FOR.items():
        key = KEYS[table]
        rows = bind.execute(
            sa.text(
                f"SELECT {key}, created_at FROM {table} WHERE status = 'claimed' AND lease_until "
                f"IS NULL"
            )
        ).all()
        for row_key, created in rows:
            until = (
                (dt.datetime.fromisoformat(str(created)) + held)
                .astimezone(dt.UTC)
                .isoformat(timespec="microseconds")
            )
            bind.execute(
                sa.text(f"UPDATE {table} SET lease_until = :until WHERE {key} = :key"),
                {"until": until, "key": row_key},
            )


def downgrade() -> None:
    for table, columns in COLUMNS.items():
        with op.batch_alter_table(table) as batch:
            for name, _length in columns:
                batch.drop_column(name)
