"""Help (generated from the command registry), notices, paper and session lists."""

from __future__ import annotations

from slack_sdk.models.blocks import Block

from rlmap_bot import wording
from rlmap_bot.results.general import Help, HelpEntry, KbStats, PaperList, SessionList
from rlmap_bot.slack.blocks.common import fit, section
from rlmap_bot.slack.markup import code, escape, prose

#: What a listing of every command says before and after it in Slack (the bot's own mrkdwn).
INTRO = (
    "*Ask* me about the five stages of an RL system, the Scaling Laws topic and the papers on "
    "them: mention me in a channel (I answer in a thread), send me a DM, or use `/rlmap ask "
    "QUESTION` for a private answer with a button to share it. *Diagnose* a run with `/rlmap "
    "diagnose`: answer in the thread with the buttons or by typing values. *Watch* a run's log "
    "with `/rlmap watch PATH`: I post here when a stage starts to bind or the loss goes NaN. "
    "Commands:"
)
OUTRO = "Anything else after `/rlmap` is a question."


def help_blocks(result: Help) -> list[Block]:
    blocks: list[Block] = []
    if result.problem:
        blocks.append(section(f":warning: {prose(result.problem)}"))
    listing = result.command is None
    lines = [INTRO] if listing else []
    lines += [_line(e) for e in result.commands]
    if listing:
        lines.append(OUTRO)
    blocks.append(section("\n".join(lines)))
    return blocks


def _line(entry: HelpEntry) -> str:
    usage = f"{code(entry.usage)}"
    summary = f": {prose(entry.summary)}" if entry.summary else ""
    if entry.kind == "example":
        return f"      e.g. {usage}"
    return f"      ◦ {usage}{summary}" if entry.kind == "option" else f"• {usage}{summary}"


def papers_blocks(result: PaperList) -> list[Block]:
    heading = escape(
        wording.papers_heading(len(result.papers), result.filters, result.total, result.near)
    )
    if not result.papers:
        return [section(heading)]
    lines = []
    for paper in result.papers[:40]:
        label = wording.verification_label(paper.verification)
        who = f", {escape(paper.byline)}" if paper.byline else ""
        lines.append(
            f"• *{escape(paper.title)}* ({paper.year or 'n.d.'}{who}) {code(paper.id)}"
            + (f" _{label}_" if label else "")
        )
    more = len(result.papers) - 40
    chunks = [lines[i : i + 10] for i in range(0, len(lines), 10)]
    blocks: list[Block] = [section(heading + "\n" + "\n".join(chunks[0]))]
    blocks += [section("\n".join(c)) for c in chunks[1:]]
    if more > 0:
        blocks.append(
            section(f"…and {more} more; narrow with `papers by NAME` or `papers stage ID`.")
        )
    return fit(blocks)


def sessions_blocks(result: SessionList) -> list[Block]:
    if not result.sessions:
        return [section("No open diagnoses.")]
    return [
        section(
            "\n".join(
                f"• `{s.id[:8]}` {escape(s.user)}: {s.answers} answered, next {code(s.next or '-')}"
                for s in result.sessions[:20]
            )
        )
    ]


def kb_stats_blocks(result: KbStats) -> list[Block]:
    return [
        section(
            "\n".join(f"• {escape(c.kind)}: {c.count}" for c in result.counts)
            + f"\n*total*: {result.total}"
        )
    ]
