"""Slack settings from the environment, checked at start with a clear message.

Secrets are ``SecretStr``: they print as ``**********`` in logs, reprs and
errors, and leave this module only through ``get_secret_value()`` at the point
a client is built.
"""

from __future__ import annotations

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class SettingsError(RuntimeError):
    """The environment cannot run the Slack app; the message says what to set."""


class SlackSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    slack_bot_token: SecretStr | None = Field(default=None, description="Bot token, xoxb-...")
    slack_signing_secret: SecretStr | None = Field(default=None, description="Signing secret (HTTP mode).")
    slack_app_token: SecretStr | None = Field(default=None, description="App-level token, xapp-... (Socket Mode).")
    slack_api_url: str = Field(default="https://slack.com/api/", description="Web API base URL.")
    slack_client_id: str | None = Field(default=None, description="OAuth client id: many workspaces (HTTP mode).")
    slack_client_secret: SecretStr | None = Field(default=None, description="OAuth client secret.")
    slack_scopes: str = Field(
        default="app_mentions:read,chat:write,commands,im:history,channels:history,groups:history,users:read",
        description="Bot scopes requested at install (comma-separated).",
    )
    slack_redirect_uri: str | None = Field(default=None, description="OAuth redirect URL, if not the default.")
    rlmap_admins: str = Field(default="", description="Comma-separated user ids allowed to /rlmap reload.")
    rlmap_rate_limit_retries: int = Field(default=3, ge=0, le=10)

    @field_validator("slack_api_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("SLACK_API_URL must start with http:// or https://")
        return value if value.endswith("/") else value + "/"

    @property
    def oauth(self) -> bool:
        """Many workspaces: installations come from the OAuth flow, not one bot token."""
        return bool(self.slack_client_id)

    @property
    def admins(self) -> set[str]:
        return {a.strip() for a in self.rlmap_admins.split(",") if a.strip()}

    def require(self, http: bool) -> "SlackSettings":
        """Raise :class:`SettingsError` naming every missing variable for this mode."""
        missing = []
        if self.oauth:
            if not http:
                raise SettingsError("the OAuth install flow (SLACK_CLIENT_ID) needs HTTP mode: run `rlmap-bot serve --http`")
            if not self.slack_client_secret:
                missing.append("SLACK_CLIENT_SECRET (Basic Information > App Credentials)")
        elif not self.slack_bot_token:
            missing.append("SLACK_BOT_TOKEN (the bot token, xoxb-...)")
        if http and not self.slack_signing_secret:
            missing.append("SLACK_SIGNING_SECRET (from Basic Information > App Credentials)")
        if not http and not self.slack_app_token:
            missing.append("SLACK_APP_TOKEN (an app-level token with connections:write, xapp-...), or use --http")
        if missing:
            mode = "HTTP" if http else "Socket Mode"
            raise SettingsError(f"cannot start the Slack app in {mode}; set " + "; ".join(missing))
        return self


def load_settings() -> SlackSettings:
    try:
        return SlackSettings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]).upper()
        raise SettingsError(f"{field}: {first['msg']}") from None
