"""Judging a growing run: the bounded kept series read as a run, its signals derived, faults and
tail shifts set, the verdict worked out, and the tail shifts it found kept in the fault state (a
watch's check is :mod:`rlmap_bot.watch.check`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmap_bot.results.faults import TailShift
from rlmap_bot.results.runs import SignalSource
from rlmap_bot.runs import stats
from rlmap_bot.runs.growing.kept import KeptRun
from rlmap_bot.runs.growing.scan import FaultState, track_shift
from rlmap_bot.runs.signals import Derivation, derive_signals
from rlmap_bot.wording import counted

if TYPE_CHECKING:
    from rlmap_bot.diagnosis.engine import Engine
    from rlmap_bot.results.runs import RunDiagnosis
    from rlmap_bot.runs.aliases import AliasTable


def headline(verdict) -> str:
    from rlmap_bot import wording

    return wording.verdict_headline(verdict)


def judge(
    kept: KeptRun, faults: FaultState, engine: Engine, aliases: AliasTable
) -> tuple[Derivation, RunDiagnosis, set[str]]:
    """The derivation on the kept sample, with the full-resolution fault readings, its verdict,
    and the faults its tail shifts opened (``faults`` keeps them, with every other fault)."""
    from rlmap_bot.runs.verdict import verdict_for

    run = kept.to_run()
    derivation = derive_signals(run, aliases)
    derivation.run.steps = kept.steps
    derivation.run.first_step, derivation.run.last_step = kept.first_step, kept.last_step
    stride = kept.largest_stride
    if stride > 1:
        derivation.warnings.append(
            f"judged on every {stride}th logged point at most (a bounded sample of the whole run); "
            f"NaN/inf, divergence and spikes on every point"
        )
    if faults.loss_seen:
        _set(
            derivation,
            "loss_divergence",
            faults.active("nan") or faults.active("divergence"),
            SignalSource(
                metric=_fault_metrics(faults),
                window="every logged step, as it arrived",
                method="NaN or inf in a loss, gradient norm or entropy, until 50 finite steps "
                "follow; or a jump beyond the spike rule held for 3 steps, until the level is back",
                detail=_fault_detail(faults),
                marks=[
                    f.first_step if hasattr(f, "first_step") else f.step
                    for f in (faults.nan, faults.divergence)
                    if f is not None and f.active
                ],
            ),
        )
    stall = faults.not_learning
    stalled = any(f.kind in STALLED_GRADIENT for f in derivation.faults) or (
        stall is not None and stall.active and stall.kind in STALLED_GRADIENT
    )
    if faults.grad_seen and not stalled:  # a gradient that does not move is a fault, never "smooth"
        shown = ", ".join(str(s) for s in faults.spike_steps[-5:])
        _set(
            derivation,
            "grad_norm_spikes",
            faults.spikes > 0,
            SignalSource(
                metric=faults.spike_metric or derivation.quantities.get("grad_norm", "grad_norm"),
                window="every logged step after warm-up, as it arrived",
                method=stats.SPIKE_RULE,
                detail=f"{counted(faults.spikes, 'spike')}, latest at "
                f"{'step' if len(faults.spike_steps[-5:]) == 1 else 'steps'} {shown}"
                if faults.spikes
                else "no spikes",
                marks=faults.spike_steps,
            ),
        )
    verdict = verdict_for(engine, derivation)
    shifted = [f for f in derivation.faults if isinstance(f, TailShift)]
    return derivation, verdict, track_shift(faults, shifted, derivation.series, kept.last_step)


#: Fault kinds under which the gradient norm says nothing about the update's stability.
STALLED_GRADIENT = ("zero_gradient", "constant_gradient")


def _set(derivation: Derivation, signal: str, value, source: SignalSource) -> None:
    derivation.signals[signal] = value
    derivation.signal_sources[signal] = source
    if signal in derivation.missing:
        derivation.missing.remove(signal)
        derivation.missing_reasons.pop(signal, None)


def _fault_metrics(faults: FaultState) -> str:
    names = []
    if faults.nan is not None:
        names += faults.nan.metrics
    if faults.divergence is not None:
        names.append(faults.divergence.metric)
    return ", ".join(dict.fromkeys(names)) or "loss, gradient norm, entropy"


def _fault_detail(faults: FaultState) -> str:
    from rlmap_bot.wording.posts import fault_sentence

    found = [f.finding() for f in (faults.nan, faults.divergence) if f is not None]
    return "; ".join(fault_sentence(f) for f in found) or "all finite, no sustained jump"
