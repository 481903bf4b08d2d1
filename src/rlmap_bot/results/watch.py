"""What watching a run tells: alerts, a check's outcome, the watch list."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from rlmap_bot.results.diagnosis import NextStep
from rlmap_bot.results.faults import WatchFault
from rlmap_bot.results.scaling import AtStep, Estimate


class VerdictSummary(BaseModel):
    """The last check's verdict in one line, for `watch list` and App Home."""

    headline: str
    binding_stage: str | None = None
    binding_title: str | None = None
    confidence: float | None = Field(
        None,
        description="None: the verdict abstained, or names its stage on one measurement (a lead).",
    )


class EvidenceLine(BaseModel):
    """One fired rule behind a verdict, with where each value came from in the logs."""

    stage: str
    points: float
    signals: dict[str, str]
    why: str
    source: str = Field(description="The catalog paper the rule rests on.")
    source_short: str | None = Field(None, description="That paper's short name.")
    provenance: list[str] = Field(
        default_factory=list, description="metric, window and reading per signal"
    )


# -- what a watch post tells: one typed change each, a discriminated union on ``kind`` -------------
class StageStarted(BaseModel):
    """A stage began to bind (``start``), or two or more tie with strong evidence (``tie``)."""

    kind: Literal["start", "tie"]
    stage: str = Field(description="The stage's title, or the tied ones' (A and B).")
    step: int | None = Field(None, description="The last step the check read.")
    confidence: float | None = Field(
        None, description="None: the stage rests on one measurement (a lead, no percentage)."
    )


class StageChanged(BaseModel):
    """The binding stage moved from ``previous`` to ``stage`` (``change_tie``: to a tie)."""

    kind: Literal["change", "change_tie"]
    stage: str
    previous: str | None = Field(None, description="The stage that bound before.")
    step: int | None = None
    confidence: float | None = Field(
        None, description="None: the stage rests on one measurement (a lead, no percentage)."
    )


class TieSummary(BaseModel):
    """The verdict's own summary of a tie."""

    kind: Literal["summary"] = "summary"
    message: str


class StageCleared(BaseModel):
    """A stage (or a tie) no longer binds after ``checks`` checks in a row that did not name it."""

    kind: Literal["no_longer", "no_longer_tie"]
    stage: str
    step: int | None = None
    checks: int


class FaultOpened(BaseModel):
    """A fault opened; ``transient``: it was already over when the check found it."""

    kind: Literal["fault"] = "fault"
    fault: WatchFault
    transient: bool = False


class FaultOver(BaseModel):
    """A fault ended."""

    kind: Literal["fault_over"] = "fault_over"
    fault: WatchFault


class WatchPaused(BaseModel):
    """The watch paused: the log stalled, is gone, or leads outside the run roots."""

    kind: Literal["paused"] = "paused"
    reason: str
    message: str | None = Field(None, description="What the read said.")


class Unreadable(BaseModel):
    """The run cannot be read now (the watch goes on, retried)."""

    kind: Literal["unreadable"] = "unreadable"
    message: str | None = None


class Readable(BaseModel):
    """The run is read again."""

    kind: Literal["readable"] = "readable"


class StopAdvised(BaseModel):
    """The run's forecast says when to stop, once a watch: it has reached 95% of its forecast
    ceiling, so more steps buy little (``reached``); or its forecast ceiling fell sharply below an
    earlier forecast, a run bending down before it collapses (``falling``)."""

    kind: Literal["stop"] = "stop"
    reason: Literal["reached", "falling"]
    metric: str = Field(description="The curve forecast (its logged name).")
    quantity: str = Field(description="What it measures: held-out score or training reward.")
    step: int | None = Field(None, description="The last step the check read.")
    ceiling: Estimate = Field(description="The forecast ceiling now, with its 80% interval.")
    now: float = Field(description="The curve's recent level.")
    reached: float | None = Field(None, description="Share of the gain to the ceiling reached.")
    more: float | None = Field(
        None, description="reached: the most more steps buy (the interval's far end, less now)"
    )
    earlier: AtStep | None = Field(
        None, description="falling: the highest ceiling forecast before, and at which step"
    )


#: One thing a watch post tells, as data; :mod:`rlmap_bot.wording.posts` words each type the same
#: for Slack and the terminal.
Change = Annotated[
    StageStarted
    | StageChanged
    | TieSummary
    | StageCleared
    | FaultOpened
    | FaultOver
    | WatchPaused
    | Unreadable
    | Readable
    | StopAdvised,
    Field(discriminator="kind"),
]


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
    confidence: float | None = Field(
        None,
        description="How sure the verdict it stands on is; None when that verdict abstains or "
        "names its stage on one measurement (a lead, no percentage).",
    )
    evidence: list[EvidenceLine] = Field(default_factory=list)
    next_checks: list[str] = Field(default_factory=list)
    next_step: NextStep | None = Field(
        None, description="The one thing to do next: the catalog's lever for what it tells."
    )
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
