"""A workspace's tracker credentials (a W&B API key, an MLflow token), sealed at rest.

Values are sealed with the same Fernet keys as the Slack tokens (``RLMAP_ENCRYPTION_KEY``,
:class:`~rlmap_bot.crypto.TokenCipher`): the repository takes the cipher, seals on the way in
and opens on the way out, so a plain value never reaches the database, and every read is keyed
by the workspace, so one workspace never reads another's. A value that does not open is that
workspace's (an :class:`~rlmap_bot.crypto.UnopenedError` naming the tracker and the workspace),
never the others'. Nothing here logs a value.

The key check (``encryption_check``) lives here too: one value every start keeps sealed under the
first key, which tells a wrong key from a workspace's bad value (see
:mod:`rlmap_bot.slack.sealing`).
"""

from __future__ import annotations

import sqlalchemy as sa

from rlmap_bot.crypto import Secret, TokenCipher, UnopenedError
from rlmap_bot.state.db import insert_ignoring_duplicates, iso, utcnow
from rlmap_bot.state.tables import encryption_check
from rlmap_bot.state.tables import workspace_credentials as table

#: What each stored name is, as a message names it, and the tracker word of its command.
KINDS = {
    "WANDB_API_KEY": ("W&B API key", "wandb"),
    "MLFLOW_TRACKING_TOKEN": ("MLflow token", "mlflow"),
}
CHECK = "RLMAP_ENCRYPTION_KEY"  # the key check's one row


def secret(team: str, name: str) -> Secret:
    """What a stored credential is called in messages, with what fixes it."""
    kind, tracker = KINDS.get(name, (name, ""))
    return Secret(
        kind,
        team,
        f"an admin of that workspace sets it again (`/rlmap credentials set {tracker or 'TRACKER'} "
        f"KEY`)",
    )


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

    def open_all(
        self, team: str, cipher: TokenCipher
    ) -> tuple[dict[str, str], dict[str, UnopenedError]]:
        """(the workspace's credentials that open, the ones that do not, by name)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(table.c.name, table.c.value).where(table.c.team == team)
            ).all()
        values: dict[str, str] = {}
        unopened: dict[str, UnopenedError] = {}
        for name, value in rows:
            try:
                opened = cipher.open(str(value), secret(team, str(name)))
            except UnopenedError as exc:
                unopened[str(name)] = exc
                continue
            if opened:
                values[str(name)] = opened
        return values, unopened

    def opened(self, team: str, cipher: TokenCipher) -> dict[str, str]:
        """The workspace's credentials that open (see :meth:`open_all` for the others)."""
        return self.open_all(team, cipher)[0]

    # -- at start (slack/sealing.py) --------------------------------------------------------------
    def stored(self) -> list[tuple[Secret, str, tuple[str, str]]]:
        """Every stored value, sealed as it is: (what it is, the value, its row's key)."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(table.c.team, table.c.name, table.c.value)).all()
        return [
            (secret(str(team), str(name)), str(value), (str(team), str(name)))
            for team, name, value in rows
        ]

    def replace(self, row: tuple[str, str], old: str, new: str) -> bool:
        """Write ``new`` where the value is still ``old`` (an admin may have set it meanwhile)."""
        team, name = row
        c = table.c
        with self.engine.begin() as conn:
            return (
                conn.execute(
                    table.update()
                    .where(c.team == team, c.name == name, c.value == old)
                    .values(value=new)
                ).rowcount
                == 1
            )

    def key_check(self) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(encryption_check.c.value).where(encryption_check.c.name == CHECK)
            ).scalar()

    def set_key_check(self, value: str) -> None:
        """Store the key check (replicas starting together: the last one's stays, all open)."""
        row = dict(value=value, set_at=iso(utcnow()))
        with self.engine.begin() as conn:
            done = conn.execute(
                encryption_check.update().where(encryption_check.c.name == CHECK).values(**row)
            ).rowcount
            if not done:
                conn.execute(
                    insert_ignoring_duplicates(self.engine, encryption_check).values(
                        name=CHECK, **row
                    )
                )
