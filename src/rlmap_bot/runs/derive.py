"""``derive_signals``: diagnosis signal values from one run's logs, each with its provenance.

Only what one run's scalars can honestly give is derived; everything else is
listed in ``missing`` with the reason (some signals need per-sample data, a
second run, or a person's audit).  Values are in the catalog's terms (choices,
fractions 0-1, numbers, booleans) and pass ``Engine.validate``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field, PrivateAttr

from rlmap_bot.results.runs import Fault, RunInfo, SignalSource
from rlmap_bot.runs import stats
from rlmap_bot.runs.aliases import AliasTable
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.faults import find_faults
from rlmap_bot.runs.levels import LevelReading, readings
from rlmap_bot.runs.model import RunData
from rlmap_bot.runs.quantities import QuantitySeries, align, resolve
from rlmap_bot.runs.read import default_aliases

#: Entropy collapse, judged against the run's first level and the early level after warm-up.
#: "Lost most of its starting value and still falling" (the entropy_trend signal): at most half
#: of either level with a falling recent trend is *collapsing*.  At most a quarter of the first
#: level (stats.COLLAPSED_SHARE), whatever the recent trend, is *collapsed* (the notes: "a run
#: that collapsed earlier and now sits flat at a tenth of its start has collapsed").
COLLAPSE_MOST = 0.5
#: Rising entropy: a rising recent trend with the level at least 1.2x the early one
#: (judgement: a trend that has not moved the level 20% is drift), or at least 2x anyway.
RISE_MIN, RISE_DEEP = 1.2, 2.0
#: Declined entropy: at most 0.8 of the first or the early level, neither collapsed nor
#: collapsing nor rising: the same judgement as RISE_MIN, mirrored (a fall of a fifth is no
#: drift). Reading such a curve as "stable" told users the opposite of their chart.
DECLINED_SHARE = 0.8
#: Sparse validation: drop the first evaluation (it often jumps: format learning, per the
#: notes) and judge at least 6 recent evaluations, 3 against 3 (judgement: the fewest where a
#: median means anything); with fewer than 5 evaluations after the first, no trend.
EVAL_RECENT_MIN, EVAL_MIN = 6, 5
#: eval_improvement: the median of the last 3 evaluations against the pre-training one
#: (judgement: 3 damps one noisy eval without reaching back into older checkpoints).
EVAL_LAST = 3
#: Tolerance for a reward to count as a 0-1 pass rate (float printing).
UNIT_TOL = 1e-6

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


class _Missing(Exception):
    pass


def _finite(q: QuantitySeries) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(q.values)
    return q.steps[ok], q.values[ok]


def _span(steps: np.ndarray, sl: slice) -> tuple[int, int]:
    part = steps[sl]
    return int(part[0]), int(part[-1])


def _steps_text(steps: np.ndarray, sl: slice) -> str:
    a, b = _span(steps, sl)
    return f"steps {a}-{b}" if a != b else f"step {a}"


def _with_level(src: SignalSource, steps: np.ndarray, lv: stats.Level) -> None:
    """Add the run's first and last levels to a source (its detail, and the chart's marks)."""
    src.first_level, src.level = round(lv.first, 6), round(lv.last, 6)
    src.first_start, src.first_end = _span(steps, lv.first_slice)
    if "first level" not in src.detail:
        src.detail += "; " + lv.describe(steps)


class _Deriver:
    def __init__(self, series: dict[str, QuantitySeries], window, faults: Sequence[Fault] = ()):
        self.q, self.window = series, window
        self.faults = {f.kind: f for f in faults}

    def need(self, quantity: str, what: str) -> QuantitySeries:
        q = self.q.get(quantity)
        if q is None:
            raise _Missing(f"no metric for {what} in this run (map one with --map)")
        return q

    def dense(self, quantity: str, what: str, minimum: int = 1):
        q = self.need(quantity, what)
        steps, values = _finite(q)
        if steps.size < minimum:
            raise _Missing(f"{q.label} has {steps.size} finite points; {minimum} needed")
        win = stats.windows(steps, self.window)
        if win is None:
            raise _Missing(f"{q.label} has too few points ({steps.size})")
        return q, steps, values, win

    def recent_mean(
        self, quantity: str, what: str, method: str, share: bool = True, digits: int = 4
    ):
        q, steps, values, win = self.dense(quantity, what)
        value = float(np.mean(values[win.recent]))
        if share and not (-UNIT_TOL <= value <= 1 + UNIT_TOL):
            raise _Missing(
                f"{q.label} averages {value:.3g}, outside 0-1: is it a percent or a count? "
                f"map a 0-1 share with --map"
            )
        if share:
            value = min(max(value, 0.0), 1.0)
        a, b = _span(steps, win.recent)
        return round(value, digits), SignalSource(
            metric=q.label,
            window=_steps_text(steps, win.recent),
            method=method,
            detail=f"mean {value:.3g} over {win.recent.stop - win.recent.start} logged steps",
            start=a,
            end=b,
        )

    def level(self, steps, values, win) -> stats.Level:
        """The run's first level against its last (the
        recent window's when the caller chose one).
        """
        lv = stats.level(values, win.recent if self.window is not None else None)
        if lv is None:
            raise _Missing(f"too few points ({values.size}) for a level")
        return lv

    def trend(self, q: QuantitySeries, steps, values, win) -> tuple[stats.Trend, SignalSource]:
        if (
            win.recent.stop - win.previous.start < stats.MIN_TREND_POINTS
            or win.previous.stop - win.previous.start < stats.MIN_WINDOW_POINTS
        ):
            raise _Missing(f"{q.label} has too few points after warm-up for a trend ({steps.size})")
        t = stats.judge_trend(
            steps[win.previous],
            values[win.previous],
            steps[win.recent],
            values[win.recent],
            values[win.start :],
        )
        a, b = _span(steps, win.recent)
        c, d = _span(steps, win.previous)
        return t, SignalSource(
            metric=q.label,
            window=f"{_steps_text(steps, win.recent)} vs {_steps_text(steps, win.previous)}",
            method="median of the recent window against the window before; flat within max(5% of "
            "the "
            "series' scale, 1 step-to-step noise sigma); Sen's slope must agree in sign",
            detail=t.describe(),
            start=a,
            end=b,
            baseline_start=c,
            baseline_end=d,
        )

    def leveled_trend(self, q: QuantitySeries, steps, values, win) -> tuple[str, SignalSource]:
        """The recent trend, and the run's level against its first: a level at or below a quarter of
        a positive start reads *falling* whatever the
        recent window does (it fell, then sat flat)."""
        t, src = self.trend(q, steps, values, win)
        lv = self.level(steps, values, win)
        _with_level(src, steps, lv)
        if lv.collapsed() and t.direction != "falling":
            src.detail += (
                f"; read as falling: now at most {stats.COLLAPSED_SHARE:.0%} of its first level"
            )
            return "falling", src
        return t.direction, src

    # -- signals ------------------------------------------------------------------------------
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
            raise _Missing(
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
        steps, values = _finite(q)
        if steps.size - 1 < EVAL_MIN:
            raise _Missing(
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
        steps, values = _finite(q)
        reward = self.q.get("task_reward")
        first_train = int(reward.steps[0]) if reward is not None and reward.steps.size else None
        if steps.size < EVAL_LAST + 1 or first_train is None or steps[0] >= first_train:
            raise _Missing(
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

    def entropy_trend(self):
        q, steps, values, win = self.dense("entropy", "the policy entropy")
        t, src = self.trend(q, steps, values, win)
        lv = self.level(steps, values, win)
        early = float(np.median(values[win.early]))
        if early <= 0 or lv.first <= 0:
            raise _Missing(
                f"{q.label} starts at {min(early, lv.first):.3g}; an entropy must start above 0"
            )
        recent = t.after
        ratio = recent / early
        of_first = lv.ratio if lv.ratio is not None else 0.0
        if lv.collapsed() or ratio <= stats.COLLAPSED_SHARE:
            value = "collapsed"
        elif min(ratio, of_first) <= COLLAPSE_MOST and t.direction == "falling":
            value = "collapsing"
        elif ratio >= RISE_DEEP or (ratio >= RISE_MIN and t.direction == "rising"):
            value = "rising"
        elif min(ratio, of_first) <= DECLINED_SHARE:
            value = "declined"
        else:
            value = "stable"
        c, d = _span(steps, win.early)
        src.baseline_start, src.baseline_end = c, d
        src.window = (
            f"{_steps_text(steps, win.recent)} against the first level, "
            f"{_steps_text(steps, lv.first_slice)}, "
            f"and the early level, {_steps_text(steps, win.early)}"
        )
        src.method = (
            f"collapsed at <= {stats.COLLAPSED_SHARE:.0%} of the first level (or of the early "
            f"level), "
            "whatever the trend; collapsing at <= 50% and still falling; rising at >= 1.2x the "
            "early "
            f"level and rising, or >= 2x; otherwise declined at <= {DECLINED_SHARE:.0%}"
        )
        src.detail = (
            f"first level {lv.first:.3g} -> {lv.last:.3g} now ({of_first:.0%} of the first); "
            f"early level {early:.3g} -> recent {recent:.3g} ({ratio:.0%}); recent trend "
            f"{t.direction} ({t.describe()})"
        )
        _with_level(src, steps, lv)
        return value, src

    def length_growth(self):
        q, steps, values, win = self.dense("response_length", "the response length")
        lv = self.level(steps, values, win)
        if lv.first <= 0:
            raise _Missing(f"{q.label} starts at {lv.first:.3g}; lengths must be positive")
        a, b = _span(steps, lv.last_slice)
        c, d = _span(steps, lv.first_slice)
        src = SignalSource(
            metric=q.label,
            window=f"{_steps_text(steps, lv.last_slice)} against the first logged, "
            f"{_steps_text(steps, lv.first_slice)}",
            method="the last level (median of the last tenth of the points, or of the window you "
            "chose) over "
            "the first level (median of the first 3 logged points)",
            detail=f"{lv.first:.4g} -> {lv.last:.4g} tokens",
            start=a,
            end=b,
            baseline_start=c,
            baseline_end=d,
        )
        _with_level(src, steps, lv)
        return float(
            f"{lv.last / lv.first:.4g}"
        ), src  # significant figures: a collapse to 0.0006 is not 0.001

    def truncation_rate(self):
        return self.recent_mean(
            "truncation", "the truncation share", "mean share truncated at the length limit"
        )

    def clip_fraction(self):
        return self.recent_mean(
            "clip_fraction", "the clip fraction", "mean clip fraction over the recent window"
        )

    def zero_advantage_fraction(self):
        if "zero_std_fraction" not in self.q and "zero_std_count" in self.q:
            raise _Missing(
                f"{self.q['zero_std_count'].label} counts zero-spread groups but the number of "
                f"groups "
                f"per step is not logged; divide by your rollout batch size and map it"
            )
        return self.recent_mean(
            "zero_std_fraction",
            "the zero-advantage share",
            "mean share of prompts whose samples all got the same reward",
        )

    def rollout_wait_fraction(self):
        return self.recent_mean(
            "trainer_idle",
            "the trainer's wait for rollouts",
            "mean share of the step the trainer waits for rollouts",
        )

    def env_time_fraction(self):
        return self.recent_mean(
            "env_time_share",
            "environment time",
            "mean share of rollout time spent in the environment",
        )

    def policy_lag_steps(self):
        value, src = self.recent_mean(
            "staleness",
            "policy staleness",
            "mean staleness over the recent window",
            share=False,
            digits=3,
        )
        return max(0.0, value), src

    def kl_to_reference(self):
        q, steps, values, win = self.dense("kl_reference", "a KL to the reference model")
        a, b = _span(steps, win.recent)
        kl = float(np.mean(values[win.recent]))
        detail = f"mean {kl:.3g} nats"
        if q.unit == "nats_per_token":
            length = self.q.get("response_length")
            if length is None:
                raise _Missing(
                    f"{q.label} is per token and no response length is logged to scale it per "
                    f"response"
                )
            sel = (length.steps >= a) & (length.steps <= b) & np.isfinite(length.values)
            if not sel.any():
                raise _Missing("no response length logged in the KL's recent window")
            tokens = float(np.mean(length.values[sel]))
            detail = f"{kl:.3g} nats/token x {tokens:.4g} tokens"
            kl *= tokens
        return round(max(0.0, kl), 4), SignalSource(
            metric=q.label,
            window=_steps_text(steps, win.recent),
            method="mean KL to the reference over the recent window, per response",
            detail=detail,
            start=a,
            end=b,
        )

    def kl_loss_share(self):
        kl = self.need("kl_loss", "a KL loss term")
        pg = self.need("policy_loss", "the policy loss")
        parts = [kl, pg]
        coef = self.q.get("kl_loss_coef")
        if not kl.includes_coef:
            if coef is None:
                raise _Missing(
                    f"{kl.label} is logged without its coefficient; the share needs kl_loss_coef"
                )
            parts.append(coef)
        common, vals = align(parts)
        term = np.abs(vals[0] * (vals[2] if len(vals) > 2 else 1.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            share = term / (np.abs(vals[1]) + term)
        ok = np.isfinite(share)
        steps, share = common[ok], share[ok]
        win = stats.windows(steps, self.window) if steps.size else None
        if win is None:
            raise _Missing("the KL and policy losses share too few steps")
        value = float(np.mean(share[win.recent]))
        a, b = _span(steps, win.recent)
        label = f"{kl.label}" + (
            f" x {coef.label}" if coef is not None and not kl.includes_coef else ""
        )
        return round(value, 4), SignalSource(
            metric=f"{label} against {pg.label}",
            window=_steps_text(steps, win.recent),
            method="|KL term| / (|policy loss| + |KL term|), mean over the recent window",
            detail=f"mean share {value:.3g}",
            start=a,
            end=b,
        )

    def grad_norm_spikes(self):
        stalled = self.faults.get("zero_gradient") or self.faults.get("constant_gradient")
        if stalled is not None:  # never read a gradient that does not move as "smooth"
            raise _Missing(f"{stalled.detail}: a fault, not evidence of a stable update")
        q, steps, values, win = self.dense("grad_norm", "the gradient norm")
        if steps.size < stats.SPIKE_WINDOW + win.start + 1:
            raise _Missing(
                f"{q.label} has {steps.size} points; {stats.SPIKE_WINDOW + win.start + 1} needed "
                f"for a rolling baseline"
            )
        found = stats.spikes(steps, values, win.start)
        detail = (
            "none"
            if not found
            else ", ".join(
                f"step {s.step}: {s.value:.3g} ({s.ratio:.1f}x the rolling median)"
                for s in found[:5]
            )
            + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        )
        return bool(found), SignalSource(
            metric=q.label,
            window=f"steps {int(steps[win.start])}-{int(steps[-1])} (after warm-up)",
            method=f"a spike is >= {stats.SPIKE_RATIO:g}x the median of the previous "
            f"{stats.SPIKE_WINDOW} steps "
            f"and >= {stats.SPIKE_Z:g} robust sigmas (MAD) above it",
            detail=f"{len(found)} spike(s): {detail}" if found else "no spikes",
            start=int(steps[win.start]),
            end=int(steps[-1]),
            marks=[s.step for s in found],
        )

    def loss_divergence(self):
        stalled = self.faults.get("zero_loss") or self.faults.get("zero_gradient")
        present = [
            k for k in ("loss", "policy_loss", "grad_norm", "kl_loss", "entropy") if k in self.q
        ]
        if stalled is not None and not any((~np.isfinite(self.q[k].values)).any() for k in present):
            raise _Missing(
                f"{stalled.detail}: nothing moves, so a finite loss says nothing about stability"
            )
        if not any(k in self.q for k in ("loss", "policy_loss", "grad_norm")):
            raise _Missing("no loss or gradient norm logged")
        bad: list[tuple[str, int]] = []
        for k in present:
            q = self.q[k]
            idx = np.flatnonzero(~np.isfinite(q.values))
            bad += [(q.label, int(q.steps[i])) for i in idx[:20]]
        marks = sorted({s for _, s in bad})
        if bad:
            shown = ", ".join(f"{m} at step {s}" for m, s in bad[:4])
            return True, SignalSource(
                metric=", ".join(sorted({m for m, _ in bad})),
                window="the whole run",
                method="NaN or inf in a loss, gradient norm or entropy",
                detail=f"non-finite: {shown}",
                start=marks[0],
                end=marks[-1],
                marks=marks,
            )
        loss = self.q.get("loss") or self.q.get("policy_loss")
        if loss is not None:
            steps, values = _finite(loss)
            jump = stats.sustained_jump(steps, values, stats.warmup(steps.size))
            src = SignalSource(
                metric=loss.label,
                window="the whole run after warm-up",
                method=f"NaN/inf, or a jump beyond the spike rule held for {stats.JUMP_RUN} steps "
                f"in a row",
                detail="no NaN/inf; "
                + (f"sustained jump from step {jump}" if jump is not None else "no sustained jump"),
                marks=[jump] if jump is not None else [],
            )
            return jump is not None, src
        return False, SignalSource(
            metric=", ".join(self.q[k].label for k in present),
            window="the whole run",
            method="NaN or inf in a loss, gradient norm or entropy",
            detail="all finite",
        )

    def logprob_mismatch_trend(self):
        q, steps, values, win = self.dense("mismatch_kl", "a trainer-vs-inference mismatch")
        t, src = self.trend(q, steps, values, win)
        _with_level(src, steps, self.level(steps, values, win))
        return ("widening" if t.direction == "rising" else "steady"), src

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
        except _Missing as missing:
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
