"""Many workspaces: Bolt's OAuth flow with installations kept in the state database."""

from __future__ import annotations

from typing import Any

from rlmap_bot.settings import Settings


def oauth_setup(settings: Settings, engine: Any) -> tuple[Any, Any]:
    """(installation store, Bolt OAuth settings) on the state database, in slack-sdk's own tables."""
    from slack_bolt.oauth.oauth_settings import OAuthSettings
    from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
    from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

    installations = SQLAlchemyInstallationStore(client_id=settings.slack_client_id, engine=engine)
    installations.create_tables()
    oauth_states = SQLAlchemyOAuthStateStore(expiration_seconds=600, engine=engine)
    oauth_states.metadata.create_all(engine)
    oauth_settings = OAuthSettings(
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret.get_secret_value() if settings.slack_client_secret else None,
        scopes=[s.strip() for s in settings.slack_scopes.split(",") if s.strip()],
        redirect_uri=settings.slack_redirect_uri,
        installation_store=installations,
        state_store=oauth_states,
    )
    return installations, oauth_settings
