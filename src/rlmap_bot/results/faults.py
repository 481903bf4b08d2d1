"""Faults: what is said about a run before any stage verdict, as one typed vocabulary.

Two families, each a pydantic discriminated union on ``kind``:

* :data:`Fault`, a fault of a run's logs as ``diagnose --run`` (and every watch check's
  derivation) finds it: NaN/inf logged (:class:`NonFinite`), a run that does not learn
  (:class:`NotLearning`) or a sharp change at its tail (:class:`TailShift`), each naming the
  metric, the steps, how many and whether it held on every step.
* :data:`WatchFault`, a fault as a watch post tells it, opened and later over: NaN/inf
  (:class:`NanFinding`), a diverged loss (:class:`DivergenceFinding`), a run that stopped learning
  (:class:`StallFinding`, whose ``cause`` is a :data:`NotLearningKind`) and a sharp change at
  the tail (:class:`ShiftFinding`, its ``causes`` :data:`TailShiftKind` s).

The kinds are declared once here, so a new kind is one literal and, if it says more, one model;
:mod:`rlmap_bot.wording.posts` says each finding by its type.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

#: A run that does not learn: its gradient norm exactly 0 or the same value, a loss of exactly 0
#: with nothing to show otherwise, every group without reward spread, a learning rate run out to
#: 0, an entropy of exactly 0.
NotLearningKind = Literal[
    "zero_gradient", "constant_gradient", "zero_loss", "zero_variance", "no_update", "zero_entropy"
]
#: A sharp change against the run's own level before it, held since (runs/signals/shifts.py):
#: a collapse or a blow-up, wherever in the run it began.
TailShiftKind = Literal[
    "reward_collapse",
    "grad_norm_blowup",
    "length_explosion",
    "length_collapse",
    "entropy_collapse",
    "entropy_blowup",
]

#: What each fault of a run means, first thing said about it.
FAULT_TITLES = {
    "nan": "NaN/inf logged",
    "zero_gradient": "not learning: the gradient norm is exactly 0, nothing is updated",
    "constant_gradient": "not learning: the gradient norm is the same value on every step",
    "zero_loss": "not learning: the loss is exactly 0 and no gradient shows otherwise",
    "zero_variance": "not learning: every group has zero reward spread, no sample carries a signal",
    "no_update": "not learning: the learning rate has been exactly 0 since a step, no parameter "
    "changes",
    "zero_entropy": "the entropy is exactly 0: not measured, or sampling is greedy (nothing is "
    "explored)",
    "reward_collapse": "the task reward collapsed, against the run's own level before it",
    "grad_norm_blowup": "the gradient norm blew up, against the run's own level before it",
    "length_explosion": "the response length exploded, against the run's own level before it",
    "length_collapse": "the response length collapsed: the policy answers in a fraction of the "
    "tokens it used",
    "entropy_collapse": "the entropy collapsed: the policy samples nearly one answer, nothing is "
    "explored",
    "entropy_blowup": "the entropy blew up: the policy samples near random tokens",
}


# -- faults of a run's logs ----------------------------------------------------------------------
class RunFault(BaseModel):
    """What every fault of a run says: on which metric, at which steps, how many, and the detail."""

    kind: str = Field(description="Which fault; each subclass narrows it to its own kinds.")
    metric: str
    steps: list[int] = Field(
        description="the steps it happened at (the first 20; count has them all)"
    )
    count: int
    first_step: int
    last_step: int
    throughout: bool = Field(description="on every logged step of the metric, not only a stretch")
    detail: str

    @property
    def title(self) -> str:
        return FAULT_TITLES.get(self.kind, self.kind)


class NonFinite(RunFault):
    """NaN or inf logged in a loss, gradient norm, KL loss, entropy or the task reward, on every
    step from ``first_step`` on (``sustained``) or on many scattered steps (``recurring``); a
    step or two the trainer skipped is a note, not this fault (runs/signals/faults.py)."""

    kind: Literal["nan"] = "nan"
    quantity: str | None = Field(None, description="the quantity it was read as (grad_norm, ...)")
    pattern: Literal["sustained", "recurring"] = "sustained"


class NotLearning(RunFault):
    """A run whose weights do not move, over all its steps or a trailing stretch."""

    kind: NotLearningKind


class TailShift(RunFault):
    """A quantity whose level left the run's own level before it, from ``first_step`` on (its
    name is older than the rule: the change may be anywhere in the run, not only at its tail)."""

    kind: TailShiftKind
    before: float = Field(description="The run's recent level before the tail (a median).")
    after: float = Field(description="The tail's level (a median).")


#: A fault of a run, by its ``kind``.
Fault = Annotated[NonFinite | NotLearning | TailShift, Field(discriminator="kind")]


# -- faults as a watch tells them ----------------------------------------------------------------
class NanFinding(BaseModel):
    """NaN/inf in the loss-like metrics, from ``first_step``; over after ``clear_after`` finite
    steps in a row."""

    kind: Literal["nan"] = "nan"
    active: bool = True
    first_step: int
    last_step: int = Field(description="The last step with a NaN/inf.")
    metrics: list[str] = Field(default_factory=list)
    bad_steps: int = 0
    earlier_steps: int = Field(
        0, description="NaN/inf steps of earlier bursts, each over (finite again) before this one."
    )
    earlier_first_step: int | None = Field(None, description="Where the first of them began.")
    clear_after: int = Field(description="Finite steps in a row that end it.")
    cleared_step: int | None = None


class DivergenceFinding(BaseModel):
    """A loss that jumped beyond the spike rule at ``step`` and held for ``held`` steps; over when
    the median of its last ``window`` points is back inside the band it broke."""

    kind: Literal["divergence"] = "divergence"
    active: bool = True
    step: int
    metric: str
    baseline: float
    sigma: float
    level: float | None = Field(None, description="The recent median.")
    held: int
    window: int
    cleared_step: int | None = None


class StallFinding(BaseModel):
    """A run that stopped learning: why (``cause``), on which metric, over which steps."""

    kind: Literal["not_learning"] = "not_learning"
    active: bool = True
    cause: NotLearningKind
    metric: str
    first_step: int
    last_step: int
    cleared_step: int | None = None


class ShiftFinding(BaseModel):
    """Sharp changes at the run's tail, one finding for all of them."""

    kind: Literal["shift"] = "shift"
    active: bool = True
    first_step: int
    causes: list[TailShiftKind] = Field(default_factory=list)
    details: list[str] = Field(default_factory=list, description="One sentence each.")
    cleared_step: int | None = None


#: A fault a watch post tells, by its ``kind``.
WatchFault = Annotated[
    NanFinding | DivergenceFinding | StallFinding | ShiftFinding, Field(discriminator="kind")
]
