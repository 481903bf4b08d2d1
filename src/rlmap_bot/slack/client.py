"""Web API clients that wait out rate limits and connection blips instead of losing calls."""

from __future__ import annotations

from typing import Any

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)

from rlmap_bot import metrics
from rlmap_bot.settings import Settings


class CountingRateLimitHandler(RateLimitErrorRetryHandler):
    """slack-sdk's 429 handler (waits ``Retry-After``), counting every 429 per Web API method."""

    def can_retry(
        self, *, state: Any, request: Any, response: Any = None, error: Any = None
    ) -> bool:
        if response is not None and response.status_code == 429:
            method = (
                str(getattr(request, "url", "")).rstrip("/").rsplit("/", 1)[-1].split("?")[0]
                or "unknown"
            )
            metrics.RATE_LIMITED.labels(method).inc()
        return super().can_retry(state=state, request=request, response=response, error=error)


def make_client(settings: Settings, token: str | None = None) -> WebClient:
    """A client pointed at ``SLACK_API_URL`` with slack-sdk's 429 and connection retry handlers."""
    if token is None and settings.slack_bot_token is not None:
        token = settings.slack_bot_token.get_secret_value()
    return WebClient(
        token=token,
        base_url=settings.slack_api_url,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=2),
            CountingRateLimitHandler(max_retry_count=settings.rlmap_rate_limit_retries),
        ],
    )
