"""A verdict's card, read in five seconds: three lines (what binds or what broke, how sure, the one
thing to do next), at most three readings of one line each, where it was read from, and a Details
button; the details (every reading with its provenance, the stages' points, the checks, what to
read) are their own view, opened in a modal.

The three lines are :func:`rlmap_bot.wording.verdicts.opening`'s, which the terminal prints above
its full report; the readings are :func:`rlmap_bot.wording.verdicts.evidence_line`'s.
"""

from __future__ import annotations

from slack_sdk.models.blocks import Block, HeaderBlock, PlainTextObject

from rlmap_bot.results.diagnosis import StageScore, Verdict, format_value
from rlmap_bot.slack.blocks.common import (
    HEADER_LIMIT,
    actions,
    button,
    context,
    fit,
    section,
)
from rlmap_bot.slack.markup import code, cut, cut_words, escape, mention, prose
from rlmap_bot.wording import verdicts as wording

DETAILS_ACTION = "details_show"
READINGS_SHOWN = 3  # the budget: three readings, one line each
PAPERS_SHOWN = 2  # buttons to read beside Details; the rest are in the details
FAULT_ICON = ":rotating_light:"  # a fault, and only a fault, is an alarm


def _first_line(verdict: Verdict) -> HeaderBlock:
    line = wording.opening(verdict)[0]
    icon = f"{FAULT_ICON} " if getattr(verdict, "faults", None) else ""
    return HeaderBlock(text=PlainTextObject(text=icon + cut(line, HEADER_LIMIT - 20), emoji=True))


def readings(verdict: Verdict) -> list[str]:
    """The readings the card shows: those behind the binding stage (or the tie), strongest first;
    for no verdict, the strongest of any."""
    focus = [verdict.binding_stage] if verdict.binding_stage else verdict.tied
    shown = [e for e in verdict.evidence if any(e.points.get(s, 0) > 0 for s in focus)]
    shown = shown or [e for e in verdict.evidence if e.direction == "for"]
    return [wording.evidence_line(e) for e in shown[:READINGS_SHOWN]]


def brief_blocks(
    verdict: Verdict,
    details: str | None = None,
    where: str | None = None,
    note: str | None = None,
    by: str | None = None,
    aside: str | None = None,
) -> list[Block]:
    """The card: the three lines, the readings, ``aside`` (one more line of the result's own, such
    as a run's forecast), ``where`` it was read from (said once), and the Details button carrying
    ``details`` (the id its result is kept under) when there is one."""
    lines = wording.opening(verdict)
    said = [escape(lines[1])]
    if len(lines) > 2:
        head, _, rest = lines[2].partition(": ")
        said.append(f"*{escape(head)}:* {prose(rest)}")
    blocks: list[Block] = [_first_line(verdict), section("\n".join(said))]
    shown = readings(verdict)
    if shown:
        blocks.append(section("\n".join(f"• {prose(cut_words(r, 160))}" for r in shown)))
    if aside:
        blocks.append(context(prose(aside)))
    if where:
        blocks.append(context(where))
    buttons = []
    if details:
        buttons.append(button("Details", DETAILS_ACTION, details, style="primary"))
    buttons += [
        button(p.short or p.title, f"entry_show_{i}", p.id)
        for i, p in enumerate(verdict.papers[:PAPERS_SHOWN])
    ]
    if buttons:
        blocks.append(actions(buttons, block_id="verdict"))
    if note:
        blocks.append(context(f"{mention(by) + ': ' if by else ''}{prose(note)}"))
    return blocks


def details_blocks(verdict: Verdict) -> list[Block]:
    """The verdict in full: its summary, every stage's points, every reading and why, the checks
    that would tell most, and what to read."""
    blocks: list[Block] = [section(prose(verdict.summary))]

    def bold_if_binding(r: StageScore) -> str:
        mark = "*" if r.stage == verdict.binding_stage else ""
        return f"{mark}{escape(r.title)}{mark}"

    ranking = "\n".join(f"{bold_if_binding(r)}: {r.score:g} points" for r in verdict.ranking)
    blocks.append(section("*Stages by score*\n" + ranking))
    if verdict.evidence:
        lines = []
        for ev in verdict.evidence[:8]:
            seen = ", ".join(
                f"{code(k)} = {escape(format_value(v))}" for k, v in ev.signals.items()
            )
            moves = ", ".join(f"{escape(s)} {p:+g}" for s, p in ev.points.items())
            lines.append(f"• {seen} ({moves}): {prose(ev.why)} _[{escape(ev.source.title)}]_")
        if len(verdict.evidence) > 8:
            lines.append(f"…and {len(verdict.evidence) - 8} more")
        blocks.append(section("*Evidence*\n" + "\n".join(lines)))
    if verdict.next_checks:
        checks = "\n".join(
            f"• *{escape(c.title)}* ({code(c.signal)}): {prose(c.question)}"
            for c in verdict.next_checks
        )
        blocks.append(section("*Check next*\n" + checks))
    if verdict.papers:
        blocks.append(section("*Read*"))
        blocks.append(
            actions(
                [
                    button(p.short or p.title, f"entry_show_{i}", p.id)
                    for i, p in enumerate(verdict.papers[:10])
                ]
            )
        )
    return fit(blocks, 100)
