"""The bot's recurring sentences, in one place, as plain text.

Renderers add markup (Slack escapes and bolds, the terminal wraps), but what the
bot *says* about a verdict, a paper's verification, an unknown question or a
near miss is written once here, so the terminal and Slack never drift apart.
"""

from __future__ import annotations

from typing import Any, Iterable

VERIFICATION = {
    "verified": "verified against the sources",
    "partial": "partly verified",
    "unverified": "listed in the source map, not independently verified",
}


def sentence(text: object) -> str:
    """A message as a sentence: first letter upper case
    (errors are written lower case for the terminal).
    """
    text = str(text)
    return text[:1].upper() + text[1:]


def verification_label(status: str | None) -> str | None:
    """A short label for papers that are not fully verified; None for verified ones."""
    if status in {"partial", "unverified"}:
        return VERIFICATION[status]
    return None


def verdict_headline(verdict: Any) -> str:
    """One line: the binding stage and how sure, the tie, or that nothing stands out."""
    sure = f"{verdict.confidence:.0%}"
    if verdict.binding_stage:
        if getattr(verdict, "one_measurement", False):
            return f"Verdict: {verdict.binding_title} binds ({sure} sure, on one measurement)"
        return f"Verdict: {verdict.binding_title} binds ({sure} sure)"
    if verdict.tied:
        names = " and ".join(r.title for r in verdict.ranking if r.stage in verdict.tied)
        return f"Verdict: {names} tie ({sure} sure it is one of them)"
    return f"Verdict: no single stage stands out ({sure} sure of that)"


def papers_heading(count: int, filters: Iterable[str], total: int, near: Iterable[str] = ()) -> str:
    """ "3 papers by Schulman in the catalog, newest first:", or that there are none (and the
    bylines like the name asked for)."""
    narrowed = "".join(f" {f}" for f in filters)
    if not count:
        close = list(near)
        offered = f" Bylines like it: {', '.join(close)}." if close else ""
        return f"No papers{narrowed} in the catalog ({total} papers in all).{offered}"
    return f"{count} paper{'' if count == 1 else 's'}{narrowed} in the catalog, newest first:"


def nothing_relevant(query: str) -> str:
    return f"Nothing in the map is relevant to “{query}”."


ENGLISH_ONLY = "I read questions in English only; what I could match is below."
ENGLISH_ONLY_NOTHING = (
    "I read questions in English only, and nothing I could read in this one matches the map."
)


def english_only(matched: bool) -> str:
    """The other-language note: it promises matches only when there are some."""
    return ENGLISH_ONLY if matched else ENGLISH_ONLY_NOTHING


# The guess tier's heading: the gate refused, yet a word of the question speaks for the map.
GUESS = "Not sure this is what you mean; the closest in the map:"


def known_topics(topics: Iterable[str]) -> str:
    return (
        "I know about the five stages, the Scaling Laws topic and the papers on them: "
        + "; ".join(topics)
        + "."
    )


TRY_INSTEAD = (
    "Try `stages`, `papers`, or a question such as “why is my reward going up but evals down?”"
)


def about_your_run(command: str) -> str:
    """The pointer to the guided diagnosis under no answer or a guess: a symptom in everyday
    words is the question the catalog's words most often miss ("numbers go up, quality goes down"),
    and a diagnosis answers it better than silence. ``command`` is how this front-end spells it."""
    return f"About a run of yours? `{command}` asks what you see and names the stage that binds."


CLOSE_CALL = "Two entries fit about equally well. Did you mean one of these?"


def corrected(corrections: dict[str, str]) -> str:
    return "Searched with corrected spelling: " + ", ".join(
        f"{a} → {b}" for a, b in corrections.items()
    )


def did_you_mean(options: Iterable[str]) -> str:
    options = list(options)
    return f"did you mean {', '.join(options)}?" if options else ""


DIAGNOSIS_THREAD_OPENED = "Diagnosis started: answer in the thread I just opened."
DIAGNOSIS_WAITING = (
    "A diagnosis is already waiting for its first answer there: answer its card in the thread."
)


def reply_superseded(text: str) -> str:
    """A typed answer that reached the bot after a later one had been applied (already escaped)."""
    return (
        f"Your reply \u201c{text}\u201d arrived after a later one and was not used: the card shows "
        f"the "
        "question being asked now. Type 'back' to change an earlier answer."
    )


SOMETHING_WENT_WRONG = "Something went wrong on my side; it has been logged. Please try again."
BRIEFLY_UNAVAILABLE = (
    "I'm briefly unavailable (my database is not answering). Please try again in a minute."
)


PAUSED = (
    "Three \"don't know\"s and no stage stands out yet, so I'll stop asking one by one. These "
    "would tell most:"
)


def watch_interval(every: str, quiet: bool) -> str:
    """How often a watch checks and what it posts: "every 15m", "every 1h, faults only"."""
    return f"every {every}" + (", faults only" if quiet else "")


def watching(watching: Any) -> str:
    """A watch set from a channel, told to the person who set it (a ``results.watch.Watching``):
    the watch, then what its first check found."""
    watch = watching.watch
    said = (
        f"Watching `{watch.path}` (id `{watch.short_id}`), "
        f"{watch_interval(watch.every, watch.quiet)}. "
    )
    return said + first_check(watching.first)


def first_check(result: Any) -> str:
    """What the check made when a watch was set found (a ``results.watch.CheckResult``, or None
    when none ran), in a sentence or two."""
    if result is None:
        return ""
    if result.status == "busy":
        return "A check of it is running right now."
    if result.status == "paused":
        return f"It paused at once: {result.problem or ''}."
    if result.status == "problem":
        return f"First check: {result.problem or 'cannot read it'}."
    text = f"First check: {result.steps} steps read"
    if result.format:
        text += f" ({result.format})"
    if result.verdict is not None:
        text += f"; {result.verdict.headline}"
    posted = [a for a in result.alerts if a.kind == "alert"]
    if posted:
        text += f". Posted: {alert_title(posted[0])}"
    return text + "."


# -- watch posts: the sentences of a ``results.watch.Alert``'s typed changes ----------------------
FAULT_TITLES = {
    "nan": "NaN/inf in the loss",
    "divergence": "the loss diverged",
    "not_learning": "the run is not learning",
    "shift": "a sharp change at the run's tail",
}
FAULT_OVER = {"nan": "NaN/inf over", "divergence": "Divergence over"}
PAUSE_TITLES = {
    "stalled": "stopped growing",
    "gone": "is gone",
    "outside": "leads outside RLMAP_RUN_ROOTS",
}


def _name(name: str) -> str:
    return name.replace("_", " ")


def fault_sentence(fault: Any) -> str:
    """A fault the scan found (a ``results.watch.FaultFinding``), in a sentence without its stop."""
    name = fault.name
    if name == "nan":
        text = f"NaN/inf in {', '.join(fault.metrics) or 'a loss'} from step {fault.first_step}"
        if fault.last_step != fault.first_step:
            text += f" (last at step {fault.last_step}, {fault.bad_steps} steps)"
        if not fault.active and fault.cleared_step is not None:
            text += f"; finite again for {fault.window} steps by step {fault.cleared_step}"
        return text
    if name == "divergence":
        text = (
            f"{fault.metrics[0] if fault.metrics else 'the loss'} jumped at step {fault.step} "
            f"from a level of {fault.baseline:.3g} (sigma {fault.sigma:.3g}) and held for "
            f"{fault.held}+ steps"
        )
        if fault.level is not None:
            text += f"; the last {fault.window} steps' median is {fault.level:.3g}"
        return text + ("" if fault.active else ", back inside the band")
    if name == "not_learning":
        text = (
            f"{fault.stall} ({', '.join(fault.metrics)}, from step {fault.first_step} "
            f"through step {fault.last_step})"
        )
        if not fault.active and fault.cleared_step is not None:
            text += f"; learning again by step {fault.cleared_step}"
        return text
    if name == "shift":
        text = "; ".join(fault.details) or f"a sharp change from step {fault.first_step}"
        if not fault.active and fault.cleared_step is not None:
            text += f"; back near the earlier level by step {fault.cleared_step}"
        return text
    step = fault.first_step if fault.first_step is not None else fault.step
    return f"{_name(name)} from step {step}" if step is not None else _name(name)


def _change_title(change: Any) -> str | None:
    """The part of a post's title one change gives (None: it adds none)."""
    kind = change.kind
    if kind == "start":
        return f"{change.stage} started to bind"
    if kind == "tie":
        return f"{change.stage} both have strong evidence"
    if kind in {"change", "change_tie"}:
        tie = " tie" if kind == "change_tie" else ""
        return f"Binding stage changed: {change.previous or 'another stage'} → {change.stage}{tie}"
    if kind == "fault":
        return "Fault: " + FAULT_TITLES.get(change.fault.name, _name(change.fault.name))
    if kind == "no_longer":
        return f"{change.stage} no longer binds"
    if kind == "no_longer_tie":
        return f"{change.stage} no longer tie"
    if kind == "fault_over":
        name = change.fault.name
        return FAULT_OVER.get(name, f"{_name(name).capitalize()} over")
    return None


def alert_title(alert: Any) -> str:
    """A watch post's title (a ``results.watch.Alert``): what it raises, resolves or notices."""
    first = alert.changes[0].kind if alert.changes else None
    if first == "paused":
        reason = alert.changes[0].reason or "stalled"
        return f"Watch paused: the log {PAUSE_TITLES.get(reason, reason)}"
    if first == "unreadable":
        return "Cannot read the run now"
    if first == "readable":
        return "Reading the run again"
    titles = [t for t in map(_change_title, alert.changes) if t is not None]
    if alert.kind == "resolved":
        return "Resolved: " + "; ".join(titles)
    return " · ".join(titles)


def _change_sentences(change: Any) -> list[str]:
    kind, sure = change.kind, f"{change.confidence or 0:.0%} sure"
    if kind == "start":
        return [
            f"{change.stage} binds now, on the run up to step {change.step} (the verdict is "
            f"{sure})."
        ]
    if kind == "tie":
        return [
            f"{change.stage} both have strong evidence on the run up to step {change.step}: no "
            f"single stage binds, both may ({sure} it is one of them)."
        ]
    if kind == "change_tie":
        return [
            f"{change.stage} now both have strong evidence; no single stage binds "
            f"({sure} it is one of them)."
        ]
    if kind == "change":
        old = change.previous or "another stage"
        return [f"{old} no longer binds; {change.stage} does now (the verdict is {sure})."]
    if kind == "fault":
        return [
            fault_sentence(change.fault) + (" (already over)" if change.transient else "") + "."
        ]
    if kind == "summary":
        return [change.message or ""]
    if kind in {"no_longer", "no_longer_tie"}:
        return [
            f"{change.checks} checks in a row with new steps, up to step {change.step}, no "
            f"longer name {change.stage}."
        ]
    if kind == "fault_over":
        return [fault_sentence(change.fault) + "."]
    if kind == "paused":
        return [(change.message or change.reason or "stalled") + ".", "I stopped checking it."]
    if kind == "unreadable":
        return [
            (change.message or "the source did not answer") + ".",
            "I keep the watch and try again at each check; I'll say when it reads again.",
        ]
    return ["The source answers again; checks go on as before."]


def alert_changes(alert: Any) -> list[str]:
    """What a watch post says changed (a ``results.watch.Alert``), one sentence each."""
    return [s for change in alert.changes for s in _change_sentences(change)]
