"""What a watch is and what a check returns: plain pydantic models, no engine, no Slack.

A :class:`Watch` is what a person asked for (a path in a channel, how often, quiet
or not); the state store keeps it in ``watches`` (it and :class:`Tracking` are defined
with the other stored records in :mod:`rlmap_bot.state.models`, below this layer).  What checking has learnt so far
(where the reader stopped, the open conditions, the last verdict) is a
:class:`Tracking` kept beside it in ``watch_state`` with the bounded series
(:mod:`rlmap_bot.watch.series`).  A check returns a :class:`CheckResult` listing
the :class:`Alert` posts it made or would make.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import BaseModel, Field

# The records the state store keeps live with it (the state layer is below watching); named here too.
from rlmap_bot.state.models import ConditionState, Tracking, VerdictSummary, Watch

__all__ = ["Alert", "CheckResult", "ConditionState", "DEFAULT_INTERVAL", "EvidenceLine", "MAX_INTERVAL",
           "MIN_INTERVAL", "Tracking", "VerdictSummary", "Watch", "WatchList", "WatchNow", "WatchRow",
           "format_interval", "parse_interval"]


class EvidenceLine(BaseModel):
    """One fired rule behind a verdict, with where each value came from in the logs."""

    stage: str
    points: float
    signals: dict[str, str]
    why: str
    source: str = Field(description="The catalog paper the rule rests on.")
    provenance: list[str] = Field(default_factory=list, description="metric, window and reading per signal")


class Alert(BaseModel):
    """One post: an alert (conditions raised), a resolved note, or a notice that the watch paused."""

    alert_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    watch_id: str
    kind: Literal["alert", "resolved", "paused"]
    conditions: list[str] = Field(description="Condition keys this post announces or resolves.")
    episodes: dict[str, int] = Field(default_factory=dict)
    title: str
    changes: list[str] = Field(default_factory=list, description="What changed, one sentence each.")
    path: str
    steps: str = ""
    binding_stage: str | None = None
    binding_title: str | None = None
    verdict_headline: str | None = None
    ranking: list[tuple[str, float]] = Field(default_factory=list, description="(stage title, points), top first")
    evidence: list[EvidenceLine] = Field(default_factory=list)
    faults: list[str] = Field(default_factory=list, description="The fault findings, with steps and metrics.")
    next_checks: list[str] = Field(default_factory=list)
    reply_to: str | None = Field(None, description="The alert a resolved note answers (its message ts).")
    posted_ts: str | None = None
    chart: bool = Field(False, description="A chart goes with it.")

    @property
    def condition(self) -> str:
        return self.conditions[0] if self.conditions else ""


class CheckResult(BaseModel):
    """What one check read, concluded and posted (or, with --once, would post)."""

    watch_id: str
    path: str
    status: Literal["checked", "unchanged", "paused", "busy", "duplicate", "problem"]
    problem: str | None = None
    format: str | None = None
    mode: str | None = None
    steps: int = 0
    first_step: int | None = None
    last_step: int | None = None
    new_steps: int = 0
    bytes_read: int = 0
    verdict: VerdictSummary | None = None
    open_conditions: list[str] = Field(default_factory=list)
    alerts: list[Alert] = Field(default_factory=list, description="Posted (or, dry, that would be posted).")
    withheld: list[str] = Field(default_factory=list, description="Conditions a quiet watch tracks without posting.")
    dry: bool = False


class WatchRow(BaseModel):
    """A watch as `watch list` and App Home show it."""

    id: str
    channel: str
    path: str
    every: str
    quiet: bool
    status: str
    paused_reason: str | None = None
    last_check_at: dt.datetime | None = None
    last_verdict: str | None = None
    open_conditions: list[str] = Field(default_factory=list)


class WatchList(BaseModel):
    watches: list[WatchRow]
    scope: str = "this channel"
    note: str | None = None


class WatchNow(BaseModel):
    """`watch now`: every watch of the channel checked at once."""

    results: list[CheckResult]


def format_interval(minutes: int) -> str:
    hours, mins = divmod(int(minutes), 60)
    if hours and mins:
        return f"{hours}h{mins:02d}m"
    if hours:
        return f"{hours} hour{'s' if hours != 1 else ''}"
    return f"{mins} minute{'s' if mins != 1 else ''}"


#: The shortest interval.  RL steps take seconds to minutes and the verdict judges windows of
#: many steps, so checking more often than every 5 minutes reads a handful of new steps and can
#: only repeat the last verdict, while every check still derives every signal.
MIN_INTERVAL = 5
#: The longest: a run checked less than daily is better served by `diagnose --run` by hand.
MAX_INTERVAL = 24 * 60
DEFAULT_INTERVAL = 15

_UNITS = {"m": 1, "min": 1, "mins": 1, "minute": 1, "minutes": 1, "h": 60, "hr": 60, "hrs": 60, "hour": 60,
          "hours": 60, "d": 1440, "day": 1440, "days": 1440}


def parse_interval(text: str) -> int:
    """'15m', '1h', '2h30m', '90' (minutes) -> minutes; UsageError for anything else or out of bounds."""
    import re

    from rlmap_bot.errors import UsageError

    raw = str(text).strip().lower()
    parts = re.findall(r"(\d+)\s*([a-z]*)", raw)
    if not parts or re.sub(r"(\d+)\s*([a-z]*)", "", raw).strip():
        raise UsageError(f"`every` takes a duration such as 15m, 1h or 2h30m, not {text!r}")
    minutes = 0
    for number, unit in parts:
        factor = _UNITS.get(unit or "m")
        if factor is None:
            raise UsageError(f"`every` takes a duration such as 15m, 1h or 2h30m, not {text!r}")
        minutes += int(number) * factor
    if not MIN_INTERVAL <= minutes <= MAX_INTERVAL:
        raise UsageError(f"`every` must be from {MIN_INTERVAL} minutes to {MAX_INTERVAL // 60} hours, "
                         f"not {format_interval(minutes)}")
    return minutes
