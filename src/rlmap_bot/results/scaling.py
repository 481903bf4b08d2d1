"""What more compute buys: a run's forecast, a comparison of runs, and the batch decision.

Kept apart from :mod:`rlmap_bot.scaling` (numpy and scipy) so that front-ends can name these types,
in rendering and in JSON, without loading the numerical stack.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Estimate(BaseModel):
    """A forecast value and its 80% interval."""

    value: float
    low: float
    high: float


class AtStep(Estimate):
    """The forecast level at one step (``--to``, or the run's last step when none is asked)."""

    step: int


class Curve(BaseModel):
    """The points behind a forecast, for the chart: what was logged, and the fitted line ahead."""

    x: list[float] = Field(default_factory=list, description="the x axis (steps or compute)")
    y: list[float] = Field(default_factory=list)
    fit_x: list[float] = Field(default_factory=list)
    fit_y: list[float] = Field(default_factory=list)
    band_low: list[float] = Field(default_factory=list, description="80% band along fit_x")
    band_high: list[float] = Field(default_factory=list)
    early_until: float | None = Field(None, description="x before which points were left out")


class Forecast(BaseModel):
    """One run's forecast, or why there is none yet (``abstain``)."""

    source: str = Field(description="the run, as typed")
    metric: str = Field(description="the metric forecast (its logged name)")
    quantity: str = Field(description="held-out score or training reward")
    axis: str = Field("steps", description="what the x axis counts: steps, samples, tokens, ...")
    points: int = 0
    first_step: int | None = None
    last_step: int | None = None
    now: float | None = Field(None, description="the recent level (mean of the last points)")
    at: AtStep | None = None
    asymptote: Estimate | None = Field(None, description="the ceiling, with its 80% interval")
    reached: float | None = Field(None, description="share of the gain to the ceiling reached")
    step_95: int | None = Field(
        None, description="the step by which 95% of the remaining gain is reached"
    )
    per_1000_steps: float | None = Field(None, description="what 1,000 more steps buy")
    saturated: bool = False
    abstain: str | None = Field(None, description="why there is no forecast yet")
    early_rule: str = ""
    notes: list[str] = Field(default_factory=list)
    curve: Curve | None = Field(None, exclude=True)
    chart: str | None = Field(None, description="the chart's file, when drawn")


class Difference(BaseModel):
    """A reading that differs between two runs (from each run's own diagnosis)."""

    reading: str
    values: dict[str, str] = Field(description="run label -> what the reading is there")


class BatchDecision(BaseModel):
    """Two runs differing in batch size: steps to a common target at B and at 2B."""

    small: str
    large: str
    batch_small: float
    batch_large: float
    target: float
    steps_small: int | None = None
    steps_large: int | None = None
    speedup: float | None = Field(
        None, description="batch_doubling_speedup: steps at B over steps at 2B"
    )
    seconds_small: float | None = None
    seconds_large: float | None = None
    wall_clock: str | None = Field(None, description="which reaches the target sooner in time")
    note: str | None = None


class Comparison(BaseModel):
    """Runs fitted side by side: whose ceiling is higher, who is only faster, what differs."""

    axis: str = Field("steps", description="what the runs are aligned on")
    metric: str
    forecasts: list[Forecast]
    labels: list[str]
    higher_ceiling: str | None = None
    faster: str | None = None
    kind: str = Field(
        "unclear", description="ceiling, efficiency, both, none or unclear: how the runs differ"
    )
    verdict: str = ""
    differences: list[Difference] = Field(default_factory=list)
    batch: BatchDecision | None = None
    chart: str | None = None
