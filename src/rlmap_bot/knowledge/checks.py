"""Checks across entries: links to ids that exist and are of the right kind, signal rules whose
names and types are known, complaints that name real signals. Each mistake names file, entry and
field."""

from __future__ import annotations

import typing

from rlmap_bot.knowledge.catalog import Catalog, KnowledgeError, collect_errors
from rlmap_bot.knowledge.expr import ExprError, ValueType
from rlmap_bot.knowledge.schema import (
    KINDS,
    Entry,
    Paper,
    Signal,
    Stage,
    Topic,
)
from rlmap_bot.results.faults import NotLearningKind, TailShiftKind


def _expect(
    catalog: Catalog, owner: Entry, field_name: str, target: str, kinds: tuple[str, ...]
) -> None:
    found = catalog.entries.get(target)
    if found is None:
        raise KnowledgeError(
            catalog.sources[owner.id], owner.id, field_name, f"links to unknown id '{target}'"
        )
    if found.kind not in kinds:
        raise KnowledgeError(
            catalog.sources[owner.id],
            owner.id,
            field_name,
            f"'{target}' is a {found.kind}, expected {' or '.join(kinds)}",
        )


def check_links(catalog: Catalog) -> list[KnowledgeError]:
    """Every id an entry links to must exist and be of
    the right kind; one error per entry at most.
    """
    errors: list[KnowledgeError] = []
    stage_ids = {s.id for s in catalog.of_kind("stage")}
    signal_ids = {s.id for s in catalog.of_kind("signal")}
    for entry in catalog.entries.values():
        errors += collect_errors(
            lambda entry=entry: _check_entry_links(catalog, entry, stage_ids, signal_ids)
        )
    return errors


def check_entry(catalog: Catalog, entry: Entry) -> list[KnowledgeError]:
    """One entry's links checked against a catalog that
    holds it (an addition merged beside the files).
    """
    stage_ids = {s.id for s in catalog.of_kind("stage")}
    signal_ids = {s.id for s in catalog.of_kind("signal")}
    return collect_errors(lambda: _check_entry_links(catalog, entry, stage_ids, signal_ids))


def _check_entry_links(
    catalog: Catalog, entry: Entry, stage_ids: set[str], signal_ids: set[str]
) -> None:
    """One entry's links: the first problem found, as a KnowledgeError."""
    for target in entry.related:
        _expect(catalog, entry, "related", target, KINDS)
    if isinstance(entry, (Paper, Stage)):
        for target in entry.subtopics:
            _expect(catalog, entry, "subtopics", target, ("topic",))
            if not getattr(catalog.entries[target], "parent", None):
                raise KnowledgeError(
                    catalog.sources[entry.id],
                    entry.id,
                    "subtopics",
                    f"'{target}' is a topic, not a subtopic; name one of its subtopics",
                )
    if isinstance(entry, Topic) and entry.parent:
        _expect(catalog, entry, "parent", entry.parent, ("topic",))
    if isinstance(entry, (Paper, Topic)):
        for stage in entry.stages:
            if stage not in stage_ids:
                raise KnowledgeError(
                    catalog.sources[entry.id],
                    entry.id,
                    "stages",
                    f"stage '{stage}' has no stage entry",
                )
    if isinstance(entry, Signal):
        check_rules(catalog, entry, signal_ids)
    if isinstance(entry, Stage):
        check_levers(catalog, entry)


def check_levers(catalog: Catalog, stage: Stage) -> None:
    """Each reading a lever answers is a signal, a rule of one, or a fault's kind, that exists."""
    for i, lever in enumerate(stage.levers):
        for ref in getattr(lever, "answers", []):
            if ref.startswith("fault:"):
                if ref[len("fault:") :] not in FAULT_KINDS:
                    raise KnowledgeError(
                        catalog.sources[stage.id],
                        stage.id,
                        f"levers[{i}].answers",
                        f"no fault '{ref}'; faults are {', '.join(sorted(FAULT_KINDS))}",
                    )
                continue
            owner, _, rid = ref.partition(".")
            target = catalog.entries.get(owner)
            known = isinstance(target, Signal) and (not rid or rid in {r.id for r in target.rules})
            if not known:
                raise KnowledgeError(
                    catalog.sources[stage.id],
                    stage.id,
                    f"levers[{i}].answers",
                    f"no signal or rule '{ref}' for this lever to answer",
                )


# The faults a lever may answer (``fault:KIND``): a run's, as diagnose --run finds them, and a
# watch's, as its posts tell them (results/faults.py).
FAULT_KINDS = frozenset(
    {"nan", "divergence", *typing.get_args(NotLearningKind), *typing.get_args(TailShiftKind)}
)


# The guided flow's opening question and its readings list at a pause are stored under these ids,
# so no signal may take them.
RESERVED_SIGNAL_IDS = {"complaint", "readings"}


def value_type(signal: Signal) -> ValueType:
    """How a rule may use a signal's value: as a number, a yes/no, or one of its words."""
    if signal.type == "bool":
        return ValueType("bool")
    if signal.type == "choice":
        return ValueType("choice", frozenset(signal.choices))
    return ValueType("number")


def check_rules(catalog: Catalog, signal: Signal, signal_ids: set[str]) -> None:
    """A signal's rules: names known and used with
    their types, cited facts exist, overrides exist.
    """
    where = catalog.sources[signal.id]
    if signal.id in RESERVED_SIGNAL_IDS:
        raise KnowledgeError(
            where,
            signal.id,
            "id",
            f"'{signal.id}' is reserved for the guided flow's opening question",
        )
    types = {s.id: value_type(s) for s in catalog.signals}
    for i, rule in enumerate(signal.rules):
        _expect(catalog, signal, f"rules[{i}].source", rule.source, ("paper",))
        unknown = sorted(rule.expr.names - signal_ids)
        if unknown:
            raise KnowledgeError(
                where, signal.id, f"rules[{i}].when", f"names unknown signal '{unknown[0]}'"
            )
        try:
            rule.expr.check(types)
        except ExprError as exc:
            raise KnowledgeError(where, signal.id, f"rules[{i}].when", str(exc)) from None
        paper = catalog.entries[rule.source]
        facts = getattr(paper, "facts", [])
        if rule.fact is not None and rule.fact >= len(facts):
            have = f"facts 0 to {len(facts) - 1}" if facts else "no facts"
            raise KnowledgeError(
                where,
                signal.id,
                f"rules[{i}].fact",
                f"'{rule.source}' has {have}; there is no fact {rule.fact}",
            )
        for sid in rule.weighed_by:
            if sid not in rule.expr.names:
                raise KnowledgeError(
                    where, signal.id, f"rules[{i}].weighed_by", f"the rule does not read '{sid}'"
                )
        for ref in rule.overrides:
            owner, _, rid = ref.rpartition(".")
            target = catalog.entries.get(owner or signal.id)
            if not isinstance(target, Signal) or rid not in {r.id for r in target.rules}:
                raise KnowledgeError(
                    where, signal.id, f"rules[{i}].overrides", f"no rule '{ref}' to override"
                )
            if (owner or signal.id) == signal.id and rid == rule.id:
                raise KnowledgeError(
                    where, signal.id, f"rules[{i}].overrides", "a rule cannot override itself"
                )


def check_complaints(catalog: Catalog, shown: str) -> None:
    """Every complaint of the guided flow names signals that exist; every answer_words key is some
    signal's choice."""
    signal_ids = {s.id for s in catalog.signals}
    for j, complaint in enumerate(catalog.settings.diagnosis.complaints):
        for sid in complaint.signals:
            if sid not in signal_ids:
                raise KnowledgeError(
                    shown,
                    "settings",
                    f"diagnosis.complaints[{j}].signals",
                    f"names unknown signal '{sid}'",
                )
        for sid, value in complaint.states.items():
            problem = _stated_problem(catalog, complaint.signals, sid, value)
            if problem:
                raise KnowledgeError(
                    shown, "settings", f"diagnosis.complaints[{j}].states.{sid}", problem
                )
    choices = {c for s in catalog.signals for c in s.choices}
    for choice in catalog.settings.diagnosis.answer_words:
        if choice not in choices:
            raise KnowledgeError(
                shown,
                "settings",
                f"diagnosis.answer_words.{choice}",
                f"'{choice}' is no choice of any signal (choices: {', '.join(sorted(choices))})",
            )
    rules = {f"{s.id}.{r.id}" for s in catalog.signals for r in s.rules}
    for j, order in enumerate(catalog.settings.diagnosis.precedence):
        for part, ref in [("first", order.first), *(("explains", r) for r in order.explains)]:
            if ref not in rules and not (part == "explains" and ref in signal_ids):
                raise KnowledgeError(
                    shown, "settings", f"diagnosis.precedence[{j}].{part}", f"no rule '{ref}'"
                )
        source = catalog.entries.get(order.source)
        if source is None or source.kind != "paper":
            raise KnowledgeError(
                shown,
                "settings",
                f"diagnosis.precedence[{j}].source",
                f"'{order.source}' is not a paper in the catalog",
            )


def _stated_problem(catalog: Catalog, listed: list[str], sid: str, value: object) -> str | None:
    """What is wrong with a complaint's statement about one signal, or None.

    A complaint's words can say a direction or a yes/no, never a number, so only choice and yes/no
    signals may be stated; a list must leave at least two choices and rule out at least one (else
    it is a value, or says nothing); the signal must be one the complaint lists, so a verdict
    reading it explains the complaint.
    """
    signal = next((s for s in catalog.signals if s.id == sid), None)
    if signal is None:
        return f"names unknown signal '{sid}'"
    if sid not in listed:
        return f"states '{sid}', which the complaint's signals do not list"
    if signal.type == "bool":
        return None if isinstance(value, bool) else "a yes/no signal is stated as true or false"
    if signal.type != "choice":
        return f"'{sid}' is a {signal.type}: a complaint states only choices or yes/no"
    said = value if isinstance(value, list) else [value]
    wrong = [v for v in said if v not in signal.choices]
    if wrong or any(isinstance(v, bool) for v in said):
        return f"{wrong[0] if wrong else said[0]!r} is not one of {', '.join(signal.choices)}"
    if isinstance(value, list) and not 2 <= len(set(value)) < len(signal.choices):
        return "a list must leave at least two of the choices and rule out at least one"
    return None
