"""The one thing to do next: the catalog's lever for what a verdict rests on.

A stage's levers name the readings each answers (``knowledge/stages/*.yaml``, ``answers``): a
signal, one rule of a signal, or a fault read from a run's logs. For a verdict the lever is the
binding stage's that answers its strongest evidence (a rule named exactly before a whole signal),
else any stage's lever that answers it, else the binding stage's first; a verdict that names no
stage, or rests on one measurement, says which check would tell most instead. Front-ends only
print it.
"""

from __future__ import annotations

from typing import Iterable

from rlmap_bot.knowledge.catalog import Catalog
from rlmap_bot.knowledge.schema import Lever, Stage
from rlmap_bot.results.diagnosis import Evidence, NextCheck, NextStep


def _stages(catalog: Catalog, first: str | None) -> list[Stage]:
    stages = list(catalog.stages)
    return sorted(stages, key=lambda s: s.id != first)


def _answering(stages: Iterable[Stage], keys: list[str]) -> tuple[Stage, Lever, str] | None:
    """The first lever answering the most specific of ``keys`` (they come most specific first)."""
    stages = list(stages)
    for key in keys:
        for stage in stages:
            for lever in stage.answering_levers:
                if key in lever.answers:
                    return stage, lever, key
    return None


def for_verdict(
    catalog: Catalog,
    binding: str | None,
    evidence: list[Evidence],
    checks: list[NextCheck],
    one_measurement: bool = False,
) -> NextStep | None:
    """What to do next about a verdict: a lever when a stage binds, else the best check; for a
    verdict on one measurement, the check that would confirm it (the engine puts it first) before
    any lever is pulled on its word."""
    if binding is None or (one_measurement and checks):
        if not checks:
            return None
        top = checks[0]
        return NextStep(kind="check", text=top.question, reading=top.signal)
    stages = _stages(catalog, binding)
    backing = [e for e in evidence if e.supports(binding)]
    for ev in backing:
        keys = [ev.rule, *ev.signals]
        found = _answering(stages[:1], keys) or _answering(stages[1:], keys)
        if found is not None:
            stage, lever, key = found
            return NextStep(kind="lever", text=lever.text, stage=stage.id, reading=key)
    if not stages or stages[0].id != binding:
        return None
    return NextStep(kind="lever", text=stages[0].lever_texts[0], stage=binding)


def for_fault(catalog: Catalog, kind: str) -> NextStep | None:
    """The lever that answers a fault of this kind (``fault:KIND``), if a stage has one."""
    found = _answering(_stages(catalog, None), [f"fault:{kind}"])
    if found is None:
        return None
    stage, lever, key = found
    return NextStep(kind="lever", text=lever.text, stage=stage.id, reading=key)
