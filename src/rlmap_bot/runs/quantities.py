"""From a run's metric series to quantity series, through the alias table (or a person's mapping).

When several frameworks' names match a run, the framework whose table matches
the most of the run's metric names wins, then the order of entries in its file
(curators list the preferred metric first).  Combinations (``add``,
``divide_by``) use only steps where every part was logged.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from rlmap_bot.runs.aliases import QUANTITIES, SHARE_QUANTITIES, Alias, AliasTable
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import RunData, Series

#: Which quantity a signal id stands for when a person maps a signal to a metric.
SIGNAL_QUANTITY = {
    "proxy_reward_trend": "task_reward",
    "train_solve_rate": "task_reward",
    "heldout_score_trend": "heldout_score",
    "eval_improvement": "heldout_score",
    "entropy_trend": "entropy",
    "length_growth": "response_length",
    "truncation_rate": "truncation",
    "rollout_wait_fraction": "trainer_idle",
    "env_time_fraction": "env_time_share",
    "grad_norm_spikes": "grad_norm",
    "clip_fraction": "clip_fraction",
    "kl_to_reference": "kl_reference",
    "zero_advantage_fraction": "zero_std_fraction",
    "task_repeat_epochs": "epoch",
    "policy_lag_steps": "staleness",
    "logprob_mismatch_trend": "mismatch_kl",
    "loss_divergence": "loss",
}
#: The unit a mapped metric is taken to have (a person maps a plain value, not a percent).
MAPPED_UNIT = {
    **{q: "fraction" for q in SHARE_QUANTITIES},
    "kl_reference": "nats",
    "epoch": "epochs",
    "response_length": "tokens",
    "staleness": "steps",
}


@dataclass
class QuantitySeries:
    quantity: str
    steps: np.ndarray
    values: np.ndarray
    label: str
    unit: str
    source: str = ""
    includes_coef: bool = False


@dataclass
class Resolution:
    series: dict[str, QuantitySeries] = field(default_factory=dict)
    framework: str | None = None
    warnings: list[str] = field(default_factory=list)


def align(parts: Sequence[Series | QuantitySeries]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The steps every part has (each part's steps are
    unique and sorted), and each part's values there.
    """
    steps = parts[0].steps
    for p in parts[1:]:
        steps = np.intersect1d(steps, p.steps, assume_unique=True)
    return steps, [p.values[np.searchsorted(p.steps, steps)] for p in parts]


def _union(parts: list[Series], how: str) -> tuple[np.ndarray, np.ndarray]:
    if len(parts) == 1:
        return parts[0].steps, parts[0].values
    steps = parts[0].steps
    for p in parts[1:]:
        steps = np.union1d(steps, p.steps)
    grid = np.full((len(parts), steps.size), np.nan)
    for i, p in enumerate(parts):
        grid[i, np.searchsorted(steps, p.steps)] = p.values
    present = ~np.isnan(grid)
    with np.errstate(invalid="ignore"):
        total = np.where(present, grid, 0.0).sum(axis=0)
        count = present.sum(axis=0)
        values = total if how == "sum" else total / np.maximum(count, 1)
    # A NaN that was logged (not a missing cell) stays visible as divergence evidence.
    return steps, np.where(count == 0, np.nan, values)


def framework_scores(hits: Mapping[str, Sequence[Alias]]) -> dict[str, int]:
    """How many of each framework's entries the run's metric
    names (each with the aliases it matches) meet.

    An entry counts once however many names it matches: a catch-all pattern (OpenRLHF's ``eval/*``)
    meeting every ``eval/`` metric of another framework's run is one piece of evidence, not twenty.
    """
    entries: dict[str, set[int]] = {}
    for found in hits.values():
        for alias in found:
            entries.setdefault(alias.framework, set()).add(alias.order)
    return {fw: len(orders) for fw, orders in entries.items()}


def _build(alias: Alias, run: RunData) -> QuantitySeries | None:
    entry = alias.entry
    matched = [run.series[n] for n in sorted(run.series) if alias.matches(n)]
    if not matched or any(h not in run.series for h in entry.add + entry.divide_by):
        return None
    steps, values = _union(matched, entry.aggregate)
    label = (
        matched[0].name
        if len(matched) == 1
        else f"{entry.aggregate} of {', '.join(m.name for m in matched)}"
    )
    if entry.add:
        steps, vals = align(
            [Series(name="x", steps=steps, values=values), *[run.series[h] for h in entry.add]]
        )
        values = np.sum(vals, axis=0)
        label = " + ".join([label, *entry.add])
    if entry.divide_by:
        steps, vals = align(
            [
                Series(name="x", steps=steps, values=values),
                *[run.series[h] for h in entry.divide_by],
            ]
        )
        denominator = np.sum(vals[1:], axis=0)
        ok = denominator > 0
        steps, values = steps[ok], vals[0][ok] / denominator[ok]
        label = f"{label} / {' + '.join(entry.divide_by)}"
    if entry.unit == "percent":
        values = values / 100.0
    if entry.complement:
        values = 1.0 - values
        label = f"1 - {label}"
    unit = "fraction" if entry.unit == "percent" else entry.unit
    return QuantitySeries(
        entry.quantity, steps, values, label, unit, alias.label, entry.includes_coef
    )


def _by_name(
    run: RunData, hits: Mapping[str, Sequence[Alias]], out: Resolution, mapped: set[str]
) -> None:
    """Quantities the table found no metric for, read
    from names it does not know (said in a warning).
    """
    from rlmap_bot.runs.guess import UNITS, guesses

    wanted = [q for q in UNITS if q not in out.series and q not in mapped]
    unknown = [name for name in run.series if not hits.get(name)]
    if not wanted or not unknown:
        return
    for quantity, guess in guesses(unknown, wanted).items():
        s = run.series[guess.metric]
        out.series[quantity] = QuantitySeries(
            quantity, s.steps, s.values, guess.metric, UNITS[quantity], "read by its name"
        )
        out.warnings.append(guess.said)


def resolve(
    run: RunData, table: AliasTable, mapping: Mapping[str, str] | None = None
) -> Resolution:
    """Every quantity the run's series can give."""
    out = Resolution()
    hits = {name: table.lookup(name) for name in run.metrics}  # pattern matching, once per name
    scores = framework_scores(hits)
    if scores:
        best = max(scores.items(), key=lambda kv: (kv[1], kv[0] != "generic"))
        # Frameworks whose tables meet as many of the run's names (TRL and OpenRLHF both log
        # train/reward) are all named: picking one would be a coin toss said as a fact.
        tied = sorted(fw for fw, n in scores.items() if n == best[1] and fw != "generic")
        if len(tied) > 1:
            out.framework = " or ".join(tied)
        else:
            versions = sorted(
                {
                    a.entry.version
                    for found in hits.values()
                    for a in found
                    if a.framework == best[0] and a.entry.version
                }
            )
            out.framework = best[0] + (f" ({', '.join(versions)})" if versions else "")
    ranked = sorted(
        table.aliases,
        key=lambda a: (-scores.get(a.framework, 0), a.framework == "generic", a.framework, a.order),
    )
    for alias in ranked:
        q = alias.entry.quantity
        if q in out.series:
            continue
        built = _build(alias, run)
        if built is not None:
            out.series[q] = built
    _by_name(run, hits, out, {SIGNAL_QUANTITY.get(k, k) for k in mapping or {}})
    for key, metric in (mapping or {}).items():
        quantity = SIGNAL_QUANTITY.get(key, key)
        if quantity not in QUANTITIES:
            raise RunReadError(
                f"--map {key}={metric}: '{key}' is neither a signal read from logs nor a quantity; "
                f"one of {', '.join(sorted(SIGNAL_QUANTITY))}"
            )
        series = run.series.get(metric)
        if series is None:
            near = difflib.get_close_matches(metric, run.metrics, n=1)
            raise RunReadError(
                f"--map {key}={metric}: no metric '{metric}' in this run"
                + (f"; did you mean '{near[0]}'?" if near else "")
            )
        out.series[quantity] = QuantitySeries(
            quantity,
            series.steps,
            series.values,
            metric,
            MAPPED_UNIT.get(quantity, "value"),
            "mapped by you",
        )
    return out
