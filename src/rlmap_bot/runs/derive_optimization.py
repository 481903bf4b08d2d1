"""The optimisation signals read from a run's logs: entropy, KL, gradient norm, clipping, loss
divergence and the trainer/inference log-prob mismatch."""

from __future__ import annotations

import numpy as np

from rlmap_bot.results.runs import SignalSource
from rlmap_bot.runs import stats
from rlmap_bot.runs.deriving import (
    COLLAPSE_MOST,
    DECLINED_SHARE,
    RISE_DEEP,
    RISE_MIN,
    Deriving,
    Missing,
    finite_points,
    step_span,
    steps_text,
    with_level,
)
from rlmap_bot.runs.quantities import align


class OptimizationSignals(Deriving):
    """Signals of the optimisation stage (and the length growth that often comes with it)."""

    def entropy_trend(self):
        q, steps, values, win = self.dense("entropy", "the policy entropy")
        t, src = self.trend(q, steps, values, win)
        lv = self.level(steps, values, win)
        early = float(np.median(values[win.early]))
        if early <= 0 or lv.first <= 0:
            raise Missing(
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
        c, d = step_span(steps, win.early)
        src.baseline_start, src.baseline_end = c, d
        src.window = (
            f"{steps_text(steps, win.recent)} against the first level, "
            f"{steps_text(steps, lv.first_slice)}, "
            f"and the early level, {steps_text(steps, win.early)}"
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
        with_level(src, steps, lv)
        return value, src

    def length_growth(self):
        q, steps, values, win = self.dense("response_length", "the response length")
        lv = self.level(steps, values, win)
        if lv.first <= 0:
            raise Missing(f"{q.label} starts at {lv.first:.3g}; lengths must be positive")
        a, b = step_span(steps, lv.last_slice)
        c, d = step_span(steps, lv.first_slice)
        src = SignalSource(
            metric=q.label,
            window=f"{steps_text(steps, lv.last_slice)} against the first logged, "
            f"{steps_text(steps, lv.first_slice)}",
            method="the last level (median of the last tenth of the points, or of the window you "
            "chose) over "
            "the first level (median of the first 3 logged points)",
            detail=f"{lv.first:.4g} -> {lv.last:.4g} tokens",
            start=a,
            end=b,
            baseline_start=c,
            baseline_end=d,
        )
        with_level(src, steps, lv)
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
            raise Missing(
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
        a, b = step_span(steps, win.recent)
        kl = float(np.mean(values[win.recent]))
        detail = f"mean {kl:.3g} nats"
        if q.unit == "nats_per_token":
            length = self.q.get("response_length")
            if length is None:
                raise Missing(
                    f"{q.label} is per token and no response length is logged to scale it per "
                    f"response"
                )
            sel = (length.steps >= a) & (length.steps <= b) & np.isfinite(length.values)
            if not sel.any():
                raise Missing("no response length logged in the KL's recent window")
            tokens = float(np.mean(length.values[sel]))
            detail = f"{kl:.3g} nats/token x {tokens:.4g} tokens"
            kl *= tokens
        return round(max(0.0, kl), 4), SignalSource(
            metric=q.label,
            window=steps_text(steps, win.recent),
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
                raise Missing(
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
            raise Missing("the KL and policy losses share too few steps")
        value = float(np.mean(share[win.recent]))
        a, b = step_span(steps, win.recent)
        label = f"{kl.label}" + (
            f" x {coef.label}" if coef is not None and not kl.includes_coef else ""
        )
        return round(value, 4), SignalSource(
            metric=f"{label} against {pg.label}",
            window=steps_text(steps, win.recent),
            method="|KL term| / (|policy loss| + |KL term|), mean over the recent window",
            detail=f"mean share {value:.3g}",
            start=a,
            end=b,
        )

    def grad_norm_spikes(self):
        stalled = self.faults.get("zero_gradient") or self.faults.get("constant_gradient")
        if stalled is not None:  # never read a gradient that does not move as "smooth"
            raise Missing(f"{stalled.detail}: a fault, not evidence of a stable update")
        q, steps, values, win = self.dense("grad_norm", "the gradient norm")
        if steps.size < stats.SPIKE_WINDOW + win.start + 1:
            raise Missing(
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
            raise Missing(
                f"{stalled.detail}: nothing moves, so a finite loss says nothing about stability"
            )
        if not any(k in self.q for k in ("loss", "policy_loss", "grad_norm")):
            raise Missing("no loss or gradient norm logged")
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
            steps, values = finite_points(loss)
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
        with_level(src, steps, self.level(steps, values, win))
        return ("widening" if t.direction == "rising" else "steady"), src
