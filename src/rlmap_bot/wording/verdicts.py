"""A verdict's opening, the same in the terminal and on a Slack card: three lines (what binds or
what broke, how sure, the one thing to do next) and its readings one line each.

The terminal prints the three lines above its full report; a card shows them above at most three
readings and keeps the rest behind its Details button (``slack/blocks/verdicts.py``).
"""

from __future__ import annotations

import re
from typing import Any

from rlmap_bot.results.diagnosis import readings_behind
from rlmap_bot.wording import abstains, counted, is_lead, sentence


def what_binds(verdict: Any) -> str:
    """The first line when no fault comes first: what binds, the tie, or that nothing does."""
    if is_lead(verdict):
        return f"{verdict.binding_title} may bind"
    if verdict.binding_stage:
        return f"{verdict.binding_title} binds"
    if verdict.tied:
        names = " and ".join(r.title for r in verdict.ranking if r.stage in verdict.tied)
        return f"{names} tie"
    if abstains(verdict):
        return "None yet, nothing read points at a stage"
    return "No single stage binds"


def how_sure(verdict: Any) -> str:
    """How sure the verdict is, and on how many readings (those that moved a stage)."""
    if abstains(verdict):
        return "no percentage: nothing read bears on a stage yet"
    if is_lead(verdict):
        return "no percentage: it rests on one measurement, and a second reading would settle it"
    sure = f"{verdict.confidence:.0%} sure"
    said = getattr(verdict, "said", None) or {}
    told = f" ({len(said)} from what you said)" if said else ""
    if verdict.binding_stage:
        readings = readings_behind(verdict.evidence, [verdict.binding_stage])
        if getattr(verdict, "one_measurement", False):
            return f"{sure}, on one measurement: a second reading would confirm it"
        return f"{sure}, on {counted(len(readings), 'reading')}{told}"
    if verdict.tied:
        return f"{sure} it is one of them"
    return f"{sure} of that"


def fault_line(fault: Any) -> str:
    """A fault of a run's logs as a first line: what broke, on which metric, from which step."""
    where = (
        "on every step"
        if fault.throughout
        else f"from step {fault.first_step}" + (f", {fault.count} steps" if fault.count > 1 else "")
    )
    return f"Fault: {fault.title} ({fault.metric}, {where})"


def next_step_line(step: Any) -> str | None:
    """The one thing to do next (a ``results.diagnosis.NextStep``)."""
    if step is None:
        return None
    return ("Do this next: " if step.kind == "lever" else "Check next: ") + step.text


def opening(verdict: Any) -> list[str]:
    """What a verdict (or a run's diagnosis) says first, in three lines: what binds or what broke
    (a fault first, with its metric and step), how sure, and the one thing to do next. The
    terminal prints them above its full report, a Slack card above a few readings."""
    faults = list(getattr(verdict, "faults", []) or [])
    step = next_step_line(getattr(verdict, "next_step", None))
    if faults:
        more = len(faults) - 1
        first = fault_line(faults[0]) + (f"; and {counted(more, 'more fault')}" if more else "")
        second = f"Then: {what_binds(verdict)}, {how_sure(verdict)}"
    else:
        first, second = f"Verdict: {what_binds(verdict)}", sentence(how_sure(verdict))
    return [first, second] + ([step] if step else [])


# Where a reason's first clause ends: a colon, a semicolon, or a full stop after a word of three
# lower-case letters or more, a digit or a bracket, before a capital (not "et al.", "Dr. GRPO").
_FIRST_CLAUSE = re.compile(r"[:;]\s|(?:(?<=[a-z]{3})|(?<=[0-9)%]))\.\s+(?=[A-Z])")


def evidence_line(evidence: Any, limit: int = 110) -> str:
    """One reading behind a verdict in one line: the first clause of why it counts, and its
    source by the catalog's short name."""
    why = _FIRST_CLAUSE.split(" ".join(evidence.why.split()), maxsplit=1)[0].rstrip(".")
    if len(why) > limit:
        why = why[: limit + 1].rsplit(" ", 1)[0].rstrip(" ,;:-") + "…"
    source = evidence.source
    if isinstance(source, str):  # a watch post's evidence names its paper by title
        name = getattr(evidence, "source_short", None) or source
    else:
        name = source.short or source.title
    return f"{why} ({name})"
