"""Many workspaces: Bolt's OAuth flow with installations
kept in the state database, tokens encrypted.

slack-sdk's SQLAlchemy installation store keeps every workspace's bot token in
its tables; :class:`EncryptedInstallationStore` encrypts the secret columns on
the way in and decrypts them on the way out (Fernet, see :mod:`rlmap_bot.crypto`),
so the database, its backups and its replicas never hold a usable token. At
start, tokens stored in plain text (before encryption) or under an older key are
re-encrypted under the first key, and a key that opens none of them stops the
bot with one line.

While the state store does not answer, a workspace this replica has served keeps
its last-read installation (kept in memory, dropped when the workspace
uninstalls), so Bolt can still authorize its requests: a click or command then
gets its ack and "briefly unavailable" rather than an HTTP 500.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import sqlalchemy as sa
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

from rlmap_bot.crypto import TokenCipher
from rlmap_bot.errors import ConfigError, UnavailableError
from rlmap_bot.settings import Settings

log = logging.getLogger(__name__)

# The secret columns of slack-sdk's tables (the same list as migration 0004).
INSTALLATION_SECRETS = (
    "bot_token",
    "bot_refresh_token",
    "user_token",
    "user_refresh_token",
    "incoming_webhook_url",
)
BOT_SECRETS = ("bot_token", "bot_refresh_token")


class EncryptedInstallationStore(SQLAlchemyInstallationStore):
    """slack-sdk's store, with the secret columns
    encrypted (and TEXT, as a Fernet token is longer).
    """

    def __init__(self, client_id: str, engine: sa.Engine, cipher: TokenCipher):
        super().__init__(client_id=client_id, engine=engine)
        self.cipher = cipher
        self._last: dict[
            tuple, Any
        ] = {}  # what each look-up last found, for when the store does not answer
        for table, columns in (
            (self.installations, INSTALLATION_SECRETS),
            (self.bots, BOT_SECRETS),
        ):
            for column in columns:
                table.c[column].type = sa.Text()

    # -- writing ----------------------------------------------------------------------------------
    def save(self, installation: Installation) -> None:
        sealed = copy.copy(installation)
        for name in INSTALLATION_SECRETS:
            setattr(sealed, name, self.cipher.seal(getattr(installation, name)))
        super().save(
            sealed
        )  # which saves the bot too, through save_bot below (already sealed: kept)

    def save_bot(self, bot: Bot) -> None:
        sealed = copy.copy(bot)
        for name in BOT_SECRETS:
            setattr(sealed, name, self.cipher.seal(getattr(bot, name)))
        super().save_bot(sealed)

    # -- reading ----------------------------------------------------------------------------------
    def find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        key = ("bot", enterprise_id, team_id, is_enterprise_install)
        try:
            bot = super().find_bot(
                enterprise_id=enterprise_id,
                team_id=team_id,
                is_enterprise_install=is_enterprise_install,
            )
        except UnavailableError:
            if key in self._last:
                return copy.copy(self._last[key])
            raise
        if bot is not None:
            for name in BOT_SECRETS:
                setattr(bot, name, self.cipher.open(getattr(bot, name)))
        self._last[key] = copy.copy(bot)
        return bot

    def find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        key = ("installation", enterprise_id, team_id, user_id, is_enterprise_install)
        try:
            found = super().find_installation(
                enterprise_id=enterprise_id,
                team_id=team_id,
                user_id=user_id,
                is_enterprise_install=is_enterprise_install,
            )
        except UnavailableError:
            if key in self._last:
                return copy.copy(self._last[key])
            raise
        if found is not None:
            for name in INSTALLATION_SECRETS:
                setattr(found, name, self.cipher.open(getattr(found, name)))
        self._last[key] = copy.copy(found)
        return found

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self._forget(enterprise_id, team_id)
        super().delete_bot(enterprise_id=enterprise_id, team_id=team_id)

    def delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        self._forget(enterprise_id, team_id)
        super().delete_installation(enterprise_id=enterprise_id, team_id=team_id, user_id=user_id)

    def _forget(self, enterprise_id: str | None, team_id: str | None) -> None:
        for key in [k for k in self._last if k[1] == enterprise_id and k[2] == team_id]:
            self._last.pop(key, None)

    # -- at start ---------------------------------------------------------------------------------
    def reseal_all(self) -> int:
        """Encrypt plain tokens and re-encrypt those under
        an older key; return how many rows changed.

        Raises :class:`~rlmap_bot.crypto.WrongKeyError` (one line) when a stored token opens with
        no configured key.
        """
        changed = 0
        with self.engine.begin() as conn:
            for table, columns in (
                (self.installations, INSTALLATION_SECRETS),
                (self.bots, BOT_SECRETS),
            ):
                rows = (
                    conn.execute(sa.select(table.c.id, *(table.c[c] for c in columns)))
                    .mappings()
                    .all()
                )
                for row in rows:
                    update = {
                        c: new for c in columns if (new := self.cipher.reseal(row[c])) is not None
                    }
                    if update:
                        conn.execute(table.update().where(table.c.id == row["id"]).values(**update))
                        changed += 1
        return changed


def oauth_setup(settings: Settings, engine: Any) -> tuple[Any, Any]:
    """(installation store, Bolt OAuth settings) on
    the state database, in slack-sdk's own tables.
    """
    from slack_bolt.oauth.oauth_settings import OAuthSettings
    from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

    client_id = settings.slack_client_id
    assert client_id, "called only in OAuth mode, which SLACK_CLIENT_ID turns on (Settings.oauth)"
    if settings.rlmap_encryption_key is None:
        raise ConfigError(
            "RLMAP_ENCRYPTION_KEY is needed with SLACK_CLIENT_ID: every workspace's bot token is "
            "stored encrypted; make a key with `rlmap-bot key new`"
        )
    cipher = TokenCipher.from_setting(settings.rlmap_encryption_key.get_secret_value())
    installations = EncryptedInstallationStore(client_id=client_id, engine=engine, cipher=cipher)
    installations.create_tables()
    resealed = installations.reseal_all()
    if resealed:
        log.info(
            "encrypted %d stored installation(s) under the first RLMAP_ENCRYPTION_KEY", resealed
        )
    oauth_states = SQLAlchemyOAuthStateStore(expiration_seconds=600, engine=engine)
    oauth_states.metadata.create_all(engine)
    oauth_settings = OAuthSettings(
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret.get_secret_value()
        if settings.slack_client_secret
        else None,
        scopes=[s.strip() for s in settings.slack_scopes.split(",") if s.strip()],
        redirect_uri=settings.slack_redirect_uri,
        installation_store=installations,
        state_store=oauth_states,
    )
    return installations, oauth_settings
