"""Sealed values carry a marker; request bodies are never kept in clear.

Until now a stored secret counted as sealed when it began as a Fernet token does, so a token
that happened to begin so was kept in clear, and a value that did not was used as it was. From
this version a sealed value starts with ``rlmap:1:``. Values stored before are marked
``rlmap:0:`` here, without a judgement of their shape (this step has no key): the next start
of the Slack app opens each with the key and seals it again as ``rlmap:1:``; one that does not
open is reported for its workspace and never used as it is.

Claims kept the request Slack sent (a slash command's text, with any key typed in it) in clear
while unfinished; from now on the body is sealed. Bodies still in clear are dropped here: a
request an older replica left unfinished is given up rather than replayed.

``encryption_check`` holds one value sealed at every start, so that a later start can tell a
wrong key (it does not open even that) from one workspace's value that does not open.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

LEGACY = "rlmap:0:"
SEALED = "rlmap:1:"
# The secret columns, here and in slack-sdk's installation tables (created by slack-sdk with OAuth).
SECRET_COLUMNS = {
    "workspace_credentials": ("value",),
    "slack_installations": (
        "bot_token",
        "bot_refresh_token",
        "user_token",
        "user_refresh_token",
        "incoming_webhook_url",
    ),
    "slack_bots": ("bot_token", "bot_refresh_token"),
}


def _present() -> set[str]:
    return set(sa.inspect(op.get_bind()).get_table_names())


def upgrade() -> None:
    op.create_table(
        "encryption_check",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("set_at", sa.String(40), nullable=False),
    )
    present = _present()
    for table, columns in SECRET_COLUMNS.items():
        if table not in present:
            continue
        for column in columns:
            op.execute(
                f"UPDATE {table} SET {column} = '{LEGACY}' || {column} WHERE {column} IS NOT NULL "
                f"AND {column} <> '' AND {column} NOT LIKE 'rlmap:%'"
            )
    in_clear = "body IS NOT NULL AND body NOT LIKE 'rlmap:%'"
    op.execute(f"UPDATE event_claims SET body = NULL WHERE {in_clear}")


def downgrade() -> None:
    """Back to bare Fernet tokens, which 0009's code reads (values 0009 never sealed stay so)."""
    present = _present()
    for table, columns in SECRET_COLUMNS.items():
        if table not in present:
            continue
        for column in columns:
            for marker in (SEALED, LEGACY):
                op.execute(
                    f"UPDATE {table} SET {column} = substr({column}, {len(marker) + 1}) WHERE "
                    f"{column} LIKE '{marker}%'"
                )
    op.execute("UPDATE event_claims SET body = NULL WHERE body IS NOT NULL")
    op.drop_table("encryption_check")
