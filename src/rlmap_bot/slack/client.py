"""Web API clients that wait out rate limits and connection blips instead of losing calls."""

from __future__ import annotations

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

from rlmap_bot.settings import Settings


def make_client(settings: Settings, token: str | None = None) -> WebClient:
    """A client pointed at ``SLACK_API_URL`` with slack-sdk's 429 and connection retry handlers."""
    if token is None and settings.slack_bot_token is not None:
        token = settings.slack_bot_token.get_secret_value()
    return WebClient(
        token=token,
        base_url=settings.slack_api_url,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=2),
            RateLimitErrorRetryHandler(max_retry_count=settings.rlmap_rate_limit_retries),
        ],
    )
