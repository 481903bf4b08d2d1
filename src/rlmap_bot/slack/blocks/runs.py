"""A diagnosis read from a run's logs: what the logs said (with provenance), then the verdict."""

from __future__ import annotations

from slack_sdk.models.blocks import Block

from rlmap_bot import wording
from rlmap_bot.results.runs import RunDiagnosis
from rlmap_bot.results.scaling import diagnosis_line
from rlmap_bot.slack.blocks.common import SECTION_LIMIT, context, fit, section
from rlmap_bot.slack.blocks.diagnosis import verdict_blocks
from rlmap_bot.slack.markup import cut, escape


def run_blocks(result: RunDiagnosis, name: str) -> tuple[list[Block], str]:
    """Blocks and notification text for a verdict read from ``name``."""
    run = result.run
    span = f"steps {run.first_step}-{run.last_step}" if run.first_step is not None else "no steps"
    framework = f", {run.framework} metric names" if run.framework else ""
    faults: list[Block] = []
    if (
        result.faults
    ):  # said before any stage verdict: a run that does not learn has no binding stage to fix
        items = [f"• *{escape(f.title)}*: {escape(f.detail)}" for f in result.faults]
        faults.append(
            section(
                cut(
                    ":rotating_light: *Faults, before any verdict*\n" + "\n".join(items),
                    SECTION_LIMIT,
                )
            )
        )
    head: list[Block] = [
        context(
            escape(f"Read {run.steps} steps ({span}) of {name}, a {run.format} log{framework}.")
        )
    ]
    lines = []
    for signal, source in result.signal_sources.items():
        lines.append(
            f"• {escape(result.title_of(signal))} (`{escape(signal)}`) = "
            f"*{escape(result.value_text(signal))}*: "
            f"{escape(source.detail)} _({escape(source.metric)}, {escape(source.window)})_"
        )
    if lines:
        head.append(section(cut("*From the logs*\n" + "\n".join(lines), SECTION_LIMIT)))
    notes = [f"• {escape(w)}" for w in result.warnings]
    if result.missing:
        notes.append(
            "Not in the logs (answer them on the card for a sharper verdict): "
            + ", ".join(f"`{escape(m)}`" for m in result.missing)
        )
    if notes:
        head.append(context(cut("\n".join(notes), 2000)))
    # The forecast of the run's curve, one line under the verdict's headline.
    forecast: list[Block] = []
    if result.forecast is not None:
        forecast.append(section(escape(diagnosis_line(result.forecast))))
    text = wording.verdict_headline(result)
    if result.faults:
        text = f"{result.faults[0].title} ({result.faults[0].metric}). {text}"
    verdict = verdict_blocks(result)
    return fit(faults + verdict[:1] + forecast + head + verdict[1:]), escape(text)


def problem_blocks(name: str, problem: str) -> list[Block]:
    return [
        section(f":warning: I could not read *{escape(name)}*: {escape(wording.sentence(problem))}")
    ]
