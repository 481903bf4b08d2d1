"""What a watch check posts: the alert for the conditions it raised, the resolved note, the notice
that a watch paused; and the check's result as a command returns it.  Pure functions of a check's
:class:`~rlmap_bot.watch.check.Outcome`; :mod:`rlmap_bot.watch.service` claims and posts them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from rlmap_bot.results.watch import Alert, CheckResult, EvidenceLine
from rlmap_bot.watch.conditions import Transition, pending_announcements
from rlmap_bot.watch.model import Watch

if TYPE_CHECKING:
    from rlmap_bot.watch.check import Outcome


# -- what to post ----------------------------------------------------------------------------------
def _result(watch: Watch, outcome: Outcome) -> CheckResult:
    kept = outcome.kept
    status = {"checked": "checked", "unchanged": "unchanged", "paused": "paused"}.get(
        outcome.status, "problem"
    )
    return CheckResult(
        watch_id=watch.id,
        path=watch.path,
        status=status,
        problem=outcome.message,
        format=outcome.format,
        mode=outcome.tracking.mode,
        steps=kept.points,
        first_step=kept.first_step,
        last_step=kept.last_step,
        new_steps=outcome.new_points,
        bytes_read=outcome.bytes_read,
        verdict=outcome.tracking.last_verdict,
        open_conditions=sorted(outcome.tracking.conditions),
    )


def plan(
    watch: Watch, outcome: Outcome, alert_ts: Callable[[str, str, int], str | None]
) -> tuple[Alert | None, Alert | None, list[str]]:
    """The alert (conditions raised) and the resolved
    note a check calls for, and what quiet withholds.
    """
    evaluation = outcome.judgement().evaluation
    transitions = evaluation.transitions + pending_announcements(
        evaluation.conditions, watch.quiet, evaluation.transitions
    )
    announce: list[Transition] = []
    withheld: list[str] = []
    # Faults first: while a fault announced by an earlier
    # check is open, the run is broken and a stage
    # verdict on it is not news; a stage that binds
    # meanwhile is announced once the fault is over (it
    # stays unannounced, so pending_announcements brings it up then). A stage that opens in the same
    # check as the fault shares its post.
    broken = any(k.startswith("fault:") and c.announced for k, c in evaluation.conditions.items())
    for t in transitions:
        if t.kind in {"start", "change"} and watch.quiet:
            withheld.append(t.condition.key)
        elif t.kind in {"start", "change"} and broken:
            continue
        elif t.kind in {"start", "change", "fault"}:
            announce.append(t)
    resolved = [
        t
        for t in transitions
        if t.kind == "resolved"
        and t.condition.announced
        and (not watch.quiet or t.condition.key.startswith("fault:"))
    ]
    alert = _alert(watch, outcome, announce) if announce else None
    note = _resolved(watch, outcome, resolved, alert_ts) if resolved else None
    return alert, note, withheld


def _stage_title(outcome: Outcome, key: str) -> str:
    """How an alert names a stage condition: the stage's title, or the tied stages' ("A and B")."""
    from rlmap_bot.watch.conditions import stages_of

    titles = {r.stage: r.title for r in outcome.judgement().verdict.ranking}
    named = [
        titles.get(s, s)
        for s in sorted(
            stages_of(key), key=lambda s: list(titles).index(s) if s in titles else len(titles)
        )
    ]
    return " and ".join(named)


def _fault_text(name: str, fault: Any) -> str:
    """A fault's sentence: the scan's own (``faults.NAME_text``)
    when it has one, else where it began.
    """
    from rlmap_bot.watch import faults as fault_scan

    describe = getattr(fault_scan, FAULT_TEXTS.get(name, f"{name}_text"), None)
    if describe is not None:
        return describe(fault)
    step = getattr(fault, "first_step", None) or getattr(fault, "step", None)
    return (
        f"{name.replace('_', ' ')} from step {step}" if step is not None else name.replace("_", " ")
    )


FAULT_TITLES = {
    "nan": "NaN/inf in the loss",
    "divergence": "the loss diverged",
    "not_learning": "the run is not learning",
    "shift": "a sharp change at the run's tail",
}
# : The scan's sentence for each fault (a function of
# watch.faults); others are looked up as NAME_text.
FAULT_TEXTS = {
    "nan": "nan_text",
    "divergence": "jump_text",
    "not_learning": "stall_text",
    "shift": "shift_text",
}


def _steps(outcome: Outcome) -> str:
    kept = outcome.kept
    return f"steps {kept.first_step}-{kept.last_step}" if kept.first_step is not None else ""


def _alert(watch: Watch, outcome: Outcome, transitions: list[Transition]) -> Alert:
    from rlmap_bot.results.diagnosis import format_value
    from rlmap_bot.watch.faults import FaultState

    verdict, derivation, _ = outcome.judgement()
    faults = FaultState.model_validate(outcome.tracking.faults)
    sure = f"{verdict.confidence:.0%} sure"
    titles, changes, fault_lines = [], [], []
    for t in transitions:
        key = t.condition.key
        if t.kind == "start" and key.startswith("tie:"):
            title = _stage_title(outcome, key)
            titles.append(f"{title} both have strong evidence")
            changes.append(
                f"{title} both have strong evidence on the run up to step "
                f"{outcome.kept.last_step}: no "
                f"single stage binds, both may ({verdict.confidence:.0%} sure it is one of them)."
            )
        elif t.kind == "start":
            title = _stage_title(outcome, key)
            titles.append(f"{title} started to bind")
            changes.append(
                f"{title} binds now, on the run up to step {outcome.kept.last_step} (the verdict "
                f"is {sure})."
            )
        elif t.kind == "change":
            old = _stage_title(outcome, t.replaced.key) if t.replaced else "another stage"
            new = _stage_title(outcome, key)
            if key.startswith("tie:"):
                titles.append(f"Binding stage changed: {old} → {new} tie")
                changes.append(
                    f"{new} now both have strong evidence; no single stage binds "
                    f"({verdict.confidence:.0%} sure it is one of them)."
                )
            else:
                titles.append(f"Binding stage changed: {old} → {new}")
                changes.append(f"{old} no longer binds; {new} does now (the verdict is {sure}).")
        elif t.kind == "fault" and key.startswith("fault:"):
            name = key.split(":", 1)[1]
            fault = getattr(faults, name, None)
            if fault is None:
                continue
            titles.append("Fault: " + FAULT_TITLES.get(name, name.replace("_", " ")))
            text = _fault_text(name, fault)
            fault_lines.append(text)
            changes.append(text + (" (already over)" if t.transient else "") + ".")
    if verdict.tied and any(t.condition.key.startswith("tie:") for t in transitions):
        changes.append(verdict.summary)
    # The evidence shown is the binding stage's, or the tied stages'; for a fault with no stage
    # binding, optimization's (NaN and divergence are optimisation failures first, as the
    # loss_divergence rule says).
    only_faults = all(t.kind == "fault" for t in transitions)
    shown = (
        [verdict.binding_stage]
        if verdict.binding_stage
        else list(verdict.tied)
        if verdict.tied
        else ["optimization"]
        if only_faults
        else [verdict.ranking[0].stage]
        if verdict.ranking
        else []
    )
    evidence = []
    for ev in verdict.evidence:
        if ev.direction != "for" or (shown and ev.stage not in shown):
            continue
        provenance = []
        for signal in ev.signals:
            src = derivation.signal_sources.get(signal)
            if src is not None:
                provenance.append(f"{signal}: {src.detail} ({src.metric}; {src.window})")
        evidence.append(
            EvidenceLine(
                stage=ev.stage,
                points=ev.points.get(ev.stage, 0.0),
                signals={k: format_value(v) for k, v in ev.signals.items()},
                why=ev.why,
                source=ev.source.title,
                provenance=provenance,
            )
        )
    episodes = {t.condition.key: t.condition.episode for t in transitions}
    # Top 3 stages, 4 pieces of evidence, 3 next checks: what a channel reads at a glance; the
    # whole verdict is one `diagnose --run` away (the same figures as the verdict card shows first).
    return Alert(
        watch_id=watch.id,
        kind="alert",
        conditions=list(episodes),
        episodes=episodes,
        title=" · ".join(titles),
        changes=changes,
        path=watch.path,
        steps=_steps(outcome),
        binding_stage=verdict.binding_stage,
        binding_title=verdict.binding_title,
        verdict_headline=outcome.tracking.last_verdict.headline
        if outcome.tracking.last_verdict
        else None,
        ranking=[(r.title, r.score) for r in verdict.ranking[:3]],
        evidence=evidence[:4],
        faults=fault_lines,
        next_checks=[f"{c.title}: {c.question}" for c in verdict.next_checks[:3]],
        chart=True,
    )


def _resolved(
    watch: Watch,
    outcome: Outcome,
    transitions: list[Transition],
    alert_ts: Callable[[str, str, int], str | None],
) -> Alert:
    from rlmap_bot.watch.conditions import CLEAR_CHECKS, STAGE_PREFIXES
    from rlmap_bot.watch.faults import FaultState

    verdict = outcome.judgement().verdict
    faults = FaultState.model_validate(outcome.tracking.faults)
    titles, changes = [], []
    for t in transitions:
        key = t.condition.key
        if key.startswith(STAGE_PREFIXES):
            title = _stage_title(outcome, key)
            titles.append(
                f"{title} {'no longer tie' if key.startswith('tie:') else 'no longer binds'}"
            )
            changes.append(
                f"{CLEAR_CHECKS} checks in a row with new steps, up to step "
                f"{outcome.kept.last_step}, no "
                f"longer name {title}."
            )
        elif key.startswith("fault:"):
            name = key.split(":", 1)[1]
            fault = getattr(faults, name, None)
            if fault is None:
                continue
            titles.append(
                {"nan": "NaN/inf over", "divergence": "Divergence over"}.get(
                    name, f"{name.replace('_', ' ').capitalize()} over"
                )
            )
            changes.append(_fault_text(name, fault) + ".")
    first = transitions[0].condition
    reply = first.alert_ts or alert_ts(watch.id, first.key, first.episode)
    episodes = {t.condition.key: t.condition.episode for t in transitions}
    return Alert(
        watch_id=watch.id,
        kind="resolved",
        conditions=list(episodes),
        episodes=episodes,
        title="Resolved: " + "; ".join(titles),
        changes=changes,
        path=watch.path,
        steps=_steps(outcome),
        binding_stage=verdict.binding_stage,
        binding_title=verdict.binding_title,
        verdict_headline=outcome.tracking.last_verdict.headline
        if outcome.tracking.last_verdict
        else None,
        reply_to=reply,
    )


PAUSE_TITLES = {
    "stalled": "stopped growing",
    "gone": "is gone",
    "outside": "leads outside RLMAP_RUN_ROOTS",
}


def paused_notice(watch: Watch, outcome: Outcome, number: int) -> Alert:
    reason = outcome.pause or "stalled"
    return Alert(
        watch_id=watch.id,
        kind="paused",
        conditions=[f"watch:{reason}"],
        episodes={f"watch:{reason}": number},
        title=f"Watch paused: the log {PAUSE_TITLES.get(reason, reason)}",
        changes=[(outcome.message or reason) + ".", "I stopped checking it."],
        path=watch.path,
        steps=_steps(outcome),
    )


def unreadable_notice(watch: Watch, outcome: Outcome, number: int, failing: bool) -> Alert:
    """A source that cannot be read now (a tracker or server down, a log gone unreadable), or is
    read again; the watch itself goes on."""
    key = "watch:unreadable"
    if failing:
        return Alert(
            watch_id=watch.id,
            kind="alert",
            conditions=[key],
            episodes={key: number},
            title="Cannot read the run now",
            changes=[
                (outcome.message or "the source did not answer") + ".",
                "I keep the watch and try again at each check; I'll say when it reads again.",
            ],
            path=watch.path,
            steps=_steps(outcome),
        )
    return Alert(
        watch_id=watch.id,
        kind="resolved",
        conditions=[key],
        episodes={key: number},
        title="Reading the run again",
        changes=["The source answers again; checks go on as before."],
        path=watch.path,
        steps=_steps(outcome),
    )
