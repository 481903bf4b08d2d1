"""Plain-text rendering of core results for the terminal (CLI and shell)."""

from __future__ import annotations

import textwrap

from rlmap_bot.diagnosis.engine import Verdict, format_value
from rlmap_bot.diagnosis.flow import Question
from rlmap_bot.digest.content import Digest
from rlmap_bot.knowledge.cards import Card
from rlmap_bot.search.engine import Answer

WIDTH = 88


def _wrap(text: str, indent: str = "  ") -> str:
    return textwrap.fill(text, width=WIDTH, initial_indent=indent, subsequent_indent=indent)


def answer_text(answer: Answer) -> str:
    lines: list[str] = []
    if answer.corrections:
        fixed = ", ".join(f"{a} -> {b}" for a, b in answer.corrections.items())
        lines.append(f"(searched with corrected spelling: {fixed})")
    if not answer.results:
        lines.append(f"Nothing in the map is relevant to {answer.query!r}.")
        if answer.known_topics:
            lines.append(_wrap("I know about: " + "; ".join(answer.known_topics) + ", and the papers on them.", ""))
        lines.append("Try `stages`, `papers`, or a question such as \"why is my reward going up but evals down?\"")
        return "\n".join(lines)
    if answer.close_call:
        lines.append("Two entries match about equally; did you mean one of these?")
    for i, hit in enumerate(answer.results, 1):
        status = {"unverified": " [not independently verified]", "partial": " [partly verified]"}.get(hit.verification or "", "")
        lines.append(f"{i}. [{hit.kind}] {hit.title}  ({hit.id}, score {hit.score:.2f}){status}")
        if hit.byline:
            lines.append(f"   {hit.byline}")
        lines.append(_wrap(hit.one_line, "   "))
        if hit.why:
            lines.append(f"   why: {'; '.join(hit.why)}")
    lines.append("Use `show ID` for the whole entry.")
    return "\n".join(lines)


def card_text(card: Card) -> str:
    lines = [f"{card.title}", f"[{card.kind}] {card.id}" + (f" · {card.subtitle}" if card.subtitle else "")]
    if card.url:
        lines.append(card.url)
    lines += ["", _wrap(card.summary, "")]
    for section in card.sections:
        lines += ["", f"{section.heading}:"]
        if section.text:
            lines.append(_wrap(section.text))
        for item in section.items:
            lines.append(textwrap.fill(item, width=WIDTH, initial_indent="  - ", subsequent_indent="    "))
    if card.links:
        lines += ["", "Linked entries:"]
        for link in card.links:
            lines.append(f"  - [{link.kind}] {link.title} ({link.id})")
    return "\n".join(lines)


def stages_text(stages) -> str:
    lines = ["The five stages of the RL Scaling Bottleneck Map:"]
    for stage in stages:
        lines.append(f"{stage.order}. {stage.title} ({stage.id})")
        lines.append(_wrap(stage.one_line, "   "))
    return "\n".join(lines)


def papers_text(papers) -> str:
    lines = [f"{len(papers)} papers in the catalog, newest first:"]
    for paper in papers:
        year = paper.year or "n.d."
        who = f"{paper.byline}, " if paper.byline else ""
        lines.append(f"- {paper.title} ({who}{year}) [{paper.id}]")
    return "\n".join(lines)


def verdict_text(verdict: Verdict) -> str:
    lines: list[str] = []
    if verdict.binding_stage:
        lines.append(f"Verdict: {verdict.binding_title} binds (confidence {verdict.confidence:.0%}).")
    elif verdict.tied:
        names = " and ".join(r.title for r in verdict.ranking if r.stage in verdict.tied)
        lines.append(f"Verdict: {names} tie (confidence {verdict.confidence:.0%} that it is one of them).")
    else:
        lines.append(f"Verdict: no single stage stands out (confidence in that {verdict.confidence:.0%}).")
    lines.append(_wrap(verdict.summary, "  "))
    lines += ["", "Stages by score:"]
    for row in verdict.ranking:
        bar = "#" * max(0, min(30, round(row.score * 3)))
        lines.append(f"  {row.title:20} {row.score:6.2f}  {bar}")
    if verdict.evidence:
        lines += ["", "Evidence:"]
        for ev in verdict.evidence:
            seen = ", ".join(f"{k}={format_value(v)}" for k, v in ev.signals.items())
            moves = ", ".join(f"{stage} {pts:+g}" for stage, pts in ev.points.items())
            lines.append(textwrap.fill(
                f"{seen} ({moves}): {ev.why} [{ev.source.title}]",
                width=WIDTH, initial_indent="  - ", subsequent_indent="    ",
            ))
    if verdict.next_checks:
        lines += ["", "Check next:"]
        for check in verdict.next_checks:
            lines.append(textwrap.fill(f"{check.signal}: {check.question}", width=WIDTH,
                                       initial_indent="  - ", subsequent_indent="    "))
    if verdict.papers:
        lines += ["", "Read:"]
        for paper in verdict.papers:
            lines.append(f"  - {paper.title} ({paper.id})")
    return "\n".join(lines)


def question_text(question: Question) -> str:
    lines = [f"Q{question.number}. {question.title}", _wrap(question.text, "  "),
             _wrap(f"(how to measure: {question.how_to_measure})", "  ")]
    for i, preset in enumerate(question.presets):
        lines.append(f"  {chr(ord('a') + i)}) {preset.label}")
    extra = "or type a value, " if question.type in {"fraction", "number", "integer"} else ""
    back = "'back' for the previous question, " if question.can_go_back else ""
    lines.append(f"  Pick a letter, {extra}'?' for don't know, {back}'stop' for the verdict now.")
    return "\n".join(lines)


def digest_text(digest: Digest, since=None) -> str:
    if digest.empty:
        return f"Nothing added to the catalog since {since or digest.period()}."
    lines = [digest.title, f"Covering {digest.period()}"]
    for group in digest.groups:
        lines += ["", f"{group.title}:"]
        for item in group.items:
            lines.append(f"  - [{item.status}] {item.title} ({item.id})" + (f" · {item.byline}" if item.byline else ""))
            lines.append(_wrap(item.one_line, "      "))
            if item.url:
                lines.append(f"      {item.url}")
    if digest.more:
        lines += ["", f"...and {digest.more} more."]
    return "\n".join(lines)
