"""From a run's metric series to quantity series, through the alias table (or a person's mapping).

When several frameworks' names match a run, the framework whose table matches
the most of the run's metric names wins, then the order of entries in its file
(curators list the preferred metric first).  Combinations (``add``,
``divide_by``) use only steps where every part was logged.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from rlmap_bot.runs.aliases import QUANTITIES, SHARE_QUANTITIES, Alias, AliasTable
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import RunData, Series

#: Tolerance for a value to count as a 0-1 share or pass rate (float printing).
UNIT_TOL = 1e-6
#: Which quantity a signal id stands for when a person maps a signal to a metric.
SIGNAL_QUANTITY = {
    "proxy_reward_trend": "task_reward",
    "train_solve_rate": "task_pass_rate",
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


#: A reward function's own series on the training rollouts as TRL's GRPOTrainer logs it:
#: ``rewards/<function>`` (with ``/mean`` since TRL 0.17; ``train/`` in front in TensorBoard and
#: W&B).  Anchored, so ``eval/rewards/...`` (the same parts on the evaluation set) is never one.
_REWARD_PART = re.compile(r"^(?:train/)?rewards/(?P<part>[^/]+?)(?:/mean)?$")


def reward_part(name: str) -> str | None:
    """The reward function a metric name is the mean of (TRL's ``rewards/<function>``), or None."""
    found = _REWARD_PART.search(name)
    return found["part"] if found is not None else None


def _pass_rate_from_parts(run: RunData, out: Resolution, mapped: set[str]) -> None:
    """The task's pass rate from a reward logged in parts: when every part but one is a format
    bonus (a name with "format"), and that one is named as a reward (``guess.rule_for``: no
    penalty, length or other measurement word), it is the task's own check.

    Recipes add a bonus for the answer's form to the task's check (TRL's ``think_format_reward``
    beside ``accuracy_reward``; Countdown's format and equation rewards), so the summed reward of
    a run that never solves a task still earns the bonus now and then: its mean is no pass rate.
    Said in a warning, with the ``--map`` that changes it; a part outside 0-1 is no pass rate."""
    if "task_pass_rate" in out.series or "task_pass_rate" in mapped:
        return
    parts = {
        part: run.series[name] for name in run.series if (part := reward_part(name)) is not None
    }
    task = [p for p in parts if "format" not in p.lower()]
    if len(parts) < 2 or len(task) != 1:
        return
    series = parts[task[0]]
    from rlmap_bot.runs.guess import rule_for

    rule = rule_for(series.name)
    if rule is None or rule.quantity != "task_reward":
        return  # a length penalty or another measurement is no pass rate
    finite = series.values[np.isfinite(series.values)]
    if finite.size == 0 or finite.min() < -UNIT_TOL or finite.max() > 1 + UNIT_TOL:
        return
    out.series["task_pass_rate"] = QuantitySeries(
        "task_pass_rate",
        series.steps,
        series.values,
        series.name,
        "fraction",
        "the reward's one part that is not a format bonus",
    )
    out.warnings.append(
        f"read {series.name} as the training pass rate: the reward's other parts "
        f"({', '.join(sorted(p for p in parts if p != task[0]))}) are format bonuses "
        f"(--map train_solve_rate=METRIC to choose another)"
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
    mapped = {SIGNAL_QUANTITY.get(k, k) for k in mapping or {}}
    _by_name(run, hits, out, mapped)
    _pass_rate_from_parts(run, out, mapped)
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
