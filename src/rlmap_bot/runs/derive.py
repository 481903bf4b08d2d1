"""``derive_signals``: diagnosis signal values from one run's logs, each with its provenance.

Only what one run's scalars can honestly give is derived; everything else is
listed in ``missing`` with the reason (some signals need per-sample data, a
second run, or a person's audit).  Values are in the catalog's terms (choices,
fractions 0-1, numbers, booleans) and pass ``Engine.validate``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np
from pydantic import BaseModel, Field, PrivateAttr

from rlmap_bot.results.runs import Fault, RunInfo, SignalSource
from rlmap_bot.runs import stats
from rlmap_bot.runs.aliases import AliasTable, default_aliases
from rlmap_bot.runs.derive_optimization import OptimizationSignals
from rlmap_bot.runs.deriving import (
    EVAL_LAST,
    EVAL_MIN,
    EVAL_RECENT_MIN,
    UNIT_TOL,
    Missing,
    finite_points,
)
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.faults import find_faults
from rlmap_bot.runs.levels import LevelReading, readings
from rlmap_bot.runs.model import RunData
from rlmap_bot.runs.quantities import QuantitySeries, resolve

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


class _Deriver(OptimizationSignals):
    def proxy_reward_trend(self):
        direction, src = self.leveled_trend(*self.dense("task_reward", "the training reward"))
        collapse = self.faults.get(
            "reward_collapse"
        )  # the tail's collapse, not the quarter's median
        if collapse is not None and direction != "falling":
            direction, src.detail = "falling", src.detail + f"; read as falling: {collapse.detail}"
        return direction, src

    def train_solve_rate(self):
        q, steps, values, win = self.dense("task_reward", "the training reward")
        lo, hi = float(values.min()), float(values.max())
        if lo < -UNIT_TOL or hi > 1 + UNIT_TOL:
            raise Missing(
                f"{q.label} ranges {lo:.3g} to {hi:.3g}, not a 0-1 pass rate; "
                f"map a success-rate metric with --map train_solve_rate=METRIC"
            )
        value, src = self.recent_mean(
            "task_reward",
            "the training reward",
            "mean task reward over the recent window (a 0-1 reward is a pass rate)",
        )
        return value, src

    def heldout_score_trend(self):
        q = self.need("heldout_score", "a held-out (validation) score")
        steps, values = finite_points(q)
        if steps.size - 1 < EVAL_MIN:
            raise Missing(
                f"{q.label} has {steps.size} evaluations; at least {EVAL_MIN + 1} are needed"
            )
        steps, values = steps[1:], values[1:]  # the first evaluation often jumps (format learning)
        win = stats.windows(steps, self.window) if self.window is not None else None
        n_recent = (win.recent.stop - win.recent.start) if win else 0
        k = (
            n_recent
            if n_recent >= EVAL_RECENT_MIN
            else max(EVAL_RECENT_MIN, math.ceil(steps.size / 2))
        )
        k = min(k, steps.size)
        rs, rv = steps[-k:], values[-k:]
        half = k // 2
        t = stats.judge_trend(rs[:half], rv[:half], rs[half:], rv[half:], values)
        direction, detail = t.direction, t.describe()
        lv = stats.level(values)  # against the first evaluation after the dropped one
        if lv is not None:
            detail += "; " + lv.describe(steps)
            if lv.collapsed() and direction != "falling":
                direction = "falling"
                detail += (
                    f"; read as falling: now at most {stats.COLLAPSED_SHARE:.0%} of its first level"
                )
        if (
            direction == "falling"
        ):  # a score that rose and then fell: where it peaked says more than its ends
            top = int(np.argmax(values))
            detail += f"; highest {values[top]:.3g} at step {int(steps[top])}"
        return direction, SignalSource(
            metric=q.label,
            window=f"the last {k} evaluations, steps {int(rs[0])}-{int(rs[-1])}",
            method="sparse validation: first evaluation dropped, the later half of the recent "
            "evaluations "
            "against the earlier half; flat band and Sen's slope as for dense trends; a level at "
            "most "
            "a quarter of the first evaluations' reads falling",
            detail=detail,
            start=int(rs[half]),
            end=int(rs[-1]),
            baseline_start=int(rs[0]),
            baseline_end=int(rs[half - 1]),
        )

    def eval_improvement(self):
        q = self.need("heldout_score", "a held-out (validation) score")
        steps, values = finite_points(q)
        reward = self.q.get("task_reward")
        first_train = int(reward.steps[0]) if reward is not None and reward.steps.size else None
        if steps.size < EVAL_LAST + 1 or first_train is None or steps[0] >= first_train:
            raise Missing(
                "needs an evaluation before training started (val_before_train) as the baseline"
            )
        base = float(values[0])
        last = float(np.median(values[-EVAL_LAST:]))
        in_unit = values.min() >= -UNIT_TOL and values.max() <= 1 + UNIT_TOL
        scale = 100.0 if in_unit else 1.0
        value = round((last - base) * scale, 3)
        unit = "points (percent)" if in_unit else "score units"
        return value, SignalSource(
            metric=q.label,
            window=f"step {int(steps[0])} vs steps {int(steps[-EVAL_LAST])}-{int(steps[-1])}",
            method=f"median of the last {EVAL_LAST} evaluations minus the evaluation before "
            f"training, in {unit}",
            detail=f"{base:.3g} -> {last:.3g}",
            start=int(steps[-EVAL_LAST]),
            end=int(steps[-1]),
            baseline_start=int(steps[0]),
            baseline_end=int(steps[0]),
        )

    def task_repeat_epochs(self):
        q, steps, values, win = self.dense("epoch", "the epoch")
        last = float(values[-1])
        if q.unit == "epochs":
            return round(max(0.0, last), 3), SignalSource(
                metric=q.label,
                window=f"step {int(steps[-1])}",
                method="last logged (fractional) epoch",
                detail=f"{last:.3g} passes over the prompts",
                start=int(steps[-1]),
                end=int(steps[-1]),
            )
        # An epoch index (0-based): passes = index + the share of the current epoch done,
        # with the epoch length taken from where the index last changed.
        changes = np.flatnonzero(np.diff(values) > 0)
        if changes.size >= 1:
            starts = steps[changes + 1]
            length = (
                float(np.median(np.diff(np.concatenate([[steps[0]], starts]))))
                if starts.size
                else 0.0
            )
            done = (steps[-1] - starts[-1] + 1) / length if length > 0 else 0.0
            value = last + min(done, 1.0)
            how = (
                f"epoch index {last:.0f} + {min(done, 1.0):.2f} of an epoch of about "
                f"{length:.0f} steps"
            )
        else:
            value = last + 1.0
            how = (
                f"epoch index {last:.0f} and no epoch boundary seen: an upper bound of "
                f"{last + 1:.0f} pass(es)"
            )
        return round(value, 3), SignalSource(
            metric=q.label,
            window=f"steps {int(steps[0])}-{int(steps[-1])}",
            method="passes over the prompts from the 0-based epoch index",
            detail=how,
            start=int(steps[0]),
            end=int(steps[-1]),
        )


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
            f"--window {window} covers the whole run (steps {run.first_step}-{run.last_step}); "
            f"a trend needs points before the window: give fewer steps, or a share like 25%"
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
    deriver = _Deriver(resolution.series, window, out.faults)
    for signal in DERIVED:
        fn: Callable = getattr(deriver, signal)
        try:
            value, source = fn()
        except Missing as missing:
            out.missing.append(signal)
            out.missing_reasons[signal] = str(missing)
            continue
        out.signals[signal] = value
        out.signal_sources[signal] = source
    for signal, why in NOT_FROM_LOGS.items():
        out.missing.append(signal)
        out.missing_reasons[signal] = why
    for metric, steps in sorted(run.nonfinite.items()):
        out.warnings.append(
            f"NaN/inf in {metric} at step {steps[0]}"
            + (f" and {len(steps) - 1} more" if len(steps) > 1 else "")
        )
    heldout = resolution.series.get("heldout_score")
    if heldout is not None and heldout.steps.size <= EVAL_MIN:
        out.warnings.append(
            f"sparse validation: {heldout.label} has {heldout.steps.size} evaluations"
        )
    return out
