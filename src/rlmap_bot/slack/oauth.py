"""Many workspaces: Bolt's OAuth flow with installations
kept in the state database, tokens sealed.

slack-sdk's SQLAlchemy installation store keeps every workspace's bot token in
its tables; :class:`EncryptedInstallationStore` seals the secret columns on
the way in and opens them on the way out (Fernet, marked, see :mod:`rlmap_bot.crypto`),
so the database, its backups and its replicas never hold a usable token. A token that
does not open (or is not sealed) is that workspace's problem: logged once, naming the
workspace, and the workspace is treated as not installed, so Bolt asks for a reinstall;
the other workspaces go on. At start, :mod:`rlmap_bot.slack.sealing` seals every
stored token again under the first key, and stops on a key that opens nothing.

While the state store does not answer, a workspace this replica has served keeps
its last-read installation (kept in memory, dropped when the workspace
uninstalls), so Bolt can still authorize its requests: a click or command then
gets its ack and "briefly unavailable" rather than an HTTP 500.
"""

from __future__ import annotations

import copy
import logging
import threading
from typing import Any

import sqlalchemy as sa
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

from rlmap_bot.crypto import Secret, TokenCipher, UnopenedError
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
#: What each secret column holds, as a message names it.
KINDS = {
    "bot_token": "Slack bot token",
    "bot_refresh_token": "Slack bot refresh token",
    "user_token": "Slack user token",
    "user_refresh_token": "Slack user refresh token",
    "incoming_webhook_url": "Slack incoming-webhook URL",
}
REINSTALL = "reinstall the app in that workspace (from /slack/install)"


def secret(column: str, team: str | None) -> Secret:
    return Secret(KINDS[column], team or "(none)", REINSTALL)


class EncryptedInstallationStore(SQLAlchemyInstallationStore):
    """slack-sdk's store, with the secret columns
    encrypted (and TEXT, as a Fernet token is longer).
    """

    def __init__(self, client_id: str, engine: sa.Engine, cipher: TokenCipher):
        super().__init__(client_id=client_id, engine=engine)
        self.cipher = cipher
        self._sealed_here = threading.local()  # save() is sealing: its save_bot call is sealed
        self._reported: set[tuple] = set()  # (team, column) whose token did not open, logged once
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
        # slack-sdk saves the bot too, through save_bot below, with the tokens sealed here: the
        # flag tells save_bot not to seal them twice (sealing marks every value, whatever it is).
        self._sealed_here.active = True
        try:
            super().save(sealed)
        finally:
            self._sealed_here.active = False

    def save_bot(self, bot: Bot) -> None:
        if getattr(self._sealed_here, "active", False):
            super().save_bot(bot)
            return
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
        if bot is not None and not self._open(bot, BOT_SECRETS, team_id or enterprise_id):
            bot = None
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
        if found is not None and not self._open(
            found, INSTALLATION_SECRETS, team_id or enterprise_id
        ):
            found = None
        self._last[key] = copy.copy(found)
        return found

    def _open(self, found: Any, columns: tuple[str, ...], team: str | None) -> bool:
        """Open ``found``'s secrets in place; False (logged once) when one does not open."""
        for name in columns:
            try:
                setattr(found, name, self.cipher.open(getattr(found, name), secret(name, team)))
            except UnopenedError as exc:
                if (team, name) not in self._reported:
                    self._reported.add((team, name))
                    log.error("%s; until then it is answered as a workspace not installed", exc)
                return False
        return True

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

    # -- at start (slack/sealing.py) --------------------------------------------------------------
    def stored(self) -> list[tuple[Secret, str, tuple[str, Any, str]]]:
        """Every stored secret as it is: (what it is, the value, (table, row id, column))."""
        found = []
        with self.engine.connect() as conn:
            for table, columns in (
                (self.installations, INSTALLATION_SECRETS),
                (self.bots, BOT_SECRETS),
            ):
                wanted = [table.c.id, table.c.team_id, table.c.enterprise_id]
                rows = conn.execute(sa.select(*wanted, *(table.c[c] for c in columns))).mappings()
                for row in rows:
                    team = row["team_id"] or row["enterprise_id"]
                    found += [
                        (secret(c, team), row[c], (table.name, row["id"], c))
                        for c in columns
                        if row[c]
                    ]
        return found

    def replace(self, where: tuple[str, Any, str], old: str, new: str) -> bool:
        """Write ``new`` where the value is still ``old``."""
        name, row_id, column = where
        table = self.installations if name == self.installations.name else self.bots
        with self.engine.begin() as conn:
            done = conn.execute(
                table.update()
                .where(table.c.id == row_id, table.c[column] == old)
                .values({column: new})
            )
            return done.rowcount == 1


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
