"""Check the Slack side before serving: a refused token
or an unreachable Slack is one line, not a traceback.

Token shapes are checked earlier, in :meth:`~rlmap_bot.settings.Settings.require_slack`; here Slack
itself is asked, so a revoked or mistyped token is named by its setting before anything starts.
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
            "copy the Bot User OAuth Token (xoxb-...) again from OAuth & "
            "Permissions, reinstalling the app if it was revoked",
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise unreachable(settings, exc) from None


def check_app_token(settings: Settings, client) -> None:
    """apps.connections.open with the app-level token, before anything starts (Socket Mode only).

    Asking first keeps slack-sdk from logging its own error and traceback for a refused token; the
    URL this call returns is simply not used (Slack's are single-use and expire).
    """
    assert settings.slack_app_token is not None, "require_slack(http=False) checked it"
    try:
        client.apps_connections_open(app_token=settings.slack_app_token.get_secret_value())
    except SlackApiError as exc:
        raise refused(
            "SLACK_APP_TOKEN",
            exc,
            "make an app-level token with connections:write (xapp-...) under "
            "Basic Information > App-Level Tokens",
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise unreachable(settings, exc) from None
