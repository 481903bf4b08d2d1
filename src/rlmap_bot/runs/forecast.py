"""A run's forecast from what its logs gave: the curve a forecast follows by default, and the
forecast of it (:mod:`rlmap_bot.scaling.outlook`) that every diagnosis from logs carries.

``diagnose --run``, a log dropped in a Slack diagnosis thread and each watch check get it through
:func:`rlmap_bot.runs.verdict.verdict_for`, which calls :func:`run_forecast`; ``forecast`` and
``compare`` pick the same curve with :func:`default_curve` when no ``--metric`` is named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rlmap_bot.results.scaling import Forecast
    from rlmap_bot.runs.quantities import QuantitySeries
    from rlmap_bot.runs.signals import Derivation

#: What each curve a forecast may follow measures, in words.
CURVE_WORDS = {"heldout_score": "held-out score", "task_reward": "training reward"}


def finite(series: QuantitySeries) -> tuple[np.ndarray, np.ndarray]:
    """The series' steps and values where the value is a number."""
    values = np.asarray(series.values, dtype=float)
    ok = np.isfinite(values)
    return np.asarray(series.steps)[ok], values[ok]


def default_curve(derivation: Derivation) -> tuple[str, QuantitySeries] | None:
    """The curve a forecast follows when none is named: the held-out score when it is logged
    densely enough to fit (the forecaster's own least number of points), else the training
    reward, else a sparse held-out score; None when the run logged neither."""
    from rlmap_bot.scaling.forecast import PARAMS

    held = derivation.series("heldout_score")
    reward = derivation.series("task_reward")
    if held is not None and finite(held)[0].size >= PARAMS["min_points"]:
        return "heldout_score", held
    if reward is not None and finite(reward)[0].size:
        return "task_reward", reward
    if held is not None and finite(held)[0].size:
        return "heldout_score", held
    return None


def run_forecast(derivation: Derivation, source: str | None = None) -> Forecast | None:
    """The forecast of the run's default curve against its steps (an abstention when the curve
    cannot be forecast yet, with why); None when the run logged no reward and no held-out score."""
    from rlmap_bot.scaling.outlook import outlook

    chosen = default_curve(derivation)
    if chosen is None:
        return None
    quantity, series = chosen
    steps, values = finite(series)
    return outlook(
        steps.astype(float),
        values,
        source=source or derivation.run.path,
        metric=series.label,
        quantity=CURVE_WORDS[quantity],
    )
