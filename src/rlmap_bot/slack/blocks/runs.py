"""A diagnosis read from a run's logs: the verdict card (three lines, a few readings, where it was
read from, once), and its details (every fault, every value read with its provenance, what the
logs could not give, then the verdict in full)."""

from __future__ import annotations

from slack_sdk.models.blocks import Block

from rlmap_bot import wording
from rlmap_bot.results.runs import RunDiagnosis
from rlmap_bot.results.scaling import diagnosis_line
from rlmap_bot.slack.blocks.common import SECTION_LIMIT, context, fit, section
from rlmap_bot.slack.blocks.verdicts import brief_blocks, details_blocks
from rlmap_bot.slack.markup import code, cut, escape, prose
from rlmap_bot.wording.verdicts import opening


def _where(result: RunDiagnosis, name: str) -> str:
    run = result.run
    span = f"steps {run.first_step}-{run.last_step}" if run.first_step is not None else "no steps"
    framework = f", {escape(run.framework)} metric names" if run.framework else ""
    log = f"a {escape(run.format)} log{framework}"
    return f"Read {wording.counted(run.steps, 'step')} ({span}) of {code(name)}, {log}."


def run_text(result: RunDiagnosis) -> str:
    """The notification text: the first two of the three lines."""
    return escape(". ".join(opening(result)[:2]) + ".")


def run_blocks(
    result: RunDiagnosis, name: str, details: str | None = None
) -> tuple[list[Block], str]:
    """The card for a verdict read from ``name``, and its notification text."""
    forecast = diagnosis_line(result.forecast) if result.forecast is not None else None
    blocks = brief_blocks(result, details=details, where=_where(result, name), aside=forecast)
    return fit(blocks), run_text(result)


def run_details_blocks(result: RunDiagnosis, name: str) -> list[Block]:
    """What the card leaves out: the faults, each value read and how, what the logs could not
    give, and the verdict in full."""
    blocks: list[Block] = [context(_where(result, name))]
    if result.faults:
        items = [f"• *{escape(f.title)}*: {escape(f.detail)}" for f in result.faults]
        blocks.append(section(cut("*Faults, before any verdict*\n" + "\n".join(items), 3000)))
    lines = []
    for signal, source in result.signal_sources.items():
        lines.append(
            f"• {escape(result.title_of(signal))} ({code(signal)}) = "
            f"*{escape(result.value_text(signal))}*: {escape(source.detail)} "
            f"_({escape(source.metric)}, {escape(source.window)})_"
        )
    # a section holds 3,000 characters: the readings go in as many as they need
    chunk = "*From the logs*"
    for line in lines:
        if len(chunk) + len(line) + 1 > SECTION_LIMIT:
            blocks.append(section(chunk))
            chunk = line
        else:
            chunk += "\n" + line
    if lines:
        blocks.append(section(chunk))
    notes = [f"• {prose(w)}" for w in result.warnings]
    if result.missing:
        notes.append(
            "Not in the logs (a guided diagnosis would ask them): "
            + ", ".join(code(m) for m in result.missing)
        )
    if notes:
        blocks.append(context(cut("\n".join(notes), 2000)))
    return fit(blocks + details_blocks(result), 100)


def problem_blocks(name: str, problem: str) -> list[Block]:
    return [
        section(f":warning: I could not read *{escape(name)}*: {prose(wording.sentence(problem))}")
    ]
