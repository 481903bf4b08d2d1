"""What watching a run tells: alerts, a check's outcome, the watch list."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)


class VerdictSummary(BaseModel):
    """The last check's verdict in one line, for `watch list` and App Home."""

    headline: str
    binding_stage: str | None = None
    binding_title: str | None = None
    confidence: float = 0.0


class EvidenceLine(BaseModel):
    """One fired rule behind a verdict, with where each value came from in the logs."""

    stage: str
    points: float
    signals: dict[str, str]
    why: str
    source: str = Field(description="The catalog paper the rule rests on.")
    provenance: list[str] = Field(
        default_factory=list, description="metric, window and reading per signal"
    )


class FaultFinding(BaseModel):
    """A fault the watch's scan found, as its fields; ``wording.fault_sentence`` says it."""

    name: str = Field(description="nan, divergence, not_learning, shift (the scan's names).")
    active: bool = True
    first_step: int | None = None
    last_step: int | None = Field(None, description="nan: the last bad step; a stall: its end.")
    step: int | None = Field(None, description="divergence: where the loss jumped.")
    metrics: list[str] = Field(default_factory=list)
    bad_steps: int = 0
    baseline: float | None = None
    sigma: float | None = None
    level: float | None = Field(None, description="divergence: the recent median.")
    held: int | None = Field(None, description="divergence: the steps a jump holds for.")
    window: int | None = Field(
        None, description="nan: finite steps that clear it; divergence: the median's window."
    )
    stall: str | None = Field(None, description="not_learning: how it stalls, in words.")
    details: list[str] = Field(
        default_factory=list, description="shift: the shift scan's findings, one each."
    )
    cleared_step: int | None = None


class Change(BaseModel):
    """One thing a watch post tells, as data; ``wording.alert_title`` / ``wording.alert_changes``
    word it the same for Slack and the terminal.

    start/tie: a stage (or tied stages) began to bind; change/change_tie: the binding stage moved
    from ``previous``; fault: a fault opened; summary: the verdict's own summary of a tie;
    no_longer/no_longer_tie: a stage condition cleared after ``checks`` checks; fault_over: a fault
    ended; paused: the watch paused (``reason``, ``message``); unreadable/readable: its source
    cannot be read now, or is read again.
    """

    kind: Literal[
        "start",
        "tie",
        "change",
        "change_tie",
        "fault",
        "summary",
        "no_longer",
        "no_longer_tie",
        "fault_over",
        "paused",
        "unreadable",
        "readable",
    ]
    stage: str | None = Field(None, description="The stage's title, or tied ones' (A and B).")
    previous: str | None = Field(None, description="change: the stage that bound before.")
    step: int | None = Field(None, description="The last step the check read.")
    confidence: float | None = None
    fault: FaultFinding | None = None
    transient: bool = Field(False, description="fault: already over when it was found.")
    checks: int | None = Field(None, description="no_longer: checks in a row that cleared it.")
    reason: str | None = Field(None, description="paused: stalled, gone or outside.")
    message: str | None = Field(
        None, description="summary: the verdict's; paused/unreadable: what the read said."
    )


class Alert(BaseModel):
    """One post: an alert (conditions raised), a
    resolved note, or a notice that the watch paused.
    """

    alert_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    watch_id: str
    kind: Literal["alert", "resolved", "paused"]
    conditions: list[str] = Field(description="Condition keys this post announces or resolves.")
    episodes: dict[str, int] = Field(default_factory=dict)
    changes: list[Change] = Field(default_factory=list, description="What changed, one each.")
    path: str
    steps: str = ""
    binding_stage: str | None = None
    binding_title: str | None = None
    verdict_headline: str | None = None
    ranking: list[tuple[str, float]] = Field(
        default_factory=list, description="(stage title, points), top first"
    )
    evidence: list[EvidenceLine] = Field(default_factory=list)
    next_checks: list[str] = Field(default_factory=list)
    reply_to: str | None = Field(
        None, description="The alert a resolved note answers (its message ts)."
    )
    posted_ts: str | None = None
    chart: bool = Field(False, description="A chart goes with it.")

    @model_serializer(mode="wrap")
    def _worded(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        """As JSON for people and scripts: with the ``title`` and ``said`` sentences when the
        front-end passes its wording as ``context={"alert_wording": (title, changes)}``
        (pydantic's serialization context), so the JSON reads as the post does."""
        data = handler(self)
        wording = (info.context or {}).get("alert_wording")
        if wording is not None and isinstance(data, dict):
            title, changes = wording
            data["title"], data["said"] = title(self), changes(self)
        return data

    @property
    def condition(self) -> str:
        return self.conditions[0] if self.conditions else ""


class CheckResult(BaseModel):
    """What one check read, concluded and posted (or, with --once, would post)."""

    watch_id: str
    path: str
    status: Literal["checked", "unchanged", "paused", "busy", "duplicate", "problem", "waiting"]
    problem: str | None = Field(
        None, description="what could not be read; waiting: until when a scheduled check waits"
    )
    format: str | None = None
    mode: str | None = None
    steps: int = 0
    first_step: int | None = None
    last_step: int | None = None
    new_steps: int = 0
    bytes_read: int = 0
    verdict: VerdictSummary | None = None
    open_conditions: list[str] = Field(default_factory=list)
    alerts: list[Alert] = Field(
        default_factory=list, description="Posted (or, dry, that would be posted)."
    )
    withheld: list[str] = Field(
        default_factory=list, description="Conditions a quiet watch tracks without posting."
    )
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


class Following(BaseModel):
    """``rlmap-bot watch SOURCE`` without --once: the terminal follows it (module docstring)."""

    source: str
    seconds: float


class Said(BaseModel):
    """One thing a follow says: a check's alerts, or a line about the run or its source."""

    line: str | None = None
    result: CheckResult | None = None


class WatchSet(BaseModel):
    """A watch set in a channel, announced there for everyone before it is kept (the
    announcement doubles as proof that the bot can post there)."""

    watch_id: str
    path: str
    every: str = Field(description="How often it checks, as `watch list` writes it: 15m, 1h30m.")
    quiet: bool = Field(description="Posts only faults, not stage changes.")
    change: Literal["started", "resumed", "changed"] = Field(
        description="A new watch, a paused one resumed, or a watch of the path changed."
    )
    by: str | None = Field(None, description="Who set it.")

    @property
    def short_id(self) -> str:
        return self.watch_id[:8]


class Watching(BaseModel):
    """`watch PATH` in a channel: the watch set, and what the check made at once found."""

    watch: WatchSet
    first: CheckResult | None = None


class Unwatched(BaseModel):
    """`unwatch`: the watch of ``path`` removed from the channel, told to everyone there."""

    path: str
    by: str | None = None
