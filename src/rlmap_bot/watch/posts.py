"""What a watch check posts: the alert for the conditions it raised, the resolved note, the notice
that a watch paused; and the check's result as a command returns it.  Pure functions of a check's
:class:`~rlmap_bot.watch.check.Outcome`; :mod:`rlmap_bot.watch.service` claims and posts them.
A post carries what changed as typed :data:`~rlmap_bot.results.watch.Change` items; the
front-ends word them through :mod:`rlmap_bot.wording.posts` (``alert_title``, ``alert_changes``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal

from rlmap_bot.results.faults import WatchFault
from rlmap_bot.results.watch import (
    Alert,
    Change,
    EvidenceLine,
    FaultOpened,
    FaultOver,
    Readable,
    StageChanged,
    StageCleared,
    StageStarted,
    StopAdvised,
    TieSummary,
    Unreadable,
    WatchPaused,
)
from rlmap_bot.watch.conditions import Transition, pending_announcements
from rlmap_bot.watch.model import Watch

if TYPE_CHECKING:
    from rlmap_bot.watch.check import Outcome


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
    # When to stop (stop:...) is advice, not a fault: a quiet watch withholds it, and it waits
    # while a fault is open, as a stage does.
    advice = {"start", "change", "stop"}
    for t in transitions:
        if t.kind in advice and watch.quiet:
            withheld.append(t.condition.key)
        elif t.kind in advice and broken:
            continue
        elif t.kind in advice | {"fault"}:
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


def _finding(outcome: Outcome, key: str) -> WatchFault | None:
    """The fault a condition ``fault:NAME`` stands for, as a post carries it (None: the scan holds
    none)."""
    from rlmap_bot.runs.growing.scan import FaultState

    fault = FaultState.model_validate(outcome.tracking.faults).found(key.split(":", 1)[1])
    return fault.finding() if fault is not None else None


def _steps(outcome: Outcome) -> str:
    kept = outcome.kept
    return f"steps {kept.first_step}-{kept.last_step}" if kept.first_step is not None else ""


def _alert(watch: Watch, outcome: Outcome, transitions: list[Transition]) -> Alert:
    from rlmap_bot.results.diagnosis import format_value

    verdict, derivation, _ = outcome.judgement()
    step, sure = outcome.kept.last_step, verdict.confidence
    changes: list[Change] = []
    for t in transitions:
        key = t.condition.key
        if t.kind == "start":
            changes.append(
                StageStarted(
                    kind="tie" if key.startswith("tie:") else "start",
                    stage=_stage_title(outcome, key),
                    step=step,
                    confidence=sure,
                )
            )
        elif t.kind == "change":
            changes.append(
                StageChanged(
                    kind="change_tie" if key.startswith("tie:") else "change",
                    stage=_stage_title(outcome, key),
                    previous=_stage_title(outcome, t.replaced.key) if t.replaced else None,
                    step=step,
                    confidence=sure,
                )
            )
        elif t.kind == "fault" and key.startswith("fault:"):
            found = _finding(outcome, key)
            if found is not None:
                changes.append(FaultOpened(fault=found, transient=t.transient))
        elif t.kind == "stop":
            changes.append(StopAdvised.model_validate(t.condition.detail))
    if verdict.tied and any(t.condition.key.startswith("tie:") for t in transitions):
        changes.append(TieSummary(message=verdict.summary))
    # The evidence shown is the binding stage's, or the tied stages'; for a fault with no stage
    # binding, optimization's (NaN and divergence are optimisation failures first, as the
    # loss_divergence rule says).
    only_faults = all(t.kind == "fault" for t in transitions)
    if all(t.kind == "stop" for t in transitions):
        # Advice on when to stop stands on the forecast, which its own lines say; the stage
        # verdict's readings and lever would answer another question.
        return _post(watch, outcome, "alert", transitions, changes, chart=True)
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
                source_short=ev.source.short,
                provenance=provenance,
            )
        )
    # Top 3 stages, 4 pieces of evidence, 3 next checks: what a channel reads at a glance; the
    # whole verdict is one `diagnose --run` away (the same figures as the verdict card shows first).
    return _post(
        watch,
        outcome,
        "alert",
        transitions,
        changes,
        ranking=[(r.title, r.score) for r in verdict.ranking[:3]],
        evidence=evidence[:4],
        next_checks=[f"{c.title}: {c.question}" for c in verdict.next_checks[:3]],
        next_step=verdict.next_step,
        chart=True,
    )


def _post(
    watch: Watch,
    outcome: Outcome,
    kind: Literal["alert", "resolved"],
    transitions: list[Transition],
    changes: list[Change],
    **extra: Any,
) -> Alert:
    """An alert or a resolved note: the conditions it tells of, where the run stands and the
    verdict it stands on, with what only that kind of post adds (``extra``)."""
    verdict = outcome.judgement().verdict
    episodes = {t.condition.key: t.condition.episode for t in transitions}
    return Alert(
        watch_id=watch.id,
        kind=kind,
        conditions=list(episodes),
        episodes=episodes,
        changes=changes,
        path=watch.path,
        steps=_steps(outcome),
        binding_stage=verdict.binding_stage,
        binding_title=verdict.binding_title,
        confidence=verdict.confidence,
        verdict_headline=outcome.tracking.last_verdict.headline
        if outcome.tracking.last_verdict
        else None,
        **extra,
    )


def _resolved(
    watch: Watch,
    outcome: Outcome,
    transitions: list[Transition],
    alert_ts: Callable[[str, str, int], str | None],
) -> Alert:
    from rlmap_bot.watch.conditions import CLEAR_CHECKS, STAGE_PREFIXES

    changes: list[Change] = []
    for t in transitions:
        key = t.condition.key
        if key.startswith(STAGE_PREFIXES):
            changes.append(
                StageCleared(
                    kind="no_longer_tie" if key.startswith("tie:") else "no_longer",
                    stage=_stage_title(outcome, key),
                    step=outcome.kept.last_step,
                    checks=CLEAR_CHECKS,
                )
            )
        elif key.startswith("fault:"):
            found = _finding(outcome, key)
            if found is not None:
                changes.append(FaultOver(fault=found))
    first = transitions[0].condition
    reply = first.alert_ts or alert_ts(watch.id, first.key, first.episode)
    return _post(watch, outcome, "resolved", transitions, changes, reply_to=reply)


def paused_notice(watch: Watch, outcome: Outcome, number: int) -> Alert:
    reason = outcome.pause or "stalled"
    return Alert(
        watch_id=watch.id,
        kind="paused",
        conditions=[f"watch:{reason}"],
        episodes={f"watch:{reason}": number},
        changes=[WatchPaused(reason=reason, message=outcome.message)],
        path=watch.path,
        steps=_steps(outcome),
    )


def unreadable_notice(watch: Watch, outcome: Outcome, number: int, failing: bool) -> Alert:
    """A source that cannot be read now (a tracker or server down, a log gone unreadable), or is
    read again; the watch itself goes on."""
    key = "watch:unreadable"
    return Alert(
        watch_id=watch.id,
        kind="alert" if failing else "resolved",
        conditions=[key],
        episodes={key: number},
        changes=[Unreadable(message=outcome.message) if failing else Readable()],
        path=watch.path,
        steps=_steps(outcome),
    )
