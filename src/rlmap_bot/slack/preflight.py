"""Check the Slack side before serving: a missing setting, a token of the wrong kind, a refused
token or an unreachable Slack is one line, not a traceback.

:func:`require` reads the settings alone (what this Slack mode needs, each token's kind); then
Slack itself is asked (:func:`check_bot_token`, :func:`check_app_token`), so a revoked or mistyped
token is named by its setting before anything starts.
"""

from __future__ import annotations

import urllib.error
from urllib.parse import urlsplit

from slack_sdk.errors import SlackApiError

from rlmap_bot.errors import ConfigError
from rlmap_bot.settings import Settings

# What Slack's error codes mean for the person holding the token.
_REFUSED = {
    "invalid_auth": "Slack does not accept it (mistyped, or revoked)",
    "not_authed": "Slack received no token",
    "account_inactive": "its app or workspace is deactivated",
    "token_revoked": "it was revoked",
    "token_expired": "it has expired",
    "not_allowed_token_type": "it is not the kind of token this call needs",
}


def require(settings: Settings, http: bool) -> Settings:
    """Raise :class:`ConfigError` naming every missing variable
    for this Slack mode, or a token of the wrong kind.
    """
    check_token_shapes(settings)
    missing = []
    if settings.oauth:
        if not http:
            raise ConfigError(
                "the OAuth install flow (SLACK_CLIENT_ID) needs HTTP mode: run `rlmap-bot serve "
                "--http`"
            )
        if not settings.slack_client_secret:
            missing.append("SLACK_CLIENT_SECRET (Basic Information > App Credentials)")
        if not settings.rlmap_encryption_key:
            missing.append(
                "RLMAP_ENCRYPTION_KEY (encrypts every workspace's bot token in the state store; "
                "make one with `rlmap-bot key new`)"
            )
    elif not settings.slack_bot_token:
        missing.append("SLACK_BOT_TOKEN (the bot token, xoxb-...)")
    if not settings.oauth and not settings.slack_app_token and not settings.slack_signing_secret:
        # Neither way in is set: name both, Socket Mode first (no public URL needed).
        missing.append(
            "SLACK_APP_TOKEN (an app-level token with connections:write, xapp-...) for Socket "
            "Mode, which needs no public URL, or SLACK_SIGNING_SECRET (Basic Information > App "
            "Credentials) for HTTP mode with `rlmap-bot serve --http`"
        )
    elif http and not settings.slack_signing_secret:
        missing.append("SLACK_SIGNING_SECRET (from Basic Information > App Credentials)")
    elif not http and not settings.slack_app_token:
        missing.append(
            "SLACK_APP_TOKEN (an app-level token with connections:write, xapp-...), or use --http"
        )
    if missing:
        mode = "HTTP" if http else "Socket Mode"
        if (
            not settings.oauth
            and not settings.slack_app_token
            and not settings.slack_signing_secret
        ):
            mode = "Socket Mode or HTTP"
        raise ConfigError(f"cannot start the Slack app in {mode}; set " + "; ".join(missing))
    return settings


def check_token_shapes(settings: Settings) -> None:
    """A token of the wrong kind is named before any
    connection (Slack would answer not_allowed_token_type).
    """
    for name, value, prefix, what in (
        (
            "SLACK_BOT_TOKEN",
            settings.slack_bot_token,
            "xoxb-",
            "a bot token (OAuth & Permissions > Bot User OAuth Token)",
        ),
        (
            "SLACK_APP_TOKEN",
            settings.slack_app_token,
            "xapp-",
            "an app-level token (Basic Information > App-Level Tokens)",
        ),
    ):
        if value is None or value.get_secret_value().startswith(prefix):
            continue
        token = value.get_secret_value()
        # Only the kind is shown, never the token: every Slack token starts with one of these.
        kind = next((k for k in ("xoxb-", "xapp-", "xoxp-", "xoxe-") if token.startswith(k)), None)
        found = f"this one starts with {kind}" if kind else f"this one does not start with {prefix}"
        raise ConfigError(f"{name} must be {what}, starting {prefix}; {found}")


def unreachable(settings: Settings, exc: BaseException) -> ConfigError:
    """Slack's Web API could not be reached: name the URL setting and the host."""
    reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
    host = urlsplit(settings.slack_api_url).netloc
    return ConfigError(
        f"could not reach Slack at {host} (SLACK_API_URL={settings.slack_api_url}): {reason}; "
        "check the network, a proxy, or SLACK_API_URL"
    )


def refused(setting: str, exc: SlackApiError, fix: str) -> ConfigError:
    code = str(exc.response.get("error") or "unknown_error")
    return ConfigError(
        f"{setting}: Slack refused the token ({code}: "
        f"{_REFUSED.get(code, 'see the Slack API docs')}); {fix}"
    )


def check_bot_token(settings: Settings, client) -> None:
    """auth.test with the bot token (one bot token only: OAuth installs bring their own)."""
    if settings.oauth:
        return
    try:
        client.auth_test()
    except SlackApiError as exc:
        raise refused(
            "SLACK_BOT_TOKEN",
            exc,
            "copy the Bot User OAuth Token (xoxb-...) again from OAuth & Permissions, reinstalling "
            "the app if it was revoked",
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise unreachable(settings, exc) from None


def check_app_token(settings: Settings, client) -> None:
    """apps.connections.open with the app-level token, before anything starts (Socket Mode only).

    Asking first keeps slack-sdk from logging its own error and traceback for a refused token; the
    URL this call returns is simply not used (Slack's are single-use and expire).
    """
    assert settings.slack_app_token is not None, "require(settings, http=False) checked it"
    try:
        client.apps_connections_open(app_token=settings.slack_app_token.get_secret_value())
    except SlackApiError as exc:
        raise refused(
            "SLACK_APP_TOKEN",
            exc,
            "make an app-level token with connections:write (xapp-...) under Basic Information > "
            "App-Level Tokens",
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise unreachable(settings, exc) from None
