"""Pydantic models for the curated catalog in ``knowledge/``.

Curators edit YAML; these models are the contract that a pull request is
checked against.  Every entry shares :class:`EntryBase`; each kind adds the
fields its cards need.  Links between entries are plain ids, checked for
existence and kind by :mod:`rlmap_bot.knowledge.loader` once every file is read.

Every model is declared with pydantic's ``defer_build=True``: its validator is built the first
time something is validated with it, not when this module is imported. A plain ``ask`` reads a
few entries back from a built store (their kinds' models alone are built, see
``knowledge/store.py``) and never validates a catalog file, so it does not pay for the rest
(docs/measurements.md, cold start).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$", max_length=80)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
ArxivId = Annotated[str, StringConstraints(pattern=r"^\d{4}\.\d{4,5}$")]

# Validation context for entries read back from a built knowledge store, which checked them all.
BUILT = "from_built_store"

# A lever's answers: a signal id, signal.rule, or fault:KIND (schema.Lever).
ANSWERS = r"^(fault:[a-z_]+|[a-z0-9_-]+(\.[a-z0-9_-]+)?)$"
SHORT_NAME = 48  # the longest name a button shows whole (EntryBase.short_name)

STAGE_IDS = ("environments", "rollouts", "reward", "optimization", "evaluation")
StageId = Literal["environments", "rollouts", "reward", "optimization", "evaluation"]


class EntryBase(BaseModel):
    """Fields every catalog entry has, whatever its kind."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: Slug
    title: Text
    summary: Text = Field(description="One or two sentences, in the catalog's own words.")
    aliases: list[Text] = Field(default_factory=list, description="Other names people use.")
    keywords: list[Text] = Field(
        default_factory=list, description="Terms that should find this entry."
    )
    questions: list[Text] = Field(
        default_factory=list, description="Example questions this entry answers (feeds search)."
    )
    related: list[Slug] = Field(
        default_factory=list, description="Ids of related entries of any kind."
    )
    added: dt.date = Field(description="The day a curator added the entry to the catalog.")
    announce: bool = Field(
        default=False,
        description="Set when a change to an existing entry is worth announcing in digests.",
    )

    @field_validator("added")
    @classmethod
    def _not_in_future(cls, value: dt.date) -> dt.date:
        if value > dt.date.today() + dt.timedelta(days=1):
            raise ValueError(f"{value} is in the future; use the day the entry is added")
        return value

    @property
    def short_name(self) -> str:
        """A name short enough for a button (Slack cuts a label at 75 characters): the title when
        it fits in 48; else the part before its colon ("SWE-bench"); else the first alias when it
        is written as a name ("ScaleRL", "Cui et al. 2025": curators list the name people use
        first); else the title cut after a whole word. 48 is a judgement: it keeps every stage's,
        signal's and topic's title whole and lets two such buttons share a phone's row."""
        title = " ".join(self.title.split())
        if len(title) <= SHORT_NAME:
            return title
        head = title.split(": ", 1)[0]
        if head != title and 3 <= len(head) <= SHORT_NAME:
            return head
        for alias in self.aliases[:1]:
            if len(alias) <= SHORT_NAME and (alias[:1].isupper() or alias[:1].isdigit()):
                return alias
        words = title[: SHORT_NAME + 1].rsplit(" ", 1)[0].rstrip(" ,;:-")
        return words + "…"

    @property
    def one_line(self) -> str:
        """The first sentence of the summary, for lists and search hits."""
        text = self.summary.strip()
        for stop in (". ", "? ", "! "):
            cut = text.find(stop)
            if 0 < cut < 240:
                return text[: cut + 1]
        return text if len(text) <= 240 else text[:237].rstrip() + "..."


class Lever(BaseModel):
    """What relieves a stage's constraint, and the readings it answers: when a diagnosis names
    the stage on one of them, this is the one thing it says to do next."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    text: Text
    answers: list[Annotated[str, StringConstraints(pattern=ANSWERS)]] = Field(
        default_factory=list,
        description="The readings it answers: a signal's id (any of its rules), 'signal.rule' "
        "(that rule only), or 'fault:KIND' (a fault read from a run's logs).",
    )


class Stage(EntryBase):
    """One of the five stages of the map; the unit a diagnosis points at."""

    kind: Literal["stage"]
    order: int = Field(ge=1, le=20, description="Position in the map, 1 = first.")
    covers: Text
    symptoms: list[Text] = Field(min_length=1, description="Measurable signs this stage binds.")
    measure: list[Text] = Field(min_length=1, description="What to measure to tell.")
    levers: list[Text | Lever] = Field(
        min_length=1, description="What relieves the constraint (with the readings each answers)."
    )
    subtopics: list[Slug] = Field(default_factory=list)

    @property
    def lever_texts(self) -> list[str]:
        return [lever if isinstance(lever, str) else lever.text for lever in self.levers]

    @property
    def answering_levers(self) -> list[Lever]:
        return [lever for lever in self.levers if isinstance(lever, Lever)]

    @field_validator("id")
    @classmethod
    def _known_stage(cls, value: str) -> str:
        if value not in STAGE_IDS:
            raise ValueError(f"stage id must be one of {', '.join(STAGE_IDS)}")
        return value


class Topic(EntryBase):
    """A topic of the map (Scaling Laws) or one of its subtopics (``parent`` set)."""

    kind: Literal["topic"]
    parent: Slug | None = None
    body: Text = Field(description="What the topic is about and how it bears on scaling RL.")
    stages: list[StageId] = Field(default_factory=list)


class Paper(EntryBase):
    """A research paper, report, release or post in the catalog."""

    kind: Literal["paper"]
    authors: list[Text] = Field(default_factory=list, description="Names as the sources give them.")
    et_al: bool = Field(default=False, description="True when more authors exist than are listed.")
    organisation: Text | None = None
    year: int | None = Field(default=None, ge=1950, le=2100)
    arxiv: ArxivId | None = None
    venue: Text | None = None
    url: Annotated[str, StringConstraints(pattern=r"^https?://\S+$")] | None = None
    verification: Literal["verified", "partial", "unverified"]
    verification_note: Text | None = None
    facts: list[Text] = Field(
        default_factory=list, description="Key numbers and findings, checked."
    )
    stages: list[StageId] = Field(
        min_length=1, description="Stages it informs, the main one first."
    )
    subtopics: list[Slug] = Field(default_factory=list)
    seed: bool = Field(default=False, description="Listed in the source map's 'Latest research'.")

    @model_validator(mode="after")
    def _note_needed(self) -> Paper:
        if self.verification != "verified" and not self.verification_note:
            raise ValueError("verification_note is required unless verification is 'verified'")
        return self

    @property
    def link(self) -> str | None:
        """Where to read it: the curated URL, else the arXiv page."""
        return self.url or (f"https://arxiv.org/abs/{self.arxiv}" if self.arxiv else None)

    @property
    def short_byline(self) -> str:
        """The first author and "et al." when there are more, else the organisation."""
        if not self.authors:
            return self.organisation or ""
        more = self.et_al or len(self.authors) > 1
        return self.authors[0] + (" et al." if more else "")

    @property
    def byline(self) -> str:
        """Authors or organisation as one short line."""
        names = ", ".join(self.authors[:3])
        if names and (self.et_al or len(self.authors) > 3):
            names += " et al."
        if names and self.organisation:
            return f"{names} ({self.organisation})"
        return names or self.organisation or ""


SignalType = Literal["fraction", "number", "integer", "choice", "bool"]


class Preset(BaseModel):
    """A ready-made answer shown as a button; also the answer space for picking questions."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    label: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=60)]
    value: float | int | bool | str


class Rule(BaseModel):
    """When ``when`` holds, add ``points`` to stages;
    ``why``, ``source`` and ``fact`` say on what grounds.

    Every rule rests on one fact of one catalog paper (``fact`` indexes the paper's
    ``facts``).  Where the rule goes beyond that fact (a threshold, a combination, the
    stage it is charged to), ``judgement`` says what is ours and why; a rule with no
    supporting fact at all must carry a judgement.  ``overrides`` names rules whose
    reading this one explains away: when both fire, only this one counts.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: Slug
    when: Text
    points: dict[StageId, float] = Field(min_length=1)
    why: Text
    source: Slug = Field(description="Id of the catalog paper the rule rests on.")
    fact: int | None = Field(
        default=None, ge=0, description="Index (from 0) into the source paper's facts."
    )
    judgement: Text | None = Field(
        default=None,
        description="What the rule adds beyond the cited fact (thresholds, combinations), and why.",
    )
    overrides: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]+(\.[a-z0-9_-]+)?$")]] = (
        Field(
            default_factory=list,
            description="Rules ('signal.rule', or 'rule' in this file) this one explains away.",
        )
    )
    weighed_by: list[Slug] = Field(
        default_factory=list,
        description="Signals this rule reads whose margin past their noise weighs it, when they "
        "are read from a run's logs: a reading just past its band counts for about half, one far "
        "past it in full, one inside it not at all (see diagnosis.margin_full).",
    )

    @field_validator("when")
    @classmethod
    def _parses(cls, value: str, info: ValidationInfo) -> str:
        if info.context and info.context.get(BUILT):
            return (
                value  # checked when the store was built; parsing again is 12 ms of every cold ask
            )
        # Imported here: only a catalog file's rule is parsed (an entry read back from a built
        # store was parsed when the store was built), so an ask never imports the rule language.
        from rlmap_bot.knowledge.expr import ExprError
        from rlmap_bot.knowledge.expr import parse as parse_expr

        try:
            parse_expr(value)
        except ExprError as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _grounded(self) -> Rule:
        if self.fact is None and self.judgement is None:
            raise ValueError(
                "a rule needs the supporting 'fact' of its source, or a 'judgement' saying why it "
                "holds"
            )
        return self

    @property
    def expr(self):
        from rlmap_bot.knowledge.expr import parse as parse_expr  # see _parses

        return parse_expr(self.when)


Cost = Literal["dashboard", "logs", "audit", "experiment"]
_PERCENT = ("%",)
_TIMES = ("x", "×")


class Signal(EntryBase):
    """Something a team can tell about its run, with the rules that weigh it on stages."""

    kind: Literal["signal"]
    question: Text
    type: SignalType
    unit: Text | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: list[Slug] = Field(
        default_factory=list, description="Allowed words for type 'choice'."
    )
    presets: list[Preset] = Field(default_factory=list)
    how_to_measure: Text
    cost: Cost = Field(
        default="logs",
        description="What answering takes: dashboard, logs, audit or experiment; the guided flow "
        "asks cheap ones first.",
    )
    cost_note: Text | None = Field(
        default=None, description="Where the number comes from, in a few words."
    )
    rules: list[Rule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Signal:
        if self.type == "choice" and len(self.choices) < 2:
            raise ValueError("a 'choice' signal needs at least two choices")
        if self.type != "choice" and self.choices:
            raise ValueError("only 'choice' signals take choices")
        if self.type == "fraction":
            object.__setattr__(self, "minimum", 0.0 if self.minimum is None else self.minimum)
            object.__setattr__(self, "maximum", 1.0 if self.maximum is None else self.maximum)
        for i, preset in enumerate(self.presets):
            try:
                self.coerce(preset.value)
            except (
                ValueError
            ) as exc:  # "presets[2].value: ..." names the field for the loader's error line
                raise ValueError(f"presets[{i}].value: {exc}") from None
        return self

    def coerce(self, raw: object) -> float | int | bool | str:
        """Turn a typed or JSON answer into this signal's value; ValueError says why not.

        Answers are accepted as people write them: yes/no/y/n for yes/no signals,
        "40%" only for shares (fractions), "3.5x" for ratio signals (unit ``x``), and
        a trailing unit word such as "5 nats" where the signal has that unit.
        """
        if self.type == "bool":
            if isinstance(raw, bool):
                return raw
            word = str(raw).strip().lower()
            if word in {"true", "yes", "y", "1"}:
                return True
            if word in {"false", "no", "n", "0"}:
                return False
            raise ValueError(f"{self.id} takes yes/no (y or n), not {raw!r}")
        if self.type == "choice":
            word = str(raw).strip().lower()
            if word not in self.choices:
                raise ValueError(f"{self.id} takes one of {', '.join(self.choices)}, not {raw!r}")
            return word
        if isinstance(raw, bool):
            raise ValueError(f"{self.id} takes a number, not {raw!r}")
        percent = False
        if isinstance(raw, str):
            text, percent = self._strip_unit(raw)
            try:
                number = float(text)
            except ValueError:
                raise ValueError(f"{self.id} takes {self._wants()}, not {raw!r}") from None
            if percent:
                number /= 100.0
        elif isinstance(raw, (int, float)):
            try:
                number = float(raw)
            except OverflowError:
                raise ValueError(
                    f"{self.id} takes a number of sensible size, not {str(raw)[:20]}..."
                ) from None
        else:
            raise ValueError(f"{self.id} takes a number, not {raw!r}")
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueError(f"{self.id} takes a finite number, not {raw!r}")
        if (
            self.type == "fraction"
            and 1.0 < number <= 100.0
            and isinstance(raw, str)
            and not percent
        ):
            raise ValueError(f"{self.id} is a fraction from 0 to 1 (write 0.4 or 40%), not {raw!r}")
        if self.type == "integer":
            if number != int(number):
                raise ValueError(f"{self.id} takes a whole number, not {raw!r}")
            number = int(number)
        if self.minimum is not None and (
            number < self.minimum or (self.exclusive_minimum and number == self.minimum)
        ):
            bound = "above" if self.exclusive_minimum else "at least"
            raise ValueError(f"{self.id} must be {bound} {self.minimum:g}, not {raw!r}")
        if self.maximum is not None and number > self.maximum:
            raise ValueError(f"{self.id} must be at most {self.maximum:g}, not {raw!r}")
        return number

    def _wants(self) -> str:
        if self.type == "fraction":
            return "a number, a share such as 0.4 or 40%"
        if self.unit == "x":
            return "a number, a ratio such as 3.5 or 3.5x"
        if self.type == "integer":
            return "a number, a whole one"
        return "a number" + (f" (in {self.unit})" if self.unit else "")

    def _strip_unit(self, raw: str) -> tuple[str, bool]:
        """The number part of a typed answer, and whether it was a percentage."""
        text = raw.strip().replace(",", "").replace("\u2212", "-")
        lowered = text.lower()
        if lowered.endswith(_PERCENT):
            if self.type != "fraction":
                raise ValueError(
                    f"{self.id} takes {self._wants()}; '%' is only for shares, not {raw!r}"
                )
            return text[:-1].strip(), True
        if self.unit == "x" and lowered.endswith(_TIMES):
            return text[:-1].strip(), False
        if self.unit and self.unit != "x":
            unit = self.unit.lower()
            for form in (unit, unit.rstrip("s")):
                if form and lowered.endswith(form) and lowered[: -len(form)].strip():
                    return text[: -len(form)].strip(), False
        return text, False


Entry = Annotated[Stage | Topic | Paper | Signal, Field(discriminator="kind")]
KINDS = ("stage", "topic", "paper", "signal")
# Each kind's model, to validate an entry whose kind is known (a built store keeps it beside the
# entry) without building the validator of the whole union.
ENTRY_MODELS: dict[str, type[Stage | Topic | Paper | Signal]] = {
    "stage": Stage,
    "topic": Topic,
    "paper": Paper,
    "signal": Signal,
}


def display_kind(entry: Entry) -> str:
    """The kind a person reads: a topic under another topic is a subtopic."""
    if isinstance(entry, Topic) and entry.parent:
        return "subtopic"
    return entry.kind
