"""What every signal's derivation shares: the run's quantities as :class:`Readings` (dense points,
windows, recent means, levels and trends), and the helpers that word where a value came from.

Each concern (:mod:`~rlmap_bot.runs.signals.optimization`, ``reward``, ``evaluation``,
``rollouts``, ``environments``) reads its signals as plain functions of a :class:`Readings`;
:func:`rlmap_bot.runs.signals.derive_signals` puts them together."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from rlmap_bot.results.faults import RunFault
from rlmap_bot.results.runs import SignalSource
from rlmap_bot.runs import stats
from rlmap_bot.runs.quantities import UNIT_TOL, QuantitySeries

#: What a signal reader returns: the value, in the catalog's terms, and where it came from.
Reading = tuple[Any, SignalSource]


class Missing(Exception):
    """The run's logs cannot give this signal; the message says why (shown beside the verdict)."""


def finite_points(q: QuantitySeries) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(q.values)
    return q.steps[ok], q.values[ok]


def step_span(steps: np.ndarray, sl: slice) -> tuple[int, int]:
    part = steps[sl]
    return int(part[0]), int(part[-1])


def steps_text(steps: np.ndarray, sl: slice) -> str:
    a, b = step_span(steps, sl)
    return f"steps {a}-{b}" if a != b else f"step {a}"


def with_level(src: SignalSource, steps: np.ndarray, lv: stats.Level) -> None:
    """Add the run's first and last levels to a source (its detail, and the chart's marks)."""
    src.first_level, src.level = round(lv.first, 6), round(lv.last, 6)
    src.first_start, src.first_end = step_span(steps, lv.first_slice)
    if "first level" not in src.detail:
        src.detail += "; " + lv.describe(steps)


class Readings:
    """One run's quantities, the recent window chosen (None: the default) and the run's faults
    (every one, as the derivation lists them); every signal reader builds on these."""

    def __init__(self, series: dict[str, QuantitySeries], window, faults: Sequence[RunFault] = ()):
        self.q, self.window = series, window
        self.faults = tuple(faults)

    def fault(self, *kinds: str) -> RunFault | None:
        """The earliest fault of any of these kinds, or None (a kind may hold several faults:
        NaN/inf in two metrics are two ``nan`` faults)."""
        found = [f for f in self.faults if f.kind in kinds]
        return min(found, key=lambda f: f.first_step) if found else None

    def need(self, quantity: str, what: str) -> QuantitySeries:
        q = self.q.get(quantity)
        if q is None:
            raise Missing(f"no metric for {what} in this run (map one with --map)")
        return q

    def dense(self, quantity: str, what: str, minimum: int = 1):
        q = self.need(quantity, what)
        steps, values = finite_points(q)
        if steps.size < minimum:
            raise Missing(f"{q.label} has {steps.size} finite points; {minimum} needed")
        win = stats.windows(steps, self.window)
        if win is None:
            raise Missing(f"{q.label} has too few points ({steps.size})")
        return q, steps, values, win

    def recent_mean(
        self, quantity: str, what: str, method: str, share: bool = True, digits: int = 4
    ):
        q, steps, values, win = self.dense(quantity, what)
        value = float(np.mean(values[win.recent]))
        if share and not (-UNIT_TOL <= value <= 1 + UNIT_TOL):
            raise Missing(
                f"{q.label} averages {value:.3g}, outside 0-1: is it a percent or a count? map a "
                f"0-1 share with --map"
            )
        if share:
            value = min(max(value, 0.0), 1.0)
        a, b = step_span(steps, win.recent)
        return round(value, digits), SignalSource(
            metric=q.label,
            window=steps_text(steps, win.recent),
            method=method,
            detail=f"mean {value:.3g} over {win.recent.stop - win.recent.start} logged steps",
            start=a,
            end=b,
        )

    def level(self, steps, values, win) -> stats.Level:
        """The run's first level against its last (the recent window's, when one was chosen)."""
        lv = stats.level(values, win.recent if self.window is not None else None)
        if lv is None:
            raise Missing(f"too few points ({values.size}) for a level")
        return lv

    def trend(self, q: QuantitySeries, steps, values, win) -> tuple[stats.Trend, SignalSource]:
        if (
            win.recent.stop - win.previous.start < stats.MIN_TREND_POINTS
            or win.previous.stop - win.previous.start < stats.MIN_WINDOW_POINTS
        ):
            raise Missing(f"{q.label} has too few points after warm-up for a trend ({steps.size})")
        t = stats.judge_trend(
            steps[win.previous],
            values[win.previous],
            steps[win.recent],
            values[win.recent],
            values[win.start :],
        )
        a, b = step_span(steps, win.recent)
        c, d = step_span(steps, win.previous)
        return t, SignalSource(
            metric=q.label,
            window=f"{steps_text(steps, win.recent)} vs {steps_text(steps, win.previous)}",
            method="median of the recent window against the window before; flat within max(5% of "
            "the series' scale, 1 step-to-step noise sigma); Sen's slope must agree in sign",
            detail=t.describe(),
            margin=round(t.margin, 3) if t.direction != "flat" else None,
            start=a,
            end=b,
            baseline_start=c,
            baseline_end=d,
        )

    def leveled_trend(self, q: QuantitySeries, steps, values, win) -> tuple[str, SignalSource]:
        """The recent trend, and the run's level against its first: a level at or below a quarter
        of a positive start reads *falling* whatever the recent window does (it fell, then sat
        flat)."""
        t, src = self.trend(q, steps, values, win)
        lv = self.level(steps, values, win)
        with_level(src, steps, lv)
        if lv.collapsed() and t.direction != "falling":
            src.detail += (
                f"; read as falling: now at most {stats.COLLAPSED_SHARE:.0%} of its first level"
            )
            src.margin = None  # a fall to a quarter of the start is no call at the band's edge
            return "falling", src
        return t.direction, src
