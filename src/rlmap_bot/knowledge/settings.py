"""The catalog's settings (``knowledge/catalog.yaml``): the search floor, the diagnosis's thresholds
and weights with their reasons, the guided flow's complaints and the precedence between readings.

Apart from :mod:`rlmap_bot.knowledge.schema` (the entries) because they configure how the catalog
is used rather than describe what it holds; validated the same way, each model built when first
used (``defer_build``).
"""

from __future__ import annotations

import itertools
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from rlmap_bot.knowledge.schema import Cost, Slug

_COST_WEIGHTS: dict[Cost, float] = {"dashboard": 1.0, "logs": 0.85, "audit": 0.6, "experiment": 0.5}


class Complaint(BaseModel):
    """Something a team sees that opens a guided diagnosis ("training has stalled").

    ``signals`` are the readings that tell its causes apart: the flow asks them first, and a
    verdict whose evidence reads none of them leaves the complaint unexplained, so the flow keeps
    asking them. ``states`` is what its words say of some of them outright, so choosing it is
    evidence: a single value answers the signal (it is never asked), a list of choices narrows
    it (it is asked, if at all, with only those choices, and counts as "one of these" meanwhile).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: Slug
    label: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=60)]
    signals: list[Slug] = Field(min_length=1)
    # numbers are read too, so that kb check can say why a complaint cannot state one
    states: dict[Slug, bool | int | float | str | list[str]] = Field(
        default_factory=dict,
        description="What the complaint's words say of a listed choice or yes/no signal: its "
        "value, or the choices it leaves.",
    )


class Precedence(BaseModel):
    """Two readings of different stages where the literature says which comes first: when
    ``first`` fires, the readings in ``explains`` follow from it and do not count.  A bare
    signal id stands for each of its rules that adds points to a stage (so a new state of
    that signal is covered without listing it)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    first: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]+\.[a-z0-9_-]+$")]
    explains: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]+(\.[a-z0-9_-]+)?$")]] = (
        Field(
            min_length=1,
            description="Rules (signal.rule), or a signal id: each of its rules that adds points "
            "to a stage.",
        )
    )
    source: Slug
    why: str


class Calibration(BaseModel):
    """The map from the engine's probability of what a verdict states to the frequency with which
    such verdicts were right (``knowledge/calibration.yaml``, written by the command it names).

    One map per kind of statement, as they are different claims: ``stage`` (a stage binds, or a
    tie) and ``none`` (no single stage).  Each is a non-decreasing list of knots (probability,
    how often right), read between knots by straight lines and flat beyond the top one.

    Below the lowest probability a map was fitted on (``support``) it has seen no verdict, so it
    never raises one there: such a verdict is said at its own probability, or lower if the map's
    first block is.  Stretching the first block's frequency downwards would say a verdict on one
    weak reading as sure as the plain ones the map was fitted on (a run's 40% read as 95%).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    method: str
    fitted_on: str
    command: str
    knots: dict[Literal["stage", "none"], list[tuple[float, float]]]
    support: dict[Literal["stage", "none"], tuple[float, float]] = Field(
        default_factory=dict,
        description="each map's lowest and highest probability fitted on; none: the knots' ends",
    )

    @model_validator(mode="after")
    def _monotone(self) -> Calibration:
        for kind, knots in self.knots.items():
            xs, ys = [k[0] for k in knots], [k[1] for k in knots]
            if not knots or xs != sorted(xs) or ys != sorted(ys):
                raise ValueError(f"the {kind} map's knots must be non-empty and non-decreasing")
            if min(xs + ys) < 0 or max(xs + ys) > 1:
                raise ValueError(f"the {kind} map's knots must lie in 0-1")
            low, high = self.support.get(kind, (xs[0], xs[-1]))
            if not 0 <= low <= xs[0] <= xs[-1] <= high <= 1:
                raise ValueError(f"the {kind} map's support must hold its knots, within 0-1")
        return self

    def stated(self, probability: float, kind: Literal["stage", "none"]) -> float:
        """How sure to say a verdict of this kind is, at this probability."""
        knots = self.knots.get(kind)
        if not knots:
            return probability
        lowest = self.support.get(kind, (knots[0][0], knots[-1][0]))[0]
        if probability < lowest:
            return min(probability, knots[0][1])
        if probability <= knots[0][0]:
            return knots[0][1]
        for (x0, y0), (x1, y1) in itertools.pairwise(knots):
            if probability <= x1:
                return y0 if x1 == x0 else y0 + (y1 - y0) * (probability - x0) / (x1 - x0)
        return knots[-1][1]


class DiagnosisSettings(BaseModel):
    """How rule points become a verdict; see knowledge/catalog.yaml for each value's reason."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    none_score: float = 2.0
    min_score: float = Field(default=3.0, gt=0)
    tentative_score: float = Field(default=2.0, gt=0)
    min_lead: float = Field(default=1.25, ge=0)
    corroboration: float = Field(default=0.25, ge=0, le=1)
    temperature: float = Field(default=1.0, gt=0)
    margin_full: float = Field(default=3.0, gt=1)
    margin_weight: float = Field(default=0.5, ge=0, le=1)
    calibration: Calibration | None = Field(
        default=None, description="knowledge/calibration.yaml: how sure a verdict is said to be"
    )
    stop_confidence: float = Field(default=0.7, gt=0, le=1)
    max_asked: int = Field(default=12, ge=1)
    stop_after_unknowns: int = Field(default=4, ge=1)
    pause_after_unknowns: int = Field(default=3, ge=1)
    pause_checks: int = Field(default=3, ge=1)
    readings_listed: int = Field(default=26, ge=1, le=26)
    min_gain: float = Field(default=0.001, ge=0)
    cost_weights: dict[Cost, float] = Field(default_factory=lambda: _COST_WEIGHTS.copy())
    next_checks: int = Field(default=3, ge=0)
    papers: int = Field(default=5, ge=0)
    answer_words: dict[
        Slug,
        list[Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1)]],
    ] = Field(
        default_factory=dict,
        description="Words typed for a choice answer, read as that choice ('going up': rising).",
    )

    def said_as(self, choice: str) -> list[str]:
        """How a person may say a choice: its name and its answer_words, each read as text.normalize
        reads what they type (so a reply and a question are matched against them the same way)."""
        from rlmap_bot.text import normalize

        return [normalize(w) for w in (choice, *self.answer_words.get(choice, ()))]

    complaints: list[Complaint] = Field(default_factory=list)
    precedence: list[Precedence] = Field(
        default_factory=list,
        description="Cross-stage readings the literature orders: the first explains the rest.",
    )

    @model_validator(mode="after")
    def _unique_complaints(self) -> DiagnosisSettings:
        ids = [c.id for c in self.complaints]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"complaint id '{dupes[0]}' is listed twice")
        return self


class CatalogSettings(BaseModel):
    """Catalog-wide settings from ``knowledge/catalog.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    search_floor: float = Field(default=0.37, ge=0, le=1)
    diagnosis: DiagnosisSettings = Field(default_factory=DiagnosisSettings)
