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
    start: float | None = Field(
        None, description="the early level (mean of the first tenth of the points, at least 3)"
    )
    change: Estimate | None = Field(
        None,
        description="how much the curve moved over the last half of its kept points (its "
        "Theil-Sen slope times that half's span), with its 80% interval from the curve's noise",
    )
    at: AtStep | None = None
    asymptote: Estimate | None = Field(None, description="the ceiling, with its 80% interval")
    reached: float | None = Field(None, description="share of the gain to the ceiling reached")
    step_95: int | None = Field(
        None, description="the step by which 95% of the remaining gain is reached"
    )
    per_1000_steps: float | None = Field(None, description="what 1,000 more steps buy")
    saturated: bool = False
    past_peak: bool = Field(
        False, description="the fit expects the curve to settle below where it is now"
    )
    peak: float | None = Field(
        None,
        description="the curve's best (smoothed) level, set when it has come down from it by "
        "more than its noise and its last half still falls",
    )
    fell: bool = Field(
        False,
        description="the curve is below its start by more than its noise: the forecast is where "
        "it settles, not a ceiling to reach",
    )
    abstain: str | None = Field(None, description="why there is no forecast yet")
    early_rule: str = ""
    notes: list[str] = Field(default_factory=list)
    curve: Curve | None = Field(None, exclude=True)
    chart: str | None = Field(None, description="the chart's file, when drawn")


class Difference(BaseModel):
    """A reading that differs between two runs (from each run's own diagnosis)."""

    reading: str = Field(description="what differs, in words: a signal's title, a fault's")
    signal: str | None = Field(None, description="the signal's id; None for a fault")
    values: dict[str, str] = Field(description="run label -> what the reading is there")
    window: str | None = Field(None, description="the steps it was read over, when alike in all")

    @property
    def said(self) -> str:
        """The line said: "Trainer wait for rollouts: A 5%, B 9% (steps 750-1000)"."""
        sep = "; " if self.signal is None else ", "
        line = f"{self.reading}: " + sep.join(f"{k} {v}" for k, v in self.values.items())
        return line + (f" ({self.window})" if self.window else "")


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
    notes: list[str] = Field(
        default_factory=list, description="what was left out: older runs of a project, ..."
    )
    chart: str | None = None


def _decimals(*values: float) -> int:
    """Decimals enough to tell the values apart at about two significant figures of their
    spread (0.71 and 0.74; 812 and 840), at most four."""
    import math

    finite = [abs(v) for v in values if v == v and abs(v) != float("inf")]
    spread = (max(values) - min(values)) if len(values) > 1 else (max(finite) if finite else 1.0)
    base = spread if spread > 0 else (max(finite) if finite and max(finite) > 0 else 1.0)
    return int(min(4, max(0, 1 - math.floor(math.log10(base)))))


def number(value: float, *context: float) -> str:
    """A value written with the decimals its context needs."""
    return f"{value:,.{_decimals(value, *context)}f}"


def interval(e: Estimate) -> str:
    """``0.71 (0.68-0.74)``; with a negative end ``0.2 (-0.4 to 0.8)``: a hyphen would blur it."""
    d = _decimals(e.low, e.high)
    sep = " to " if min(e.low, e.high) < 0 else "-"
    return f"{e.value:,.{d}f} ({e.low:,.{d}f}{sep}{e.high:,.{d}f})"


def forecast_line(f: Forecast) -> str:
    """The one line said in a diagnosis and a watch: the ceiling, the share reached, what 1,000
    more steps buy; for a run that came down, from what to what and where it settles; or why
    there is no forecast yet."""
    if f.abstain and coming_down(f):
        return f"Forecast: {run_row(f)}."
    if f.abstain:
        return f"Forecast: not enough to forecast yet ({f.abstain})."
    if f.asymptote is None:
        return "Forecast: none."
    if f.past_peak and f.now is not None:
        return f"Forecast: past its best; {past_best_settles(f)}."
    if at_ceiling(f):
        head = f"Forecast: at its forecast ceiling, near {interval(f.asymptote)}"
        more = ceiling_more(f)
        return f"{head}; the curve has stopped moving." if more is None else f"{head}: {more}."
    if f.fell:
        parts = [fell_words(f), f"the fit expects it to settle near {interval(f.asymptote)}"]
    elif settles(f):
        parts = [f"the fit expects it to settle near {interval(f.asymptote)}"]
    else:
        parts = [f"ceiling near {interval(f.asymptote)}"]
    if f.reached is not None:
        parts.append(f"{round(100 * f.reached)}% of it reached")
    if f.saturated:
        parts.append("the curve has stopped moving")
    elif buys(f):
        parts.append(buys(f))
    return "Forecast: " + "; ".join(parts) + "."


def buys(f: Forecast) -> str:
    """What another 1,000 steps buy: "another 1,000 steps buy about +0.01" ("" when unknown)."""
    if f.per_1000_steps is None or f.asymptote is None:
        return ""
    # Steps "buy" a gain; a forecast that goes down is said as a move ("buy about -0.11" reads
    # as a gain with a typo).
    verb = "buy" if f.per_1000_steps >= 0 or gain(f).startswith("less") else "move it"
    return f"another 1,000 {f.axis} {verb} {gain(f)}"


def ceiling_more(f: Forecast) -> str | None:
    """What more steps buy a run at its ceiling; None when the curve has stopped moving."""
    if f.saturated or f.per_1000_steps is None:
        return None
    if f.per_1000_steps < 0 and not gain(f).startswith("less"):
        # "buy almost nothing (about -0.02)" reads as a gain with a typo: a drift down is said
        # as one.
        return f"more steps buy nothing (the fit drifts {gain(f)} per 1,000 {f.axis})"
    return f"more steps buy almost nothing ({gain(f)} per 1,000 {f.axis})"


def beyond_title(f: Forecast) -> list[str]:
    """What the forecast line says beyond a card's title (the ceiling and the share reached, or
    "past its best", or "at its forecast ceiling"), as sentences: what more steps buy, or where a
    run past its best settles. A card that shows the title in place of the line says these."""
    if f.abstain or f.asymptote is None or f.fell:
        return []
    if f.past_peak and f.now is not None:
        said = past_best_settles(f)
        return [f"{said[0].upper()}{said[1:]}."]
    more = ceiling_more(f) if at_ceiling(f) else (None if f.saturated else buys(f))
    return [f"{more[0].upper()}{more[1:]}."] if more else []


def past_best_settles(f: Forecast) -> str:
    """Where a run past its best settles: "the fit expects it to settle near 0.15 (...), below
    the 0.43 it is at now"."""
    assert f.asymptote is not None and f.now is not None
    now = number(f.now, f.asymptote.low, f.asymptote.high)
    settle = f"the fit expects it to settle near {interval(f.asymptote)}"
    return f"{settle}, below the {now} it is at now"


def settles(f: Forecast) -> bool:
    """Whether the forecast is a level the run settles at rather than a ceiling it climbs to:
    the run came down from its start, or it has gained nothing measurable and the forecast lies
    below where it is now (no ceiling above it to reach)."""
    if f.fell:
        return True
    return (
        f.asymptote is not None
        and f.now is not None
        and f.reached is None
        and not f.past_peak
        and f.asymptote.value < f.now
    )


def at_ceiling(f: Forecast) -> bool:
    """Whether the run is at its forecast ceiling: the share reached rounds to 100% (a run the fit
    expects to fall back is past its best instead, and is said so apart)."""
    return (
        f.asymptote is not None
        and not f.abstain
        and not f.past_peak
        and f.reached is not None
        and round(100 * f.reached) >= 100
    )


def gain(f: Forecast) -> str:
    """What 1,000 more steps buy, with the decimals the ceiling's interval is written with: "about
    +0.012", or "less than 0.001" when it rounds to nothing ("+0.000" reads as a broken figure)."""
    assert f.per_1000_steps is not None and f.asymptote is not None
    d = _decimals(f.asymptote.low, f.asymptote.high)
    if round(f.per_1000_steps, d) == 0:
        return f"less than {10.0**-d:.{d}f}"
    return f"about {f.per_1000_steps:+.{d}f}"


def fell_words(f: Forecast) -> str:
    """How far a curve that fell has come down: "down since its start (0.52 to 0.31)", or, one
    that climbed and is coming down again, "down from its best (0.70 to 0.44)"."""
    assert f.now is not None
    if not f.fell and f.peak is not None:
        return f"down from its best ({number(f.peak, f.now)} to {number(f.now, f.peak)})"
    assert f.start is not None
    return f"down since its start ({number(f.start, f.now)} to {number(f.now, f.start)})"


def coming_down(f: Forecast) -> bool:
    """Whether a forecast with no level says how far the run has come down instead: it fell
    below its start, or it is coming down from its best."""
    return f.fell or f.peak is not None


def reached_words(f: Forecast) -> str:
    """The share of the ceiling reached, for a run's row: "92% reached", or "at its ceiling"."""
    if at_ceiling(f):
        return "at its ceiling"
    return f"{round(100 * f.reached)}% reached" if f.reached is not None else ""


def run_row(f: Forecast) -> str | None:
    """A forecast run's row beside others: "ceiling 0.71 (0.68-0.74), 92% reached", where a run
    that fell settles ("settles near 0.30 (0.26-0.34), down since its start (...)"), or why
    there is no forecast; None when there is nothing to say."""
    if f.abstain and coming_down(f):
        return f"{fell_words(f)}, with no bend yet to show where it settles"
    if f.abstain:
        return f"not enough to forecast yet ({f.abstain})"
    if f.asymptote is None:
        return None
    if f.fell:
        return f"settles near {interval(f.asymptote)}, {fell_words(f)}"
    if settles(f):
        return f"settles near {interval(f.asymptote)}"
    reached = f", {reached_words(f)}" if reached_words(f) else ""
    return f"ceiling {interval(f.asymptote)}{reached}"


def diagnosis_line(f: Forecast) -> str:
    """The forecast in a diagnosis, one line: :func:`forecast_line`, or the abstention in a few
    words (its first clause: "only 12 points so far", "the curve is still before its bend")."""
    if not f.abstain or coming_down(f):
        return forecast_line(f)
    import re

    reason = re.split(r"[;:(,]", f.abstain, maxsplit=1)[0].strip()
    return f"Forecast: none yet ({reason or f.abstain})."


def forecast_sentences(f: Forecast) -> list[str]:
    """What a forecast says, in order, for a card or the terminal."""
    if f.abstain and coming_down(f):
        return [forecast_line(f), f"Why no level is forecast: {f.abstain}.", *f.notes]
    if f.abstain:
        return [f"Not enough to forecast yet: {f.abstain}."]
    out = [forecast_line(f)]
    if f.now is not None and f.asymptote is not None:
        out.append(f"Now at {number(f.now, f.asymptote.low, f.asymptote.high)} (the recent level).")
    if f.step_95 is not None and not f.saturated and not f.past_peak and f.last_step is not None:
        if f.step_95 > f.last_step:
            what = "fall still to come is over" if f.fell else "gain still to come is reached"
            out.append(
                f"95% of the {what} by step {f.step_95:,} ({f.step_95 - f.last_step:,} more)."
            )
    if f.saturated:
        out.append(
            "More steps buy nothing measurable: the last half of the curve is flat within its "
            "noise."
        )
    if f.at is not None and f.last_step is not None and f.at.step > f.last_step:
        out.append(f"At step {f.at.step:,}: {interval(f.at)}.")
    return out + f.notes
