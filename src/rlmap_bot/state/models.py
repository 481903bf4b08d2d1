"""Plain records the state store keeps; no engine details here."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class Session(BaseModel):
    """One guided diagnosis: who runs it, where, and every answer so far."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    team: str = "local"
    channel: str = "local"
    thread_ts: str | None = None
    user: str
    answers: dict[str, Any] = Field(default_factory=dict)
    skipped: list[str] = Field(default_factory=list)
    history: list[str] = Field(default_factory=list, description="Signals answered or skipped, in order.")
    current: str | None = None
    status: Literal["open", "done", "stopped", "expired"] = "open"
    message_ts: str | None = Field(default=None, description="The front-end's card to update in place.")
    version: int = 0
    started_at: dt.datetime = Field(default_factory=_now)
    updated_at: dt.datetime = Field(default_factory=_now)
