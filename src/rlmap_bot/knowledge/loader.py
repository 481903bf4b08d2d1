"""Read and validate the catalog files under ``knowledge/``.

A file holds one entry (a mapping) or several (a list of mappings).  Every
problem is reported as a :class:`KnowledgeError` naming the file, the entry and
the field, so a curator can fix a pull request from the error line alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import yaml
from pydantic import TypeAdapter, ValidationError

from rlmap_bot.errors import RlmapError
from rlmap_bot.knowledge.expr import ExprError, ValueType
from rlmap_bot.knowledge.schema import KINDS, CatalogSettings, Entry, Paper, Signal, Stage, Topic

_ENTRY = TypeAdapter(Entry)


class _Loader(yaml.SafeLoader):
    """The safe loader, but dates stay text: pydantic then parses them and names the field."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
SETTINGS_FILE = "catalog.yaml"


class KnowledgeError(RlmapError, ValueError):
    """A catalog file is wrong; the message names file, entry and field."""

    def __init__(self, path: Path | str, entry: str | None, field_name: str | None, problem: str):
        self.path, self.entry, self.field, self.problem = str(path), entry, field_name, problem
        where = self.path
        if entry:
            where += f": entry '{entry}'"
        if field_name:
            where += f": field '{field_name}'"
        super().__init__(f"{where}: {problem}")


@dataclass
class Catalog:
    """Every validated entry, by id, with where each came from."""

    entries: dict[str, Entry]
    sources: dict[str, str] = field(default_factory=dict)
    settings: CatalogSettings = field(default_factory=CatalogSettings)

    def of_kind(self, kind: str) -> list[Entry]:
        return [e for e in self.entries.values() if e.kind == kind]

    @property
    def stages(self) -> list[Stage]:
        return sorted(self.of_kind("stage"), key=lambda s: s.order)  # type: ignore[arg-type,attr-defined]

    @property
    def signals(self) -> list[Signal]:
        return self.of_kind("signal")  # type: ignore[return-value]

    def papers_for(self, entry_id: str) -> list[Paper]:
        """Papers that name ``entry_id`` as a stage or subtopic: main-stage matches first, then the
        source map's own papers (``seed``), verified before unverified, newest first."""
        hits = [
            p for p in self.of_kind("paper")
            if entry_id in p.stages or entry_id in p.subtopics  # type: ignore[attr-defined]
        ]
        order = {"verified": 0, "partial": 1, "unverified": 2}
        return sorted(hits, key=lambda p: (p.stages[0] != entry_id, not p.seed, order[p.verification],  # type: ignore[attr-defined]
                                           -(p.year or 0), p.title))

    def children(self, topic_id: str) -> list[Topic]:
        return [t for t in self.of_kind("topic") if t.parent == topic_id]  # type: ignore[attr-defined]


def knowledge_files(root: Path) -> list[Path]:
    """Every YAML file under ``root`` except the settings file and the metric-name table, in a stable order."""
    files = [p for p in root.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file()]
    return sorted(p for p in files if p.relative_to(root).as_posix() != SETTINGS_FILE
                  and p.relative_to(root).parts[0] != "metrics")


def _relative(path: Path, root: Path) -> str:
    try:
        return (root.name + "/" + path.relative_to(root).as_posix())
    except ValueError:
        return str(path)


def _read_yaml(path: Path, shown: str) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KnowledgeError(shown, None, None, f"cannot read file: {exc}") from None
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise KnowledgeError(shown, None, None, f"not valid YAML{where}: {problem}") from None


def _field_path(loc: Iterable[object]) -> str:
    parts = [str(p) for p in loc]
    # The discriminated union puts the kind first ("paper", "year"); drop it.
    if parts and parts[0] in KINDS:
        parts = parts[1:]
    out = ""
    for part in parts:
        out += f"[{part}]" if part.isdigit() else (("." if out else "") + part)
    return out or "kind"


def parse_entry(raw: object, shown: str, index: int) -> Entry:
    """Validate one raw mapping; errors name the file, the entry and the field."""
    if not isinstance(raw, dict):
        raise KnowledgeError(shown, f"#{index + 1}", None, "each entry must be a mapping of fields")
    label = str(raw.get("id") or f"#{index + 1}")
    if "kind" not in raw:
        raise KnowledgeError(shown, label, "kind", f"missing; one of {', '.join(KINDS)}")
    if raw.get("kind") not in KINDS:
        raise KnowledgeError(shown, label, "kind", f"{raw.get('kind')!r} is not one of {', '.join(KINDS)}")
    try:
        return _ENTRY.validate_python(raw)
    except ValidationError as exc:
        errors = exc.errors()
        # A misspelt field also shows up as a missing one; name the misspelling first.
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        problem = first["msg"]
        if first["type"] == "extra_forbidden":
            problem = "unknown field (check the spelling)"
        elif first["type"] == "missing":
            problem = "missing (required)"
        raise KnowledgeError(shown, label, _field_path(first["loc"]), problem) from None


def load_catalog(root: Path) -> Catalog:
    """Read, validate and cross-check every file under ``root``."""
    root = Path(root)
    if not root.is_dir():
        raise KnowledgeError(root, None, None, "knowledge folder not found")
    entries: dict[str, Entry] = {}
    sources: dict[str, str] = {}
    for path in knowledge_files(root):
        shown = _relative(path, root)
        data = _read_yaml(path, shown)
        if data is None:
            raise KnowledgeError(shown, None, None, "the file is empty; add an entry or delete the file")
        items = data if isinstance(data, list) else [data]
        for index, raw in enumerate(items):
            entry = parse_entry(raw, shown, index)
            if entry.id in entries:
                raise KnowledgeError(shown, entry.id, "id", f"duplicate id, already defined in {sources[entry.id]}")
            entries[entry.id] = entry
            sources[entry.id] = shown
    catalog = Catalog(entries=entries, sources=sources, settings=_load_settings(root))
    check_links(catalog)
    check_complaints(catalog, _relative(root / SETTINGS_FILE, root))
    return catalog


def _load_settings(root: Path) -> CatalogSettings:
    path = root / SETTINGS_FILE
    if not path.exists():
        return CatalogSettings()
    shown = _relative(path, root)
    loaded = _read_yaml(path, shown)
    if loaded is not None and not isinstance(loaded, dict):
        raise KnowledgeError(shown, None, None, "must be a mapping of settings")
    try:
        return CatalogSettings.model_validate(loaded or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        problem = "unknown setting (check the spelling)" if first["type"] == "extra_forbidden" else first["msg"]
        raise KnowledgeError(shown, "settings", _field_path(first["loc"]), problem) from None


def _expect(catalog: Catalog, owner: Entry, field_name: str, target: str, kinds: tuple[str, ...]) -> None:
    found = catalog.entries.get(target)
    if found is None:
        raise KnowledgeError(catalog.sources[owner.id], owner.id, field_name, f"links to unknown id '{target}'")
    if found.kind not in kinds:
        raise KnowledgeError(
            catalog.sources[owner.id], owner.id, field_name,
            f"'{target}' is a {found.kind}, expected {' or '.join(kinds)}",
        )


def check_links(catalog: Catalog) -> None:
    """Every id an entry links to must exist and be of the right kind."""
    stage_ids = {s.id for s in catalog.of_kind("stage")}
    signal_ids = {s.id for s in catalog.of_kind("signal")}
    for entry in catalog.entries.values():
        for target in entry.related:
            _expect(catalog, entry, "related", target, KINDS)
        if isinstance(entry, (Paper, Stage)):
            for target in entry.subtopics:
                _expect(catalog, entry, "subtopics", target, ("topic",))
                if not getattr(catalog.entries[target], "parent", None):
                    raise KnowledgeError(catalog.sources[entry.id], entry.id, "subtopics",
                                         f"'{target}' is a topic, not a subtopic; name one of its subtopics")
        if isinstance(entry, Topic) and entry.parent:
            _expect(catalog, entry, "parent", entry.parent, ("topic",))
        if isinstance(entry, (Paper, Topic)):
            for stage in entry.stages:
                if stage not in stage_ids:
                    raise KnowledgeError(catalog.sources[entry.id], entry.id, "stages", f"stage '{stage}' has no stage entry")
        if isinstance(entry, Signal):
            check_rules(catalog, entry, signal_ids)


# The guided flow's opening question is stored under this id, so no signal may take it.
RESERVED_SIGNAL_IDS = {"complaint"}


def value_type(signal: Signal) -> ValueType:
    """How a rule may use a signal's value: as a number, a yes/no, or one of its words."""
    if signal.type == "bool":
        return ValueType("bool")
    if signal.type == "choice":
        return ValueType("choice", frozenset(signal.choices))
    return ValueType("number")


def check_rules(catalog: Catalog, signal: Signal, signal_ids: set[str]) -> None:
    """A signal's rules: names known and used with their types, cited facts exist, overrides exist."""
    where = catalog.sources[signal.id]
    if signal.id in RESERVED_SIGNAL_IDS:
        raise KnowledgeError(where, signal.id, "id", f"'{signal.id}' is reserved for the guided flow's opening question")
    types = {s.id: value_type(s) for s in catalog.signals}
    for i, rule in enumerate(signal.rules):
        _expect(catalog, signal, f"rules[{i}].source", rule.source, ("paper",))
        unknown = sorted(rule.expr.names - signal_ids)
        if unknown:
            raise KnowledgeError(where, signal.id, f"rules[{i}].when", f"names unknown signal '{unknown[0]}'")
        try:
            rule.expr.check(types)
        except ExprError as exc:
            raise KnowledgeError(where, signal.id, f"rules[{i}].when", str(exc)) from None
        paper = catalog.entries[rule.source]
        facts = getattr(paper, "facts", [])
        if rule.fact is not None and rule.fact >= len(facts):
            have = f"facts 0 to {len(facts) - 1}" if facts else "no facts"
            raise KnowledgeError(where, signal.id, f"rules[{i}].fact",
                                 f"'{rule.source}' has {have}; there is no fact {rule.fact}")
        for ref in rule.overrides:
            owner, _, rid = ref.rpartition(".")
            target = catalog.entries.get(owner or signal.id)
            if not isinstance(target, Signal) or rid not in {r.id for r in target.rules}:
                raise KnowledgeError(where, signal.id, f"rules[{i}].overrides", f"no rule '{ref}' to override")
            if (owner or signal.id) == signal.id and rid == rule.id:
                raise KnowledgeError(where, signal.id, f"rules[{i}].overrides", "a rule cannot override itself")


def check_complaints(catalog: Catalog, shown: str) -> None:
    """Every complaint of the guided flow, and the check-up list, name signals that exist."""
    signal_ids = {s.id for s in catalog.signals}
    for j, complaint in enumerate(catalog.settings.diagnosis.complaints):
        for sid in complaint.signals:
            if sid not in signal_ids:
                raise KnowledgeError(shown, "settings", f"diagnosis.complaints[{j}].signals",
                                     f"names unknown signal '{sid}'")
    for sid in catalog.settings.diagnosis.checkup:
        if sid not in signal_ids:
            raise KnowledgeError(shown, "settings", "diagnosis.checkup", f"names unknown signal '{sid}'")
