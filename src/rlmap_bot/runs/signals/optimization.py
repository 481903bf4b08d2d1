"""The optimisation signals: entropy, KL, gradient norm, clipping, loss divergence and the
trainer/inference log-prob mismatch."""

from __future__ import annotations

from typing import Callable

import numpy as np

from rlmap_bot import wording
from rlmap_bot.results.faults import NonFinite
from rlmap_bot.results.runs import SignalSource
from rlmap_bot.runs import stats
from rlmap_bot.runs.quantities import align
from rlmap_bot.runs.signals.base import (
    Missing,
    Reading,
    Readings,
    finite_points,
    step_span,
    steps_text,
    with_level,
)
from rlmap_bot.runs.signals.faults import RECURRING_SHARE, SUSTAINED_MIN

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


def entropy_trend(r: Readings) -> Reading:
    q, steps, values, win = r.dense("entropy", "the policy entropy")
    t, src = r.trend(q, steps, values, win)
    lv = r.level(steps, values, win)
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
        f"{steps_text(steps, lv.first_slice)}, and the early level, {steps_text(steps, win.early)}"
    )
    src.method = (
        f"collapsed at <= {stats.COLLAPSED_SHARE:.0%} of the first level (or of the early level), "
        f"whatever the trend; collapsing at <= 50% and still falling; rising at >= 1.2x the early "
        f"level and rising, or >= 2x; otherwise declined at <= {DECLINED_SHARE:.0%}"
    )
    src.detail = (
        f"first level {lv.first:.3g} -> {lv.last:.3g} now ({of_first:.0%} of the first); early "
        f"level {early:.3g} -> recent {recent:.3g} ({ratio:.0%}); recent trend {t.direction} "
        f"({t.describe()})"
    )
    with_level(src, steps, lv)
    return value, src


def clip_fraction(r: Readings) -> Reading:
    return r.recent_mean(
        "clip_fraction", "the clip fraction", "mean clip fraction over the recent window"
    )


def kl_to_reference(r: Readings) -> Reading:
    q, steps, values, win = r.dense("kl_reference", "a KL to the reference model")
    a, b = step_span(steps, win.recent)
    kl = float(np.mean(values[win.recent]))
    detail = f"mean {kl:.3g} nats"
    if q.unit == "nats_per_token":
        length = r.q.get("response_length")
        if length is None:
            raise Missing(
                f"{q.label} is per token and no response length is logged to scale it per response"
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


def kl_loss_share(r: Readings) -> Reading:
    kl = r.need("kl_loss", "a KL loss term")
    pg = r.need("policy_loss", "the policy loss")
    parts = [kl, pg]
    coef = r.q.get("kl_loss_coef")
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
    win = stats.windows(steps, r.window) if steps.size else None
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


def grad_norm_spikes(r: Readings) -> Reading:
    stalled = r.fault("zero_gradient", "constant_gradient")
    if stalled is not None:  # never read a gradient that does not move as "smooth"
        raise Missing(f"{stalled.detail}: a fault, not evidence of a stable update")
    q, steps, values, win = r.dense("grad_norm", "the gradient norm")
    if steps.size < stats.SPIKE_WINDOW + win.start + 1:
        raise Missing(
            f"{q.label} has {steps.size} points; {stats.SPIKE_WINDOW + win.start + 1} needed for a "
            f"rolling baseline"
        )
    found = stats.spikes(steps, values, win.start)
    detail = (
        "none"
        if not found
        else ", ".join(
            f"step {s.step}: {s.value:.3g} ({s.ratio:.1f}x the rolling median)" for s in found[:5]
        )
        + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    )
    return bool(found), SignalSource(
        metric=q.label,
        window=f"steps {int(steps[win.start])}-{int(steps[-1])} (after warm-up)",
        method=stats.SPIKE_RULE,
        detail=f"{wording.counted(len(found), 'spike')}: {detail}" if found else "no spikes",
        start=int(steps[win.start]),
        end=int(steps[-1]),
        marks=[s.step for s in found],
    )


#: The quantities whose NaN/inf fault reads as a diverged loss (the reward's is the reward's).
DIVERGENCE_QUANTITIES = ("loss", "policy_loss", "grad_norm", "kl_loss", "entropy")


def loss_divergence(r: Readings) -> Reading:
    """Diverged: a NaN/inf fault (sustained or recurring: runs/signals/faults.py; a step the
    trainer skipped is a note, not this), or a finite loss that jumped and held."""
    stalled = r.fault("zero_loss", "zero_gradient")
    present = [k for k in DIVERGENCE_QUANTITIES if k in r.q]
    nan = [
        f for f in r.faults if isinstance(f, NonFinite) and (f.quantity in DIVERGENCE_QUANTITIES)
    ]
    if stalled is not None and not nan:
        raise Missing(
            f"{stalled.detail}: nothing moves, so a finite loss says nothing about stability"
        )
    if not any(k in r.q for k in ("loss", "policy_loss", "grad_norm")):
        raise Missing("no loss or gradient norm logged")
    if nan:
        marks = sorted({s for f in nan for s in f.steps})
        return True, SignalSource(
            metric=", ".join(sorted({f.metric for f in nan})),
            window="the whole run",
            method=f"NaN or inf in a loss, gradient norm or entropy on every step from one on "
            f"({SUSTAINED_MIN} or more in a row to the last), or on {RECURRING_SHARE:.0%} of the "
            f"steps; a step the trainer skipped is a note",
            detail="; ".join(f.detail for f in nan[:3]),
            start=min(f.first_step for f in nan),
            end=max(f.last_step for f in nan),
            marks=marks,
        )
    skipped = len({int(s) for k in present for s in r.q[k].steps[~np.isfinite(r.q[k].values)]})
    note = f"{wording.counted(skipped, 'non-finite step')} skipped (a note); " if skipped else ""
    loss = r.q.get("loss") or r.q.get("policy_loss")
    if loss is not None:
        steps, values = finite_points(loss)
        jump = stats.sustained_jump(steps, values, stats.warmup(steps.size))
        src = SignalSource(
            metric=loss.label,
            window="the whole run after warm-up",
            method=f"NaN/inf on every step from one on, or a jump beyond the spike rule held for "
            f"{stats.JUMP_RUN} steps in a row",
            detail=(note or "no NaN/inf; ")
            + (f"sustained jump from step {jump}" if jump is not None else "no sustained jump"),
            marks=[jump] if jump is not None else [],
        )
        return jump is not None, src
    return False, SignalSource(
        metric=", ".join(r.q[k].label for k in present),
        window="the whole run",
        method="NaN or inf in a loss, gradient norm or entropy on every step from one on",
        detail=note + "no sustained NaN/inf" if note else "all finite",
    )


def logprob_mismatch_trend(r: Readings) -> Reading:
    q, steps, values, win = r.dense("mismatch_kl", "a trainer-vs-inference mismatch")
    t, src = r.trend(q, steps, values, win)
    with_level(src, steps, r.level(steps, values, win))
    return ("widening" if t.direction == "rising" else "steady"), src


SIGNALS: dict[str, Callable[[Readings], Reading]] = {
    "entropy_trend": entropy_trend,
    "clip_fraction": clip_fraction,
    "kl_to_reference": kl_to_reference,
    "kl_loss_share": kl_loss_share,
    "grad_norm_spikes": grad_norm_spikes,
    "loss_divergence": loss_divergence,
    "logprob_mismatch_trend": logprob_mismatch_trend,
}
