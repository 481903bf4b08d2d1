"""Signals from a run's logs, one home: ``derive_signals`` gives every diagnosis signal one run's
scalars can honestly give, each with its provenance, the run's faults and its levels.

Everything else is listed in ``missing`` with the reason (some signals need per-sample data, a
second run, or a person's audit).  Values are in the catalog's terms (choices, fractions 0-1,
numbers, booleans) and pass ``Engine.validate``.  Each concern reads its own signals as plain
functions of the shared :class:`~rlmap_bot.runs.signals.base.Readings`: ``optimization``,
``reward``, ``evaluation``, ``rollouts``, ``environments``; ``faults`` and ``shifts`` find what
is said before any verdict, ``levels`` each quantity's start against its end.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from pydantic import BaseModel, Field, PrivateAttr

from rlmap_bot.results.faults import Fault, NonFinite
from rlmap_bot.results.runs import RunInfo, SignalSource
from rlmap_bot.runs.aliases import AliasTable, default_aliases
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import RunData
from rlmap_bot.runs.quantities import QuantitySeries, resolve
from rlmap_bot.runs.signals import environments, evaluation, optimization, reward, rollouts
from rlmap_bot.runs.signals.base import Missing, Reading, Readings
from rlmap_bot.runs.signals.faults import find_faults, nonfinite_notes
from rlmap_bot.runs.signals.levels import LevelReading, readings

#: Signals one run's logs cannot give, and why (the team notes, "What can be derived").
NOT_FROM_LOGS = {
    "reward_audit_error_rate": "needs people or a stronger grader to check rewarded samples",
    "batch_doubling_speedup": "needs a second run at twice the batch size",
    "eval_seed_std": "needs several evaluation seeds or training runs",
    "eval_num_seeds": "a property of your evaluation set-up, not of the training log",
    "benchmark_ceiling_fraction": "needs per-item benchmark results",
    "contamination_suspected": "needs an overlap check between eval items and training data",
    "generation_utilization": "needs accelerator utilisation from cluster monitoring",
    "group_size": "a config value (rollout.n, num_generations), not logged as a metric",
    "length_tail_ratio": "needs per-sample response lengths (p99 over median), not per-step means",
    "incorrect_length_ratio": "needs per-sample lengths split by correctness",
    "passk_vs_base": "needs large-k sampling of the base model and the checkpoint",
}


class Derivation(BaseModel):
    """Signal values derived from a run, their sources, what could not be derived, and warnings."""

    run: RunInfo
    signals: dict[str, Any] = Field(default_factory=dict)
    signal_sources: dict[str, SignalSource] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)
    missing_reasons: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    quantities: dict[str, str] = Field(
        default_factory=dict, description="quantity -> the metric(s) it was read from"
    )
    faults: list[Fault] = Field(
        default_factory=list, description="not learning, or NaN/inf: said before any verdict"
    )
    levels: dict[str, LevelReading] = Field(
        default_factory=dict,
        description="quantity -> its start against its end, and the run's direction",
    )
    _series: dict[str, QuantitySeries] = PrivateAttr(default_factory=dict)

    def series(self, quantity: str) -> QuantitySeries | None:
        """The quantity's series as derived (not serialised; for charts)."""
        return self._series.get(quantity)


DERIVED: tuple[str, ...] = (
    "train_solve_rate",
    "proxy_reward_trend",
    "heldout_score_trend",
    "eval_improvement",
    "zero_advantage_fraction",
    "task_repeat_epochs",
    "env_time_fraction",
    "rollout_wait_fraction",
    "policy_lag_steps",
    "length_growth",
    "truncation_rate",
    "entropy_trend",
    "grad_norm_spikes",
    "loss_divergence",
    "clip_fraction",
    "kl_to_reference",
    "kl_loss_share",
    "logprob_mismatch_trend",
)
#: Each signal's reader, from its concern's table.
READERS: dict[str, Callable[[Readings], Reading]] = {
    **reward.SIGNALS,
    **evaluation.SIGNALS,
    **environments.SIGNALS,
    **rollouts.SIGNALS,
    **optimization.SIGNALS,
}
assert set(READERS) == set(DERIVED), "every derived signal has one reader, and only those"


def derive_signals(
    run: RunData,
    aliases: AliasTable | None = None,
    window: int | float | None = None,
    mapping: Mapping[str, str] | None = None,
) -> Derivation:
    """Derive every signal the run's logs can give.

    ``window``: the recent window trends and means are judged on, as a number of
    steps (int) or a share of the run (float in (0, 1]); default the last 25% of
    logged points, at least 20.  ``mapping``: signal id or quantity -> metric
    name, for metrics the alias table does not know (``--map SIGNAL=METRIC``).
    """
    aliases = aliases or default_aliases()
    length = (
        (run.last_step - run.first_step + 1)
        if run.first_step is not None and run.last_step is not None
        else 0
    )
    if isinstance(window, int) and window >= length:
        raise RunReadError(
            f"--window {window} covers the whole run (steps {run.first_step}-{run.last_step}); a "
            f"trend needs points before the window: give fewer steps, or a share like 25%"
        )
    resolution = resolve(run, aliases, mapping)
    info = RunInfo(
        format=run.format,
        path=run.path,
        run_id=run.run_id,
        framework=resolution.framework,
        steps=run.step_count,
        first_step=run.first_step,
        last_step=run.last_step,
        metrics=run.metrics,
    )
    out = Derivation(
        run=info,
        warnings=[*run.warnings, *resolution.warnings],
        quantities={
            q: s.label + (f" [{s.source}]" if s.source else "")
            for q, s in sorted(resolution.series.items())
        },
    )
    out._series = resolution.series
    out.faults = find_faults(run, resolution.series)
    out.levels = readings(resolution.series)
    shared = Readings(resolution.series, window, out.faults)
    for signal in DERIVED:
        try:
            value, source = READERS[signal](shared)
        except Missing as missing:
            out.missing.append(signal)
            out.missing_reasons[signal] = str(missing)
            continue
        out.signals[signal] = value
        out.signal_sources[signal] = source
    for signal, why in NOT_FROM_LOGS.items():
        out.missing.append(signal)
        out.missing_reasons[signal] = why
    notes = nonfinite_notes(resolution.series)
    out.warnings += notes
    told = [f.metric for f in out.faults if isinstance(f, NonFinite)] + notes
    for metric, steps in sorted(run.nonfinite.items()):
        if any(metric in said for said in told):
            continue  # said above, as a fault or as a note
        out.warnings.append(
            f"NaN/inf in {metric} at step {steps[0]}"
            + (f" and {len(steps) - 1} more" if len(steps) > 1 else "")
        )
    heldout = resolution.series.get("heldout_score")
    if heldout is not None and heldout.steps.size <= evaluation.EVAL_MIN:
        out.warnings.append(
            f"sparse validation: {heldout.label} has {heldout.steps.size} evaluations"
        )
    return out
