"""The bot's recurring sentences, in one place, as plain text.

Renderers add markup (Slack escapes and bolds, the terminal wraps), but what the
bot *says* about a verdict, a paper's verification, an unknown question or a
near miss is written once here, so the terminal and Slack never drift apart.
What a watch post says is in :mod:`rlmap_bot.wording.posts` (it reads the typed result models,
which a plain ask or ``--help`` never loads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from rlmap_bot.results.watch import CheckResult, Watching

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


#: Nouns whose plural is not the noun plus "s" or "es" (the few the bot counts).
IRREGULAR = {"analysis": "analyses", "person": "people"}


def plural(noun: str) -> str:
    """The plural of a noun the bot counts, by the regular English rules (its last word)."""
    head, _, last = noun.rpartition(" ")
    if last in IRREGULAR:
        word = IRREGULAR[last]
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        word = last + "es"
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u"):
        word = last[:-1] + "ies"
    else:
        word = last + "s"
    return f"{head} {word}" if head else word


def counted(count: float, noun: str, plural_form: str | None = None) -> str:
    """A count and its noun, agreeing: "1 step", "2 steps", "1.5 passes", "0 readings".

    One helper for every place a count meets a noun, so the terminal, JSON and Slack say the
    same; written here rather than taken from ``inflect`` because the bot counts a handful of
    regular nouns, which three rules cover (``plural_form`` for any other)."""
    shown = f"{count:g}" if isinstance(count, float) else f"{count:,}"
    word = noun if count == 1 else (plural_form or plural(noun))
    return f"{shown} {word}"


def verification_label(status: str | None) -> str | None:
    """A short label for papers that are not fully verified; None for verified ones."""
    if status in {"partial", "unverified"}:
        return VERIFICATION[status]
    return None


def is_lead(verdict: Any) -> bool:
    """A stage named with no percentage: read from a run's logs on one measurement, which no
    frequency was measured for, so the stage is a lead to confirm, not a verdict to be X% sure
    of (``diagnosis/engine.py`` says why)."""
    return bool(getattr(verdict, "binding_stage", None)) and verdict.confidence is None


def verdict_headline(verdict: Any) -> str:
    """One line: the binding stage and how sure, the tie, or that nothing stands out."""
    if abstains(verdict):
        return "Verdict: none yet, nothing read points at a stage"
    if is_lead(verdict):
        return f"Verdict: {verdict.binding_title} may bind (one measurement, no percentage)"
    sure = f"{verdict.confidence:.0%}"
    if verdict.binding_stage:
        if getattr(verdict, "one_measurement", False):
            return f"Verdict: {verdict.binding_title} binds ({sure} sure, on one measurement)"
        return f"Verdict: {verdict.binding_title} binds ({sure} sure)"
    if verdict.tied:
        names = " and ".join(r.title for r in verdict.ranking if r.stage in verdict.tied)
        return f"Verdict: {names} tie ({sure} sure it is one of them)"
    return f"Verdict: no single stage stands out ({sure} sure of that)"


def abstains(verdict: Any) -> bool:
    """No stage bound, none tied and no reading moved any stage up: nothing to be
    X% sure of, and the bot says what it read and what would settle it instead.  The engine
    sets such a verdict's confidence to None (the model's truth); the shape is checked too for
    a verdict made before it did (a session kept in the state store)."""
    if getattr(verdict, "confidence", 0.0) is None:
        return not getattr(verdict, "binding_stage", None)  # a named stage is a lead: see below
    ranking = getattr(verdict, "ranking", None) or []
    moved = any(p > 0 for e in getattr(verdict, "evidence", []) for p in e.points.values())
    return (
        not verdict.binding_stage
        and not verdict.tied
        and bool(ranking)
        and all(r.score <= 0 for r in ranking)
        and not moved
    )


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
        f"the question being asked now. Type 'back' to change an earlier answer."
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


def watching(watching: Watching) -> str:
    """A watch set from a channel, told to the person who set it: the watch, then what its first
    check found."""
    watch = watching.watch
    said = (
        f"Watching `{watch.path}` (id `{watch.short_id}`), "
        f"{watch_interval(watch.every, watch.quiet)}. "
    )
    return said + first_check(watching.first)


def first_check(result: CheckResult | None) -> str:
    """What the check made when a watch was set found (None when none ran), in a sentence or
    two."""
    if result is None:
        return ""
    if result.status == "busy":
        return "A check of it is running right now."
    if result.status == "paused":
        return f"It paused at once: {result.problem or ''}."
    if result.status == "problem":
        return f"First check: {result.problem or 'cannot read it'}."
    text = f"First check: {counted(result.steps, 'step')} read"
    if result.format:
        text += f" ({result.format})"
    if result.verdict is not None:
        text += f"; {result.verdict.headline}"
    posted = [a for a in result.alerts if a.kind == "alert"]
    if posted:
        from rlmap_bot.wording.posts import alert_title

        text += f". Posted: {alert_title(posted[0])}"
    return text + "."
