"""Plain records the state store keeps; no engine details here."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from rlmap_bot.errors import RlmapError
from rlmap_bot.results.scaling import AtStep
from rlmap_bot.results.watch import VerdictSummary  # a check's result, kept with its watch


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


_now = utcnow


class ConflictError(RlmapError):
    """Someone else changed the row first (a double click, another replica)."""


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
    filters: list[str] = Field(
        default_factory=list, description="'stage:ID' or 'topic:ID' entries."
    )
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
        base = (
            f"daily at {self.time}"
            if self.frequency == "daily"
            else f"every {self.day.capitalize()} at {self.time}"
        )
        return f"{base} ({self.timezone})"


# -- watches: what a person asked to watch, and what
#  checking has learnt (kept by state/watches.py) --
class Watch(BaseModel):
    """One path watched in one channel."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    team: str
    channel: str
    path: str = Field(description="The resolved path, under one of RLMAP_RUN_ROOTS.")
    interval_minutes: int = 15
    quiet: bool = Field(
        False, description="Post only faults (NaN/inf, divergence), not stage changes."
    )
    status: Literal["active", "paused"] = "active"
    paused_reason: str | None = None
    created_by: str = ""
    created_at: dt.datetime = Field(default_factory=_now)
    updated_at: dt.datetime = Field(default_factory=_now)

    @property
    def short_id(self) -> str:
        return self.id[:8]

    @property
    def interval(self) -> dt.timedelta:
        return dt.timedelta(minutes=self.interval_minutes)


class ConditionState(BaseModel):
    """An open condition: a stage that binds, or a fault, from the check that saw it first."""

    key: str = Field(description="'binds:STAGE', 'fault:nan' or 'fault:divergence'")
    episode: int = Field(
        description="How many times this condition has opened on this watch, this time included."
    )
    since: dt.datetime
    since_step: int | None = None
    announced: bool = Field(
        False, description="Its alert was posted (or claimed by a check that posts it)."
    )
    alert_ts: str | None = Field(
        None, description="The alert's message, for threading the resolved note."
    )
    misses: int = Field(0, description="Checks in a row with new steps where it no longer held.")
    detail: dict[str, Any] = Field(default_factory=dict)


class Tracking(BaseModel):
    """What checking has learnt about a watched run; stored as JSON between checks."""

    mode: Literal["lines", "whole", "source"] | None = Field(
        None,
        description=(
            "'source': read through the run source's read_new; 'lines' and 'whole': a watch stored "
            "before, carried on from its reader's position"
        ),
    )
    source: str | None = Field(None, description="The file read (the chosen log, for a folder).")
    reader: dict[str, Any] | None = Field(
        None, description="a line reader's ReaderState, kept by watches stored before 'source'"
    )
    signature: str | None = Field(None, description="whole mode: size and mtime of what was read")
    cursor: dict[str, Any] | None = Field(
        None, description="where the run source's next read starts (its Cursor as JSON)"
    )
    unreadable: int = Field(
        0, description="times the source could not be read (numbers those notices)"
    )
    unreadable_since: dt.datetime | None = Field(
        None, description="when the source stopped being readable"
    )
    faults: dict[str, Any] = Field(
        default_factory=dict, description="the full-resolution fault scan's state"
    )
    conditions: dict[str, ConditionState] = Field(default_factory=dict)
    episodes: dict[str, int] = Field(
        default_factory=dict, description="condition key -> episodes opened so far"
    )
    pauses: int = Field(0, description="times the watch paused itself (numbers its notices)")
    checks: int = 0
    last_check_at: dt.datetime | None = None
    last_growth_at: dt.datetime | None = None
    last_verdict: VerdictSummary | None = None
    reached_since: int | None = Field(
        None,
        description="the step from which every check's forecast has said the run reached its "
        "ceiling (watch/stopping.py says so once it still holds 10% more steps on)",
    )
    ceiling_peak: AtStep | None = Field(
        None,
        description="the best-established ceiling the run's forecast gave so far (the highest "
        "low end of its 80% interval), and at which step (a sharp fall below it is said once: "
        "watch/stopping.py)",
    )
    bytes_read: int = Field(0, description="bytes read from the log over every check")
