"""What a diagnosis returns: a verdict with its evidence and ranking, the next checks, a guided
question, a simulated session; and how a signal's value is written.

Light on purpose (pydantic and the standard library only): every surface imports these to render
them, and a plain ``ask`` never pays for the engine.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field


def format_value(value: Any) -> str:
    """A signal value as people write it: yes/no, 0.3, rising; a list is what a narrowed value
    may still be (the complaint chosen says the held-out score is flat or falling)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return " or ".join(format_value(v) for v in value)
    return str(value)


class PaperRef(BaseModel):
    id: str
    title: str
    short: str | None = Field(
        default=None, description="A name short enough for a button (the catalog's short name)."
    )


class Evidence(BaseModel):
    """One fired rule: what was seen, which stages it moves and by how much, and why."""

    rule: str
    signals: dict[str, Any]
    stage: str = Field(description="The stage the rule moves most.")
    direction: str = Field(
        description="'for' when it points at that stage, 'against' when it argues it is fine"
    )
    points: dict[str, float] = Field(description="Points added to each stage it moves.")
    why: str
    source: PaperRef
    fact: str | None = Field(default=None, description="The source's fact the rule rests on.")
    judgement: str | None = Field(
        default=None, description="What the rule adds beyond that fact, and why."
    )
    explains_away: list[str] = Field(
        default_factory=list, description="Fired rules this one replaced."
    )

    def supports(self, stage: str) -> bool:
        return self.points.get(stage, 0.0) > 0


def readings_behind(evidence: list[Evidence], stages: list[str] | set[str]) -> list[str]:
    """The readings (signal values, read or answered) behind the evidence for ``stages``, each
    once, strongest evidence first: what "on N readings" counts and the terminal lists under it,
    so the count and the list never disagree (two rules reading one value are one reading)."""
    out: list[str] = []
    for ev in evidence:
        if any(ev.supports(stage) for stage in stages):
            out += [s for s in ev.signals if s not in out]
    return out


class StageScore(BaseModel):
    stage: str
    title: str
    score: float
    probability: float


class NextCheck(BaseModel):
    signal: str
    title: str
    question: str
    gain: float = Field(
        description="How far an answer is expected to move the belief about the binding stage "
        "(bits)."
    )
    cost: str = Field(
        default="logs", description="What answering takes: dashboard, logs, audit or experiment."
    )
    priority: float = Field(
        default=0.0, description="Gain weighed by cost; the order in which to ask."
    )


class NextStep(BaseModel):
    """The one thing a verdict says to do next, taken from the catalog (diagnosis/levers.py)."""

    kind: Literal["lever", "check"] = Field(
        description="lever: a stage's lever, for what the verdict rests on; check: no stage is "
        "named, so the check that would tell most."
    )
    text: str = Field(description="The lever, or the check's question, as the catalog words it.")
    stage: str | None = Field(default=None, description="The stage whose lever it is.")
    reading: str | None = Field(
        default=None,
        description="What it answers: the rule (signal.rule), signal or fault:KIND it was picked "
        "for; None for a stage's first lever taken when no lever answers the evidence.",
    )


class Verdict(BaseModel):
    """What the engine concludes; ``binding_stage`` is None when nothing is singled out."""

    binding_stage: str | None
    binding_title: str | None = None
    tied: list[str] = Field(
        default_factory=list,
        description="Stages with strong, near-equal evidence when none binds alone.",
    )
    confidence: float | None = Field(
        description="How sure what is said is (0-1: the stage, one of the tied stages, or that no "
        "single stage stands out); None when the verdict abstains, as no reading moved any stage "
        "and there is nothing to be sure of, and for a stage read from a run's logs on one "
        "measurement (a lead: no frequency was measured for such verdicts)."
    )
    one_measurement: bool = Field(
        default=False,
        description=(
            "The verdict rests on one reading (one measurement, or the one comparison a mechanism "
            "is defined by), below the firm bar: a second reading of the same stage would confirm "
            "it."
        ),
    )
    summary: str
    ranking: list[StageScore]
    evidence: list[Evidence]
    next_checks: list[NextCheck]
    papers: list[PaperRef]
    signals: dict[str, Any] = Field(
        default_factory=dict,
        description="The signal values weighed; a list where only what it may be is known.",
    )
    said: dict[str, Any] = Field(
        default_factory=dict,
        description="Those taken from the complaints the team chose rather than asked: a value, or "
        "the list of values the complaint leaves (the summary says 'from what you said').",
    )
    next_step: NextStep | None = Field(
        default=None, description="The one thing to do next (a lever, or the check to make)."
    )


class PresetView(BaseModel):
    label: str
    value: Any


class Question(BaseModel):
    """What to ask next, with everything a front-end needs to render it."""

    kind: str = Field(
        default="signal",
        description="'complaint' for the opening question, 'readings' for the list of readings "
        "offered at a pause, else 'signal'.",
    )
    signal: str = Field(
        description="The id to answer: a signal id, 'complaint' for the opening question, or "
        "'readings' for the readings offered at a pause."
    )
    title: str
    text: str
    type: str = Field(
        description="The signal's type, or 'complaint' / 'readings' (pick any number of the "
        "presets)."
    )
    unit: str | None = None
    choices: list[str] = Field(default_factory=list)
    presets: list[PresetView] = Field(default_factory=list)
    multiple: bool = Field(
        default=False,
        description="Several presets may be chosen at once (complaints, readings at a pause).",
    )
    how_to_measure: str
    answer_hint: str = Field(
        default="", description="How to type an answer, e.g. 'a ratio like 3.5x'."
    )
    cost: str | None = Field(
        default=None, description="What answering takes: dashboard, logs, audit or experiment."
    )
    number: int = Field(description="1 for the first question asked in this session, and so on.")
    max_questions: int = Field(
        default=0, description="The most questions this session can ask, the opening one included."
    )
    progress: str = Field(default="", description="'question 3 of at most 12'.")
    can_go_back: bool


class Simulation(Verdict):
    """A simulated guided diagnosis: the verdict, and which questions it took to reach it."""

    asked: list[str] = Field(description="Signal questions put to the simulated team, in order.")
    complaint_asked: bool = Field(description="Whether the opening complaint question was offered.")
    questions: int = Field(
        default=0,
        description="Questions put in all: the opening one, the signal questions and the readings "
        "offered at a pause.",
    )


class Session(BaseModel):
    """One guided diagnosis: who runs it, where, and every answer so far."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    team: str = "local"
    channel: str = "local"
    thread_ts: str | None = None
    user: str
    answers: dict[str, Any] = Field(default_factory=dict)
    from_logs: dict[str, float | None] = Field(
        default_factory=dict,
        description="Answers read from a run's logs (a log dropped into the thread), each with its "
        "margin past its noise band: weighed as a run's readings, as diagnose --run weighs them.",
    )
    skipped: list[str] = Field(default_factory=list)
    history: list[str] = Field(
        default_factory=list, description="Signals answered or skipped, in order."
    )
    current: str | None = None
    status: Literal["open", "done", "stopped", "expired"] = "open"
    message_ts: str | None = Field(
        default=None, description="The front-end's card to update in place."
    )
    moves: list[str] = Field(
        default_factory=list,
        description="Keys of the latest moves applied (a typed reply's message), so a move handled "
        "again after a crash is not applied twice.",
    )
    version: int = 0
    started_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))
    updated_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))


class PauseCheck(BaseModel):
    """A check offered when the flow pauses: what to measure and how."""

    signal: str
    title: str
    how_to_measure: str
    cost: str | None = None


class Step(BaseModel):
    session: Session
    question: Question | None = None
    verdict: Verdict | None = None
    leaning: Verdict | None = Field(
        default=None, description="The verdict so far, while questions remain."
    )
    note: str | None = None
    help: str | None = Field(
        default=None, description="How to measure the current question, when asked for help."
    )
    replayed: bool = Field(
        default=False, description="The move was applied before (handled again after a crash)."
    )
    paused: list[PauseCheck] = Field(
        default_factory=list,
        description=(
            'Set when the flow pauses after several "don\'t know"s with no verdict: the checks '
            "that would tell most, "
            "the current question first. The session stays open; answering it (or resuming) goes "
            "on."
        ),
    )

    @property
    def finished(self) -> bool:
        return self.verdict is not None


class Move(BaseModel):
    """A click on a diagnosis card: where the session is after the move, shown on that card.

    ``by`` names who moved it (the card says so); None when the click found the card stale (its
    question answered elsewhere) and the card only catches up with the session.
    """

    step: Step
    by: str | None = None


class DiagnosisOpened(BaseModel):
    """A guided diagnosis started in a channel: the root of the thread it is answered in."""

    by: str | None = Field(None, description="Who started it.")
