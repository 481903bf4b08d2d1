"""What a verdict says in words: its evidence, its reading list and its one-paragraph summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rlmap_bot.diagnosis.rules import CompiledRule, plain
from rlmap_bot.knowledge.loader import Catalog
from rlmap_bot.knowledge.settings import DiagnosisSettings
from rlmap_bot.results.diagnosis import Evidence, NextCheck, PaperRef, StageScore, readings_behind
from rlmap_bot.wording import counted


def evidence(
    catalog: Catalog,
    fired: list[CompiledRule],
    kept: list[CompiledRule],
    values: Mapping[str, Any],
    weights: Mapping[int, float] | None = None,
) -> list[Evidence]:
    """The kept readings, each with its source's fact
    and what it explained away, strongest first; a reading weighed by its margin carries the
    points it counted for.
    """
    fired_keys = {c.key for c in fired}
    out: list[Evidence] = []
    for compiled in kept:
        rule = compiled.rule
        source = catalog.entries.get(rule.source)
        ref = PaperRef(
            id=rule.source,
            title=source.title if source else rule.source,
            short=source.short_name if source else None,
        )
        facts = getattr(source, "facts", []) if source else []
        fact = facts[rule.fact] if rule.fact is not None and rule.fact < len(facts) else None
        w = (weights or {}).get(compiled.index, 1.0)
        points = {st: round(p * w, 3) for st, p in rule.points.items()}
        main = max(points, key=lambda st: (abs(points[st]), points[st]))
        out.append(
            Evidence(
                rule=compiled.key,
                signals={n: plain(values[n]) for n in compiled.names if n in values},
                stage=main,
                direction="for" if points[main] > 0 else "against",
                points=points,
                why=rule.why,
                source=ref,
                fact=fact,
                judgement=rule.judgement,
                explains_away=sorted(compiled.overrides & fired_keys),
            )
        )
    out.sort(key=lambda e: (-abs(e.points[e.stage]), e.rule))
    return out


def papers(
    catalog: Catalog, stages: list[str], binding: str | None, tied: list[str], found: list[Evidence]
) -> list[PaperRef]:
    """The sources of the evidence behind what is said, heaviest evidence first.

    For a verdict, the rules supporting the binding stage; for a tie, those supporting the
    tied stages; otherwise every reading that points at a stage.  A paper's weight is the
    sum of the points its rules give those stages, so the reading list follows the
    evidence rather than padding with every paper on a stage.
    """
    focus = [binding] if binding else (tied or list(stages))
    weight: dict[str, float] = {}
    titles: dict[str, tuple[str, str]] = {}
    for ev in found:
        backing = sum(ev.points.get(s, 0.0) for s in focus if ev.points.get(s, 0.0) > 0)
        if backing <= 0:
            continue
        entry = catalog.entries.get(ev.source.id)
        if entry is None or entry.kind != "paper":
            continue
        weight[ev.source.id] = weight.get(ev.source.id, 0.0) + backing
        titles[ev.source.id] = (entry.title, entry.short_name)
    ranked = sorted(weight, key=lambda pid: (-weight[pid], pid))
    return [
        PaperRef(id=pid, title=titles[pid][0], short=titles[pid][1])
        for pid in ranked[: catalog.settings.diagnosis.papers]
    ]


def summary(
    settings: DiagnosisSettings,
    title: str | None,
    ranking: list[StageScore],
    found: list[Evidence],
    checks: list[NextCheck],
    values: Mapping[str, Any],
    binding: str | None,
    one: bool = False,
    confirming: list[str] | None = None,
) -> str:
    """The verdict in one paragraph: the binding stage (``title``) and on what, else why none binds
    and what would settle it."""
    if binding:
        n = len(readings_behind(found, [binding]))
        if one:
            confirm = ", ".join(confirming or []) or "a second reading of that stage"
            return (
                f"{title} is the likeliest binding constraint, but the verdict rests on one "
                f"measurement; to confirm it, check: {confirm}."
            )
        return f"{title} is the binding constraint, on {counted(n, 'reading')}."
    settle = ", ".join(c.signal for c in checks) or "more signals"
    if not values:
        return f"No evidence yet. Start with: {settle}."
    if all(r.score <= 0 for r in ranking):
        return (
            f"The answers so far point at no stage: on these signals no stage looks like the "
            f"constraint. To be sure, check: {settle}."
        )
    lead, second = ranking[0], ranking[1]
    if lead.score >= settings.min_score and lead.score - second.score < settings.min_lead:
        return (
            f"{lead.title} and {second.title} both have strong evidence ({lead.score:g} and "
            f"{second.score:g} points): no single stage binds; both may. These would tell them "
            f"apart: {settle}."
        )
    points = "point" if lead.score == 1 else "points"
    return (
        f"No single stage stands out yet ({lead.title} leads with {lead.score:g} {points}, not "
        f"enough). These would settle it: {settle}."
    )
