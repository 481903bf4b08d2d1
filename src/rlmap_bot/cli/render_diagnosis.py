"""Terminal text for the diagnosis: verdicts, questions, a paused flow, run readings, simulations.

Registered on :func:`rlmap_bot.cli.render.text` when a result of theirs is first rendered, so a
plain ``ask`` never loads the diagnosis models.
"""

from __future__ import annotations

from pathlib import Path

from rlmap_bot import wording
from rlmap_bot.cli.render import list_item, text, wrapped
from rlmap_bot.results.diagnosis import (
    Question,
    Simulation,
    Step,
    Verdict,
    format_value,
    readings_behind,
)
from rlmap_bot.results.runs import RunDiagnosis
from rlmap_bot.results.scaling import diagnosis_line
from rlmap_bot.wording import verdicts


def opening_text(verdict: Verdict) -> str:
    """The three lines a verdict opens with, as a Slack card opens with them."""
    return "\n".join(list_item(line, "", "  ") for line in verdicts.opening(verdict))


@text.register
def verdict_text(verdict: Verdict) -> str:
    return opening_text(verdict) + "\n\n" + verdict_body(verdict)


def verdict_body(verdict: Verdict) -> str:
    """Everything after the three lines: the summary, the stages' points, every reading, the
    checks, what to read."""
    lines = [
        wrapped(verdict.summary, "  "),
        "",
        "Stages by score:",
    ]
    for row in verdict.ranking:
        bar = "#" * max(0, min(30, round(row.score * 3)))
        lines.append(f"  {row.title:20} {row.score:6.2f}  {bar}")
    if verdict.evidence:
        lines += ["", "Evidence:"]
        for ev in verdict.evidence:
            seen = ", ".join(f"{k}={format_value(v)}" for k, v in ev.signals.items())
            moves = ", ".join(f"{stage} {pts:+g}" for stage, pts in ev.points.items())
            lines.append(list_item(f"{seen} ({moves}): {ev.why} [{ev.source.title}]"))
    if verdict.next_checks:
        lines += ["", "Check next:"]
        for check in verdict.next_checks:
            lines.append(list_item(f"{check.title} ({check.signal}): {check.question}"))
    if verdict.papers:
        lines += ["", "Read:"]
        for paper in verdict.papers:
            lines.append(f"  - {paper.title} ({paper.id})")
    return "\n".join(lines)


def question_text(question: Question) -> str:
    head = f"Q{question.number}. {question.title}"
    if question.progress:
        head += f"  ({question.progress})"
    lines = [head, wrapped(question.text, "  ")]
    for i, preset in enumerate(question.presets):
        lines.append(f"  {chr(ord('a') + i)}) {preset.label}")
    pick = "Pick letters (several may apply)" if question.multiple else "Pick a letter"
    typed = (
        f"or type {question.answer_hint}, "
        if question.answer_hint and not question.multiple
        else ""
    )
    back = "'back' for the previous question, " if question.can_go_back else ""
    lines.append(
        wrapped(
            f"{pick}, {typed}'?' for don't know, {back}'help' for how to measure it, 'stop' for "
            f"the verdict now.",
            "  ",
        )
    )
    return "\n".join(lines)


def how_to_measure(question: Question) -> str:
    return wrapped(f"How to measure: {question.how_to_measure}", "  ")


def paused_text(step: Step) -> str:
    """A paused diagnosis: why it stopped and the checks
    that would tell most, with how to measure each.
    """
    lines = ["", wrapped(wording.PAUSED, "")]
    for i, check in enumerate(step.paused, 1):
        lines.append(f"{i}. {check.title}")
        lines.append(wrapped(check.how_to_measure, "   "))
    return "\n".join(lines)


@text.register
def _(result: RunDiagnosis) -> str:
    return run_text(result)


def run_text(result: RunDiagnosis, with_verdict: bool = True) -> str:
    """The verdict and the readings it rests on, then
    every value read from the logs with its source,
    what was not there, and the verdict in full (``with_verdict=False``: the readings alone, for a
    terminal that asks the rest before it gives a verdict)."""
    run = result.run
    span = f"steps {run.first_step}-{run.last_step}" if run.first_step is not None else "no steps"
    framework = f", {run.framework} metric names" if run.framework else ""
    lines = [opening_text(result), ""] if with_verdict else []
    lines.append(
        f"Read {wording.counted(run.steps, 'step')} ({span}) of a {run.format} log{framework}: "
        f"{run.path}"
        + (f" (run {run.run_id})" if run.run_id and run.run_id != Path(run.path).name else "")
    )
    if (
        result.faults
    ):  # before anything else: no stage verdict means much on a run that does not learn
        lines += ["", "Faults (fix these before reading the stage verdict):"]
        for fault in result.faults:
            lines.append(list_item(f"{fault.title}: {fault.detail}", "  ! ", "    "))
    # The forecast line: under the verdict, or on its own before the questions a prompt asks.
    forecast = diagnosis_line(result.forecast) if result.forecast else None
    if forecast and not with_verdict:
        lines += ["", wrapped(forecast, "")]
    if with_verdict:  # the conclusion and the readings it rests on first; how each was read after
        lines += ["", wrapped(result.summary, "  ")]
        if forecast:
            lines.append(wrapped(forecast, "  "))
        decided = _deciding_signals(result)
        if decided:
            lines.append("  On:")
            for signal in decided:
                lines.append(
                    list_item(
                        f"{result.title_of(signal)} = {result.value_text(signal)}: "
                        f"{result.signal_sources[signal].detail}",
                        "    - ",
                        "      ",
                    )
                )
        lines.append(
            wrapped(
                "(Below: every reading and how it was made, the stages' scores, what to check next "
                "and what to read.)",
                "  ",
            )
        )
    if result.signal_sources:
        lines += ["", "From the logs:"]
        for signal, source in result.signal_sources.items():
            lines.append(
                list_item(
                    f"{result.title_of(signal)} ({signal}) = {result.value_text(signal)}: "
                    f"{source.detail} ({source.method}; {source.window} of {source.metric})"
                )
            )
    for warning in result.warnings:
        lines.append(list_item(f"note: {warning}", "  ! ", "    "))
    if result.missing:
        lines += ["", wrapped("Not in the logs: " + ", ".join(result.missing) + ".", "")]
        unused = _unused_metrics(result)
        if (
            unused and len(unused) <= _UNUSED_SHOWN
        ):  # a custom log's few columns; a framework's hundreds are noise
            lines.append(
                wrapped(
                    "Logged but read for no signal: "
                    + ", ".join(unused)
                    + "; if one of them measures a signal above, name it with --map SIGNAL=METRIC.",
                    "",
                )
            )
    if result.chart:
        lines.append(f"Chart: {result.chart}")
    if with_verdict:
        lines += ["", verdict_body(result)]
    return "\n".join(lines)


def _deciding_signals(result: RunDiagnosis) -> list[str]:
    """The signals read from the logs behind the evidence
    for the verdict's stage (or tied stages).
    """
    stages = {result.binding_stage} if result.binding_stage else set(result.tied)
    return [s for s in readings_behind(result.evidence, stages) if s in result.signal_sources]


_UNUSED_SHOWN = 12
_NOT_METRICS = frozenset(
    {"step", "_step", "epoch", "time"}
)  # a log's axes, never a signal's metric


def _unused_metrics(result: RunDiagnosis) -> list[str]:
    """The log's metrics that no derived signal read (a source names its metrics in ``metric``)."""
    labels = [
        f" {source.metric} " for source in result.signal_sources.values()
    ]  # "a / b", "a x b against c"
    return [
        m
        for m in result.run.metrics
        if not any(f" {m} " in label for label in labels) and m.lower() not in _NOT_METRICS
    ]


@text.register
def simulation_text(result: Simulation) -> str:
    asked = ", ".join(result.asked) or "nothing"
    n = len(result.asked)
    return (
        f"Asked {wording.counted(n, 'signal question')} ({result.questions} in all, the opening "
        f"one included): {asked}\n\n" + verdict_text(result)
    )
