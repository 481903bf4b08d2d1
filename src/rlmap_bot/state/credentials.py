"""A workspace's tracker credentials (a W&B API key, an MLflow token), sealed at rest.

Values are sealed with the same Fernet keys as the Slack tokens (``RLMAP_ENCRYPTION_KEY``,
:class:`~rlmap_bot.crypto.TokenCipher`): the repository takes the cipher, seals on the way in
and opens on the way out, so a plain value never reaches the database, and every read is keyed
by the workspace, so one workspace never reads another's. Nothing here logs a value.
"""

from __future__ import annotations

import sqlalchemy as sa

from rlmap_bot.crypto import TokenCipher
from rlmap_bot.state.db import iso, utcnow
from rlmap_bot.state.tables import workspace_credentials as table


class CredentialRepository:
    def __init__(self, engine: sa.Engine):
        self.engine = engine

    def set(self, team: str, name: str, value: str, cipher: TokenCipher, by: str) -> None:
        sealed = cipher.seal(value)
        with self.engine.begin() as conn:
            conn.execute(table.delete().where(table.c.team == team, table.c.name == name))
            conn.execute(
                table.insert().values(
                    team=team, name=name, value=sealed, set_by=by, set_at=iso(utcnow())
                )
            )

    def clear(self, team: str, name: str) -> bool:
        with self.engine.begin() as conn:
            return (
                conn.execute(
                    table.delete().where(table.c.team == team, table.c.name == name)
                ).rowcount
                > 0
            )

    def names(self, team: str) -> list[tuple[str, str, str]]:
        """(name, set_by, set_at) of each credential the workspace has; never the values."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(table.c.name, table.c.set_by, table.c.set_at)
                .where(table.c.team == team)
                .order_by(table.c.name)
            )
            return [(r[0], r[1], r[2]) for r in rows]

    def opened(self, team: str, cipher: TokenCipher) -> dict[str, str]:
        """The workspace's credentials, unsealed (WrongKeyError, one line, when no key fits)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(table.c.name, table.c.value).where(table.c.team == team)
            ).all()
        return {
            str(name): opened
            for name, value in rows
            if (opened := cipher.open(str(value))) is not None
        }

    def reseal(self, cipher: TokenCipher) -> int:
        """Seal every stored value under the first key
        (after a rotation); returns how many changed.
        """
        changed = 0
        with self.engine.begin() as conn:
            for team, name, value in conn.execute(
                sa.select(table.c.team, table.c.name, table.c.value)
            ).all():
                fresh = cipher.reseal(str(value))
                if fresh is not None:
                    conn.execute(
                        table.update()
                        .where(table.c.team == team, table.c.name == name)
                        .values(value=fresh)
                    )
                    changed += 1
        return changed
