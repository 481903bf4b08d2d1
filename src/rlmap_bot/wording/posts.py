"""What a watch post says: its title and a sentence or two per typed change, the same in Slack and
the terminal (and in ``--json``, through ``Alert``'s serialization context).

Each change (:data:`rlmap_bot.results.watch.Change`) and each fault a post tells
(:data:`rlmap_bot.results.faults.WatchFault`) is said by the function registered for its type
(``functools.singledispatch``): a new kind of change or fault is one model and one function here.
"""

from __future__ import annotations

from functools import singledispatch

from rlmap_bot.results.faults import FAULT_TITLES as CAUSES
from rlmap_bot.results.faults import DivergenceFinding, NanFinding, ShiftFinding, StallFinding
from rlmap_bot.results.watch import (
    Alert,
    FaultOpened,
    FaultOver,
    Readable,
    StageChanged,
    StageCleared,
    StageStarted,
    TieSummary,
    Unreadable,
    WatchPaused,
)
from rlmap_bot.wording import counted, sentence
from rlmap_bot.wording.verdicts import next_step_line

PAUSE_TITLES = {
    "stalled": "stopped growing",
    "gone": "is gone",
    "outside": "leads outside RLMAP_RUN_ROOTS",
}


# -- faults ----------------------------------------------------------------------------------------
@singledispatch
def fault_title(fault: object) -> str:
    """What a post's title calls a fault."""
    raise TypeError(f"no title for {type(fault).__name__}")


@fault_title.register
def _(fault: NanFinding) -> str:
    # The metrics the body names, so the title never says "the loss" over a gradient norm.
    return f"NaN/inf in {_metrics(fault.metrics)}"


@fault_title.register
def _(fault: DivergenceFinding) -> str:
    return "the loss diverged"


@fault_title.register
def _(fault: StallFinding) -> str:
    return "the run is not learning"


@fault_title.register
def _(fault: ShiftFinding) -> str:
    return "a sharp change at the run's tail"


@singledispatch
def fault_over_title(fault: object) -> str:
    """What a resolved note's title calls a fault that ended."""
    raise TypeError(f"no title for {type(fault).__name__}")


@fault_over_title.register
def _(fault: NanFinding) -> str:
    return "NaN/inf over"


@fault_over_title.register
def _(fault: DivergenceFinding) -> str:
    return "Divergence over"


@fault_over_title.register
def _(fault: StallFinding) -> str:
    return "Not learning over"


@fault_over_title.register
def _(fault: ShiftFinding) -> str:
    return "Shift over"


@singledispatch
def fault_sentence(fault: object) -> str:
    """A fault a watch found, in a sentence without its stop."""
    raise TypeError(f"no sentence for {type(fault).__name__}")


def _metrics(names: list[str]) -> str:
    if not names:
        return "a loss-like metric"
    return ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")


@fault_sentence.register
def _(fault: NanFinding) -> str:
    text = f"NaN/inf in {', '.join(fault.metrics) or 'a loss'} from step {fault.first_step}"
    if fault.last_step != fault.first_step:
        text += f" (last at step {fault.last_step}, {counted(fault.bad_steps, 'step')})"
    if not fault.active and fault.cleared_step is not None:
        text += f"; finite again for {fault.clear_after} steps by step {fault.cleared_step}"
    return text


@fault_sentence.register
def _(fault: DivergenceFinding) -> str:
    text = (
        f"{fault.metric} jumped at step {fault.step} from a level of {fault.baseline:.3g} "
        f"(sigma {fault.sigma:.3g}) and held for {fault.held}+ steps"
    )
    if fault.level is not None:
        text += f"; the last {fault.window} steps' median is {fault.level:.3g}"
    return text + ("" if fault.active else ", back inside the band")


@fault_sentence.register
def _(fault: StallFinding) -> str:
    text = (
        f"{CAUSES.get(fault.cause, fault.cause)} ({fault.metric}, from step {fault.first_step} "
        f"through step {fault.last_step})"
    )
    if not fault.active and fault.cleared_step is not None:
        text += f"; learning again by step {fault.cleared_step}"
    return text


@fault_sentence.register
def _(fault: ShiftFinding) -> str:
    text = "; ".join(fault.details) or f"a sharp change from step {fault.first_step}"
    if not fault.active and fault.cleared_step is not None:
        text += f"; back near the earlier level by step {fault.cleared_step}"
    return text


# -- changes ---------------------------------------------------------------------------------------
@singledispatch
def change_title(change: object) -> str | None:
    """The part of a post's title one change gives (None: it adds none)."""
    raise TypeError(f"no title for {type(change).__name__}")


@change_title.register
def _(change: StageStarted) -> str:
    if change.kind == "tie":
        return f"{change.stage} both have strong evidence"
    return f"{change.stage} started to bind"


@change_title.register
def _(change: StageChanged) -> str:
    tie = " tie" if change.kind == "change_tie" else ""
    return f"Binding stage changed: {change.previous or 'another stage'} → {change.stage}{tie}"


@change_title.register
def _(change: FaultOpened) -> str:
    return "Fault: " + fault_title(change.fault)


@change_title.register
def _(change: StageCleared) -> str:
    if change.kind == "no_longer_tie":
        return f"{change.stage} no longer tie"
    return f"{change.stage} no longer binds"


@change_title.register
def _(change: FaultOver) -> str:
    return fault_over_title(change.fault)


@change_title.register
def _(change: TieSummary) -> None:
    return None


@change_title.register
def _(change: WatchPaused) -> str:
    return f"Watch paused: the log {PAUSE_TITLES.get(change.reason, change.reason)}"


@change_title.register
def _(change: Unreadable) -> str:
    return "Cannot read the run now"


@change_title.register
def _(change: Readable) -> str:
    return "Reading the run again"


@singledispatch
def change_sentences(change: object) -> list[str]:
    """What one change says, a sentence each."""
    raise TypeError(f"no sentences for {type(change).__name__}")


@change_sentences.register
def _(change: StageStarted) -> list[str]:
    sure = f"{change.confidence or 0:.0%} sure"
    if change.kind == "tie":
        return [
            f"{change.stage} both have strong evidence on the run up to step {change.step}: no "
            f"single stage binds, both may ({sure} it is one of them)."
        ]
    return [
        f"{change.stage} binds now, on the run up to step {change.step} (the verdict is {sure})."
    ]


@change_sentences.register
def _(change: StageChanged) -> list[str]:
    sure = f"{change.confidence or 0:.0%} sure"
    if change.kind == "change_tie":
        return [
            f"{change.stage} now both have strong evidence; no single stage binds "
            f"({sure} it is one of them)."
        ]
    old = change.previous or "another stage"
    return [f"{old} no longer binds; {change.stage} does now (the verdict is {sure})."]


@change_sentences.register
def _(change: FaultOpened) -> list[str]:
    return [fault_sentence(change.fault) + (" (already over)" if change.transient else "") + "."]


@change_sentences.register
def _(change: TieSummary) -> list[str]:
    return [change.message]


@change_sentences.register
def _(change: StageCleared) -> list[str]:
    return [
        f"{change.checks} checks in a row with new steps, up to step {change.step}, no "
        f"longer name {change.stage}."
    ]


@change_sentences.register
def _(change: FaultOver) -> list[str]:
    return [fault_sentence(change.fault) + "."]


@change_sentences.register
def _(change: WatchPaused) -> list[str]:
    return [(change.message or change.reason) + ".", "I stopped checking it."]


@change_sentences.register
def _(change: Unreadable) -> list[str]:
    return [
        (change.message or "the source did not answer") + ".",
        "I keep the watch and try again at each check; I'll say when it reads again.",
    ]


@change_sentences.register
def _(change: Readable) -> list[str]:
    return ["The source answers again; checks go on as before."]


# -- a post ----------------------------------------------------------------------------------------
def alert_title(alert: Alert) -> str:
    """A watch post's title: what it raises, resolves or notices; a fault before any stage."""
    faults_first = sorted(alert.changes, key=lambda c: not isinstance(c, FaultOpened))
    titles = [t for t in map(change_title, faults_first) if t is not None]
    if alert.changes and isinstance(alert.changes[0], (WatchPaused, Unreadable, Readable)):
        return titles[0]  # a notice is its one change
    if alert.kind == "resolved":
        return "Resolved: " + "; ".join(titles)
    return " · ".join(titles)


def alert_opening(alert: Alert) -> list[str]:
    """What an alert says first, in three lines as a verdict does: what broke (a fault first, with
    its metric and step) or what changed, how sure the verdict it stands on is, and the one thing
    to do next."""
    faults = [c for c in alert.changes if isinstance(c, FaultOpened)]
    stages = [c for c in alert.changes if isinstance(c, (StageStarted, StageChanged))]
    sure = f"{alert.confidence:.0%} sure"
    binds = f"{alert.binding_title} binds" if alert.binding_title else "no single stage binds"
    if faults:
        first = sentence(fault_sentence(faults[0].fault))
        if len(faults) > 1:
            first += f"; and {counted(len(faults) - 1, 'more fault')}"
        second = f"Then: {binds} ({sure})"
    elif stages:
        first = change_title(stages[0]) or alert_title(alert)
        step = stages[0].step
        if stages[0].kind in ("tie", "change_tie"):
            sure += " one of them binds; no single stage does"
        second = sentence(f"{sure}, on the run up to step {step}" if step is not None else sure)
    else:
        return [alert_title(alert)]
    step_line = next_step_line(alert.next_step)
    return [first, second] + ([step_line] if step_line else [])


def alert_changes(alert: Alert) -> list[str]:
    """What a watch post says changed, one sentence each."""
    return [s for change in alert.changes for s in change_sentences(change)]
