"""Plain records the state store keeps; no engine details here."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from rlmap_bot.errors import RlmapError


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


_now = utcnow


class ConflictError(RlmapError):
    """Someone else changed the row first (a double click, another replica)."""


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
    moves: list[str] = Field(default_factory=list, description="Keys of the latest moves applied (a typed reply's "
                             "message), so a move handled again after a crash is not applied twice.")
    version: int = 0
    started_at: dt.datetime = Field(default_factory=_now)
    updated_at: dt.datetime = Field(default_factory=_now)


Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


class Subscription(BaseModel):
    """A channel's digest subscription: when, in which timezone, filtered how."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    team: str
    channel: str
    frequency: Literal["weekly", "daily"] = "weekly"
    day: Weekday = "mon"
    time: str = Field(default="09:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    timezone: str = "UTC"
    filters: list[str] = Field(default_factory=list, description="'stage:ID' or 'topic:ID' entries.")
    on_empty: Literal["skip", "note"] = "skip"
    created_by: str = ""
    created_at: dt.datetime = Field(default_factory=_now)
    last_run_at: dt.datetime | None = None

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {value!r}") from None
        return value

    @property
    def when(self) -> str:
        base = f"daily at {self.time}" if self.frequency == "daily" else f"every {self.day.capitalize()} at {self.time}"
        return f"{base} ({self.timezone})"
