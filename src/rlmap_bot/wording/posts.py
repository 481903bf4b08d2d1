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
from rlmap_bot.results.scaling import number
from rlmap_bot.results.watch import (
    Alert,
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
    if fault.earlier_steps and fault.earlier_first_step is not None:
        total = counted(fault.bad_steps + fault.earlier_steps, "step")
        text += (
            f", after {counted(fault.earlier_steps, 'earlier step')} from step "
            f"{fault.earlier_first_step} that were finite again ({total} in all)"
        )
    if not fault.active and fault.cleared_step is not None:
        text += f"; finite again for {fault.clear_after} steps by step {fault.cleared_step}"
    return text


@fault_sentence.register
def _(fault: DivergenceFinding) -> str:
    text = (
        f"{fault.metric} jumped at step {fault.step} from a level of {fault.baseline:.3g} (sigma "
        f"{fault.sigma:.3g}) and held for {fault.held}+ steps"
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
    if change.confidence is None:  # a lead on one measurement (wording.is_lead)
        return f"{change.stage} may have started to bind"
    return f"{change.stage} started to bind"


@change_title.register
def _(change: StageChanged) -> str:
    tie = " tie" if change.kind == "change_tie" else ""
    changed = "may have changed" if change.confidence is None else "changed"  # a lead: is_lead
    return f"Binding stage {changed}: {change.previous or 'another stage'} → {change.stage}{tie}"


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
def _(change: StopAdvised) -> str:
    if change.reason == "reached":
        return "Time to stop: at 95% of its forecast ceiling"
    return "Forecast ceiling fell sharply"


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


def _sure(confidence: float | None) -> str:
    """How sure a stage verdict in a post is; None is a lead on one measurement (a stage named
    with no percentage: wording.is_lead)."""
    return "on one measurement, no percentage" if confidence is None else f"{confidence:.0%} sure"


@change_sentences.register
def _(change: StageStarted) -> list[str]:
    sure = _sure(change.confidence)
    if change.kind == "tie":
        return [
            (
                f"{change.stage} both have strong evidence on the run up to step {change.step}: no "
                f"single stage binds, both may ({sure} it is one of them)."
            )
        ]
    if change.confidence is None:
        lead = f"{change.stage} may bind now, on the run up to step {change.step}"
        settle = "a second reading would settle it"
        return [f"{lead}: the verdict rests on one measurement, with no percentage, and {settle}."]
    return [
        f"{change.stage} binds now, on the run up to step {change.step} (the verdict is {sure})."
    ]


@change_sentences.register
def _(change: StageChanged) -> list[str]:
    sure = _sure(change.confidence)
    if change.kind == "change_tie":
        return [
            (
                f"{change.stage} now both have strong evidence; no single stage binds ({sure} it "
                f"is one of them)."
            )
        ]
    old = change.previous or "another stage"
    if change.confidence is None:
        return [f"{old} no longer binds; {change.stage} may now ({sure})."]
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
        (
            f"{change.checks} checks in a row with new steps, up to step {change.step}, no longer "
            f"name {change.stage}."
        )
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


@change_sentences.register
def _(change: StopAdvised) -> list[str]:
    c = change.ceiling
    ceiling = f"{_n(change, c.value)} ({_n(change, c.low)}-{_n(change, c.high)})"
    curve = f"The {change.quantity} ({change.metric})"
    up_to = f", on the run up to step {change.step:,}" if change.step is not None else ""
    if change.reason == "reached":
        share = f", {change.reached:.0%} of the way from its start" if change.reached else ""
        return [
            (
                f"{curve} is at {_n(change, change.now)}{share} to a forecast ceiling of "
                f"{ceiling}{up_to}."
            )
        ]
    e = change.earlier
    before = (
        f", down from {_n(change, e.value)} ({_n(change, e.low)}-{_n(change, e.high)}) forecast at "
        f"step {e.step:,}"
        if e is not None
        else ""
    )
    return [
        (
            f"The forecast ceiling of the {change.quantity} ({change.metric}) is {ceiling} "
            f"now{before}; the curve has turned down ({_n(change, change.now)} now){up_to}."
        )
    ]


# -- when to stop (watch/stopping.py) --------------------------------------------------------------
def _n(change: StopAdvised, value: float) -> str:
    """A value with the decimals the ceiling's interval needs."""
    return number(value, change.ceiling.low, change.ceiling.high)


def stop_first_line(change: StopAdvised) -> str:
    """What a stop alert says first: the run has reached its ceiling, or its ceiling fell."""
    if change.reason == "reached":
        more = _n(change, change.more or 0.0)
        return f"Reached 95% of its forecast ceiling: more steps buy less than +{more}"
    earlier = change.earlier
    since = f" at step {earlier.step:,}" if earlier is not None else ""
    was = f" from {_n(change, earlier.value)}{since}" if earlier is not None else ""
    return f"Forecast ceiling fell sharply, to {_n(change, change.ceiling.value)}{was}"


def stop_interval_line(change: StopAdvised) -> str:
    """How sure, on what: the ceiling's 80% interval, the curve and the steps it rests on."""
    c = change.ceiling
    up_to = f" up to step {change.step:,}" if change.step is not None else ""
    return (
        f"80% sure the ceiling lies in {_n(change, c.low)}-{_n(change, c.high)}; the "
        f"{change.quantity} ({change.metric}) is at {_n(change, change.now)} now, on the run{up_to}"
    )


def stop_next_line(change: StopAdvised) -> str:
    """The one thing to do next. Reached: more steps buy little, and only the recipe moves a
    ceiling (ScaleRL: knobs that change the efficiency leave the asymptote where it is;
    domain-facts, "the fitted sigmoid asymptote A lies below the target"). Falling: keep what the
    run had before the fall and read what turned."""
    if change.reason == "reached":
        return (
            "Do this next: stop it here and spend the compute elsewhere; only a change of recipe "
            "or data raises the ceiling, more steps do not"
        )
    step = change.earlier.step if change.earlier is not None else None
    keep = f"keep the checkpoint from step {step:,}, before the fall, and " if step else ""
    return f"Check next: {keep}read what turned (entropy, KL, length) with `diagnose --run`"


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
    stops = [c for c in alert.changes if isinstance(c, StopAdvised)]
    sure = "no percentage" if alert.confidence is None else f"{alert.confidence:.0%} sure"
    binds = (
        # A stage with no percentage is a lead on one measurement (wording.is_lead).
        f"{alert.binding_title} may bind, on one measurement"
        if alert.binding_title and alert.confidence is None
        else f"{alert.binding_title} binds"
        if alert.binding_title
        else "nothing read points at a stage"
        if alert.confidence is None
        else "no single stage binds"
    )
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
        elif alert.confidence is None:
            sure = "no percentage: it rests on one measurement"
        second = sentence(f"{sure}, on the run up to step {step}" if step is not None else sure)
    elif stops:
        return [stop_first_line(stops[0]), sentence(stop_interval_line(stops[0]))] + [
            stop_next_line(stops[0])
        ]
    else:
        return [alert_title(alert)]
    step_line = next_step_line(alert.next_step)
    return [first, second] + ([step_line] if step_line else [])


def alert_changes(alert: Alert) -> list[str]:
    """What a watch post says changed, one sentence each."""
    return [s for change in alert.changes for s in change_sentences(change)]
