"""Plain-text rendering of command results for the terminal (CLI and shell).

:func:`text` dispatches on the result's type; the sentences themselves come from
:mod:`rlmap_bot.wording`, so the terminal says what Slack says.
"""

from __future__ import annotations

import json
import textwrap
from functools import singledispatch
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from rlmap_bot import wording
from rlmap_bot.results.ask import Answer
from rlmap_bot.results.cards import Card
from rlmap_bot.results.curation import AdditionList, Candidate
from rlmap_bot.results.diagnosis import Simulation, Verdict, format_value
from rlmap_bot.results.digest import Digest
from rlmap_bot.results.general import (
    CatalogExport,
    Help,
    KbBuilt,
    KbStats,
    Notice,
    PaperList,
    SessionList,
    StageList,
)
from rlmap_bot.results.runs import RunDiagnosis
from rlmap_bot.results.watch import Alert, CheckResult

if TYPE_CHECKING:
    from rlmap_bot.results.diagnosis import Question, Step

WIDTH = 88


def _wrap(text: str, indent: str = "  ") -> str:
    return textwrap.fill(text, width=WIDTH, initial_indent=indent, subsequent_indent=indent)


def _item(text: str, bullet: str = "  - ", indent: str = "    ") -> str:
    return textwrap.fill(text, width=WIDTH, initial_indent=bullet, subsequent_indent=indent)


@singledispatch
def text(result: Any) -> str:
    """Any command result as terminal text: the renderer registered for its type (or a base of it);
    a type with none prints as JSON (``tests/test_renderers.py``
    holds every declared result to one)."""
    if isinstance(result, BaseModel):
        return result.model_dump_json(indent=2)
    return json.dumps(result, indent=2, ensure_ascii=False, default=str)


def as_json(result: Any, indent: int | None = 2) -> str:
    """A command result as JSON (models through pydantic, lists of models too)."""
    if isinstance(result, BaseModel):
        return result.model_dump_json(indent=indent)
    if isinstance(result, list):
        items = [r.model_dump(mode="json") if isinstance(r, BaseModel) else r for r in result]
        return json.dumps(items, indent=indent, ensure_ascii=False, default=str)
    return json.dumps(result, indent=indent, ensure_ascii=False, default=str)


@text.register
def _(result: CatalogExport) -> str:
    return as_json(result)


@text.register
def answer_text(answer: Answer) -> str:
    lines: list[str] = []
    if answer.english_only:
        lines.append(f"({wording.english_only(answer.shows_entries)})")
    if answer.corrections:
        lines.append(f"({wording.corrected(answer.corrections)})")
    if answer.tier == "guess":  # three lines: the heading, the entries (`show ID`), diagnose
        lines.append(wording.GUESS)
        # One line, left for the terminal to wrap: the guess stays three lines wherever it is read.
        lines.append("  " + "; ".join(f"{h.title} ({h.id})" for h in answer.guesses))
        lines.append(wording.about_your_run("diagnose"))
        return "\n".join(lines)
    if not answer.results:
        lines.append(wording.nothing_relevant(answer.query))
        if answer.known_topics:
            lines.append(_wrap(wording.known_topics(answer.known_topics), ""))
        lines.append(wording.TRY_INSTEAD)
        lines.append(wording.about_your_run("diagnose"))
        return "\n".join(lines)
    if (
        answer.close_call
    ):  # the two that fit alike under the question, the rest as Slack shows them: apart
        lines.append(wording.CLOSE_CALL)
        lines += _hit_lines(answer.results[:2])
        if answer.results[2:]:
            lines.append("Also relevant:")
            lines += _hit_lines(answer.results[2:], first=3)
    else:
        lines += _hit_lines(answer.results)
    lines.append("Use `show ID` for the whole entry.")
    return "\n".join(lines)


def _hit_lines(hits, first: int = 1) -> list[str]:
    lines: list[str] = []
    for i, hit in enumerate(hits, first):
        label = wording.verification_label(hit.verification)
        lines.append(
            f"{i}. [{hit.kind}] {hit.title}  ({hit.id}, score {hit.score:.2f})"
            + (f" [{label}]" if label else "")
        )
        if hit.byline:
            lines.append(f"   {hit.byline}")
        lines.append(_wrap(hit.one_line, "   "))
        if hit.points_to:  # a signal: what the map reads into it
            lines.append(_item("points to " + hit.points_to, "   ", "        "))
        if hit.why:
            lines.append(_item("why: " + "; ".join(hit.why), "   ", "        "))
    return lines


@text.register
def card_text(card: Card) -> str:
    lines = [
        f"{card.title}",
        f"[{card.kind}] {card.id}" + (f" · {card.subtitle}" if card.subtitle else ""),
    ]
    if card.url:
        lines.append(card.url)
    lines += ["", _wrap(card.summary, "")]
    for section in card.sections:
        lines += ["", f"{section.heading}:"]
        if section.text:
            lines.append(_wrap(section.text))
        for item in section.items:
            lines.append(_item(item))
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
        lines.append(_wrap(stage.one_line, "   "))
    return "\n".join(lines)


@text.register
def papers_text(result: PaperList) -> str:
    lines = [wording.papers_heading(len(result.papers), result.filters, result.total)]
    for paper in result.papers:
        who = f"{paper.byline}, " if paper.byline else ""
        label = wording.verification_label(paper.verification)
        lines.append(
            f"- {paper.title} ({who}{paper.year or 'n.d.'}) [{paper.id}]"
            + (f" ({label})" if label else "")
        )
    return "\n".join(lines)


@text.register
def verdict_text(verdict: Verdict) -> str:

    lines = [
        wording.verdict_headline(verdict) + ".",
        _wrap(verdict.summary, "  "),
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
            lines.append(_item(f"{seen} ({moves}): {ev.why} [{ev.source.title}]"))
    if verdict.next_checks:
        lines += ["", "Check next:"]
        for check in verdict.next_checks:
            lines.append(_item(f"{check.title} ({check.signal}): {check.question}"))
    if verdict.papers:
        lines += ["", "Read:"]
        for paper in verdict.papers:
            lines.append(f"  - {paper.title} ({paper.id})")
    return "\n".join(lines)


def question_text(question: Question) -> str:
    head = f"Q{question.number}. {question.title}"
    if question.progress:
        head += f"  ({question.progress})"
    lines = [head, _wrap(question.text, "  ")]
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
        _wrap(
            f"{pick}, {typed}'?' for don't know, {back}'help' for how to measure it, "
            "'stop' for the verdict now.",
            "  ",
        )
    )
    return "\n".join(lines)


def how_to_measure(question: Question) -> str:
    return _wrap(f"How to measure: {question.how_to_measure}", "  ")


def paused_text(step: Step) -> str:
    """A paused diagnosis: why it stopped and the checks
    that would tell most, with how to measure each.
    """
    lines = ["", _wrap(wording.PAUSED, "")]
    for i, check in enumerate(step.paused, 1):
        lines.append(f"{i}. {check.title}")
        lines.append(_wrap(check.how_to_measure, "   "))
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
    lines = [
        f"Read {run.steps} steps ({span}) of a {run.format} log{framework}: {run.path}"
        + (f" (run {run.run_id})" if run.run_id and run.run_id != Path(run.path).name else "")
    ]
    if (
        result.faults
    ):  # before anything else: no stage verdict means much on a run that does not learn
        lines += ["", "Faults (fix these before reading the stage verdict):"]
        for fault in result.faults:
            lines.append(_item(f"{fault.title}: {fault.detail}", "  ! ", "    "))
    if with_verdict:  # the conclusion and the readings it rests on first; how each was read after
        lines += ["", wording.verdict_headline(result) + ".", _wrap(result.summary, "  ")]
        decided = _deciding_signals(result)
        if decided:
            lines.append("  On:")
            for signal in decided:
                lines.append(
                    _item(
                        f"{result.title_of(signal)} = {result.value_text(signal)}: "
                        f"{result.signal_sources[signal].detail}",
                        "    - ",
                        "      ",
                    )
                )
        lines.append(
            _wrap(
                "(Below: every reading and how it was made, the stages' scores, what to check next "
                "and what to read.)",
                "  ",
            )
        )
    if result.signal_sources:
        lines += ["", "From the logs:"]
        for signal, source in result.signal_sources.items():
            lines.append(
                _item(
                    f"{result.title_of(signal)} ({signal}) = {result.value_text(signal)}: "
                    f"{source.detail} ({source.method}; {source.window} of {source.metric})"
                )
            )
    for warning in result.warnings:
        lines.append(_item(f"note: {warning}", "  ! ", "    "))
    if result.missing:
        lines += ["", _wrap("Not in the logs: " + ", ".join(result.missing) + ".", "")]
        unused = _unused_metrics(result)
        if (
            unused and len(unused) <= _UNUSED_SHOWN
        ):  # a custom log's few columns; a framework's hundreds are noise
            lines.append(
                _wrap(
                    "Logged but read for no signal: "
                    + ", ".join(unused)
                    + "; if one of them measures "
                    "a signal above, name it with --map SIGNAL=METRIC.",
                    "",
                )
            )
    if result.chart:
        lines.append(f"Chart: {result.chart}")
    if with_verdict:
        lines += ["", verdict_text(result)]
    return "\n".join(lines)


def _deciding_signals(result: RunDiagnosis) -> list[str]:
    """The signals read from the logs behind the evidence
    for the verdict's stage (or tied stages).
    """
    stages = {result.binding_stage} if result.binding_stage else set(result.tied)
    out: list[str] = []
    for ev in result.evidence:
        if any(ev.supports(stage) for stage in stages):
            out += [s for s in ev.signals if s in result.signal_sources and s not in out]
    return out


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
    return (
        f"Asked {len(result.asked)} question{'' if len(result.asked) == 1 else 's'}: {asked}\n\n"
        + verdict_text(result)
    )


@text.register
def digest_text(digest: Digest) -> str:
    if digest.empty:
        return f"Nothing added to the catalog in {digest.period()}."
    lines = [digest.title, f"Covering {digest.period()}"]
    for group in digest.groups:
        lines += ["", f"{group.title}:"]
        for item in group.items:
            lines.append(
                f"  - [{item.status}] {item.title} ({item.id})"
                + (f" · {item.byline}" if item.byline else "")
            )
            lines.append(_wrap(item.one_line, "      "))
            if item.suggested_by and item.approved_by:
                lines.append(
                    f"      suggested by {item.suggested_by}, approved by {item.approved_by}"
                )
            if item.url:
                lines.append(f"      {item.url}")
    if digest.more:
        lines += ["", f"...and {digest.more} more."]
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


@text.register
def help_text(result: Help) -> str:
    lines = [f"error: {result.problem}"] if result.problem else []
    if result.intro:
        lines.append(result.intro)
    indent = {"command": "  ", "option": "    ", "example": "    e.g. "}
    width = min(
        34, max((len(indent[e.kind] + e.usage) for e in result.commands if e.summary), default=0)
    )
    for entry in result.commands:
        usage = indent[entry.kind] + entry.usage
        hang = " " * (width + 2)
        if not entry.summary:
            lines.append(usage)
        elif len(usage) > width:  # a long usage line gets its summary below it
            lines += [
                textwrap.fill(usage, WIDTH, subsequent_indent=" " * 6),
                _wrap(entry.summary, hang),
            ]
        else:
            lines.append(
                textwrap.fill(f"{usage:{width}}  {entry.summary}", WIDTH, subsequent_indent=hang)
            )
    if result.outro:
        lines.append(result.outro)
    return "\n".join(lines)


@text.register
def notice_text(result: Notice) -> str:
    return result.text


def alert_text(alert: Alert) -> str:
    """One watch post as the terminal shows it (what Slack would get, without the markup)."""
    lines = [f"[{alert.kind}] {alert.title}"]
    lines += [_item(c) for c in alert.changes]
    if alert.kind == "alert":
        if alert.verdict_headline:
            lines.append(_wrap(alert.verdict_headline))
        if alert.ranking:
            lines.append(_wrap("Points: " + ", ".join(f"{t} {s:g}" for t, s in alert.ranking)))
        if alert.evidence:
            lines.append("  Evidence, from the logs:")
            for ev in alert.evidence:
                seen = ", ".join(f"{k}={v}" for k, v in ev.signals.items())
                lines.append(
                    _item(
                        f"{seen} ({ev.stage} {ev.points:+g}): {ev.why} [{ev.source}]",
                        "    - ",
                        "      ",
                    )
                )
                lines += [_item(p, "        from ", "          ") for p in ev.provenance]
        if alert.next_checks:
            lines.append("  Check next:")
            lines += [_item(c, "    - ", "      ") for c in alert.next_checks]
        if alert.chart:
            lines.append("  (with the chart of the curves behind the verdict)")
    return "\n".join(lines)


@text.register
def check_text(result: CheckResult) -> str:
    span = (
        f"steps {result.first_step}-{result.last_step}"
        if result.first_step is not None
        else "no steps"
    )
    how = "incrementally" if result.mode == "lines" else "whole"
    lines = [
        f"Checked {result.path}: {result.steps} steps ({span}), "
        f"{result.format or 'unknown format'}, "
        f"read {how} ({result.bytes_read:,} bytes)."
    ]
    if result.problem:
        lines.append(_wrap(f"Problem: {result.problem}", ""))
    if result.verdict is not None:
        lines.append(result.verdict.headline + ".")
    if result.alerts:
        lines += ["", "A check would post:" if result.dry else "Posted:"]
        for alert in result.alerts:
            lines += [alert_text(alert), ""]
    else:
        lines.append("A check would post nothing." if result.dry else "Nothing was posted.")
    if result.withheld:
        lines.append(_wrap("Quiet watch, not posted: " + ", ".join(result.withheld), ""))
    if result.open_conditions:
        lines.append(_wrap("Open conditions: " + ", ".join(result.open_conditions), ""))
    return "\n".join(lines).rstrip()


@text.register
def candidate_text(candidate: Candidate) -> str:
    record = candidate.record
    authors = ", ".join(record.authors[:5]) + (
        " et al." if len(record.authors) > 5 or record.more_authors else ""
    )
    lines = [
        f"{record.title} ({record.arxiv_id}, {record.year or 'year unknown'})",
        _wrap(authors or "no authors given"),
        f"  {record.url} · {', '.join(record.categories) or 'no categories'}",
    ]
    if candidate.existing is not None:
        found = candidate.existing
        if found.status == "in_catalog":
            lines.append(
                f"  Already in the catalog as {found.title} ({found.entry_id}), matched by "
                f"{found.how}."
            )
        elif found.status == "rejected":
            lines.append(
                f"  Rejected before by {found.by}" + (f": {found.reason}" if found.reason else ".")
            )
        else:
            lines.append(f"  Already suggested ({found.status}).")
    tags = lambda items: ", ".join(f"{t.id} {t.score:.2f}" for t in items) or "none"  # noqa: E731
    lines += [
        f"  Proposed stages: {tags(candidate.stages)}",
        f"  Proposed subtopics: {tags(candidate.subtopics)}",
        "",
    ]
    abstract = record.abstract if len(record.abstract) <= 1200 else record.abstract[:1199] + "…"
    lines.append(_wrap(abstract))
    return "\n".join(lines)


@text.register
def additions_text(result: AdditionList) -> str:
    if not result.additions:
        return (
            "No papers approved from Slack are live (exported ones retire once their file is in "
            "knowledge/)."
        )
    lines = [f"{len(result.additions)} paper(s) approved from Slack:"]
    for a in result.additions:
        lines.append(
            f"  {a.id}  {a.title} (arXiv {a.arxiv}; suggested by {a.suggested_by}, approved by "
            f"{a.approved_by}, {a.added})"
        )
    return "\n".join(lines)
