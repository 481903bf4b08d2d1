"""Terminal text for the catalog and the bot's own housekeeping: entry cards, the stages, paper
lists, open diagnoses, the store's counts, help and notices.

Registered on :func:`rlmap_bot.cli.render.text` when a result of theirs is first rendered.
"""

from __future__ import annotations

import textwrap

from rlmap_bot import wording
from rlmap_bot.cli.render import WIDTH, as_json, list_item, text, wrapped
from rlmap_bot.results.cards import Card
from rlmap_bot.results.general import (
    CatalogExport,
    Help,
    HelpEntry,
    KbBuilt,
    KbStats,
    Notice,
    PaperList,
    SessionList,
    StageList,
)


@text.register
def _(result: CatalogExport) -> str:
    return as_json(result)


@text.register
def card_text(card: Card) -> str:
    lines = [
        f"{card.title}",
        f"[{card.kind}] {card.id}" + (f" · {card.subtitle}" if card.subtitle else ""),
    ]
    if card.url:
        lines.append(card.url)
    lines += ["", wrapped(card.summary, "")]
    for section in card.sections:
        lines += ["", f"{section.heading}:"]
        if section.text:
            lines.append(wrapped(section.text))
        for item in section.items:
            lines.append(list_item(item))
    if card.links:
        lines += ["", "Linked entries:"]
        for link in card.links:
            lines.append(f"  - [{link.kind}] {link.title} ({link.id})")
    return "\n".join(lines)


@text.register
def stages_text(result: StageList) -> str:
    lines = ["The five stages of the RL Scaling Bottleneck Map:"]
    for stage in result.stages:
        lines.append(f"{stage.order}. {stage.title} ({stage.id})")
        lines.append(wrapped(stage.one_line, "   "))
    return "\n".join(lines)


@text.register
def papers_text(result: PaperList) -> str:
    lines = [wording.papers_heading(len(result.papers), result.filters, result.total, result.near)]
    for paper in result.papers:
        who = f"{paper.byline}, " if paper.byline else ""
        label = wording.verification_label(paper.verification)
        lines.append(
            f"- {paper.title} ({who}{paper.year or 'n.d.'}) [{paper.id}]"
            + (f" ({label})" if label else "")
        )
    return "\n".join(lines)


@text.register
def sessions_text(result: SessionList) -> str:
    if not result.sessions:
        return "no open diagnoses"
    lines = []
    for s in result.sessions:
        answers = f"{s.answers} answer{'' if s.answers == 1 else 's'}"
        lines.append(
            f"{s.id[:8]}  {s.user:10} {answers}  updated {s.updated_at:%Y-%m-%d %H:%M} UTC  next: "
            f"{s.next}"
        )
    return "\n".join(lines)


@text.register
def kb_stats_text(result: KbStats) -> str:
    lines = [f"{c.kind:8} {c.count}" for c in result.counts]
    lines.append(f"{'total':8} {result.total}")
    lines.append(f"built at {result.built_at} from {result.knowledge_root}")
    return "\n".join(lines)


@text.register
def kb_built_text(result: KbBuilt) -> str:
    counts = ", ".join(f"{c.count} {c.kind}{'s' if c.count != 1 else ''}" for c in result.counts)
    if result.checked_only:
        return f"ok: {sum(c.count for c in result.counts)} entries ({counts})"
    return f"built {result.path}: {counts}"


#: What a listing of every command says before and after it, in the shell and on the command line.
INTRO = {
    "shell": "Ask anything (any line that is not a command is a question), or use a command:",
    "cli": "Commands:",
}
OUTRO = {
    "shell": "Leave with quit (also exit, Ctrl-D).",
    "cli": "Also `rlmap-bot serve` (the Slack app), `rlmap-bot shell` and `rlmap-bot key`: "
    "`rlmap-bot --help` lists every command.",
}
#: The shell's own word (cli/shell.py reads it before any command).
SHELL_QUIT = HelpEntry(usage="quit", summary="leave the shell")


@text.register
def help_text(result: Help) -> str:
    lines = [f"error: {result.problem}"] if result.problem else []
    listing = result.command is None
    entries = list(result.commands)
    if listing:
        lines.append(INTRO.get(result.surface, ""))
        entries += [SHELL_QUIT] if result.surface == "shell" else []
    indent = {"command": "  ", "option": "    ", "example": "    e.g. "}
    width = min(34, max((len(indent[e.kind] + e.usage) for e in entries if e.summary), default=0))
    for entry in entries:
        usage = indent[entry.kind] + entry.usage
        hang = " " * (width + 2)
        if not entry.summary:
            lines.append(usage)
        elif len(usage) > width:  # a long usage line gets its summary below it
            lines += [
                textwrap.fill(usage, WIDTH, subsequent_indent=" " * 6),
                wrapped(entry.summary, hang),
            ]
        else:
            lines.append(
                textwrap.fill(f"{usage:{width}}  {entry.summary}", WIDTH, subsequent_indent=hang)
            )
    if listing:
        lines.append(OUTRO.get(result.surface, ""))
    return "\n".join(line for line in lines if line)


@text.register
def notice_text(result: Notice) -> str:
    return result.text
