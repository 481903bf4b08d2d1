"""Read and validate the catalog files under ``knowledge/``.

A file holds one entry (a mapping) or several (a list of mappings).  Every
problem is reported as a :class:`KnowledgeError` naming the file, the entry and
the field, so a curator can fix a pull request from the error line alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Iterable, cast

from pydantic import TypeAdapter, ValidationError

from rlmap_bot.errors import RlmapError
from rlmap_bot.knowledge.expr import ExprError, ValueType
from rlmap_bot.knowledge.schema import (
    KINDS,
    STAGE_IDS,
    CatalogSettings,
    Entry,
    Paper,
    Signal,
    Stage,
    Topic,
)

# Any kind of entry, by its 'kind' (built once: a few ms of every start). Entry is an annotated
# union, which TypeAdapter takes though its stub asks for a class.
ENTRY: TypeAdapter[Entry] = TypeAdapter(cast(Any, Entry))


SETTINGS_FILE = "catalog.yaml"


@cache
def _yaml_loader() -> type:
    """The safe loader, but dates stay text: pydantic then parses them and names the field.

    libyaml's parser when PyYAML has it (its wheels do): the catalog parses about five times faster,
    which was half of a store build (1.2 of 2.5 s for the bundled catalog, measured with cProfile).
    Built on first read: opening a built store reads no YAML, and importing PyYAML is about 15 ms
    of a cold `ask` (python -X importtime).
    """
    import yaml

    resolvers = {
        key: [(tag, regexp) for tag, regexp in found if tag != "tag:yaml.org,2002:timestamp"]
        for key, found in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return type(
        "_Loader",
        (getattr(yaml, "CSafeLoader", yaml.SafeLoader),),
        {"yaml_implicit_resolvers": resolvers},
    )


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

    @property
    def errors(self) -> list[KnowledgeError]:
        return [self]


class KnowledgeErrors(KnowledgeError):
    """Several mistakes at once: every one is reported,
    a line each, so one pull request fixes them all.
    """

    def __init__(self, errors: list[KnowledgeError]):
        self.all = list(errors)
        first = self.all[0]
        super().__init__(first.path, first.entry, first.field, first.problem)
        self.args = ("\n".join(str(e) for e in self.all),)

    def __str__(self) -> str:
        return self.args[0]

    @property
    def errors(self) -> list[KnowledgeError]:
        return self.all


def raise_all(errors: list[KnowledgeError]) -> None:
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise KnowledgeErrors(errors)


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
        return sorted(
            (e for e in self.entries.values() if isinstance(e, Stage)), key=lambda s: s.order
        )

    @property
    def signals(self) -> list[Signal]:
        return [e for e in self.entries.values() if isinstance(e, Signal)]

    @property
    def papers(self) -> list[Paper]:
        return [e for e in self.entries.values() if isinstance(e, Paper)]

    def papers_for(self, entry_id: str) -> list[Paper]:
        """Papers that name ``entry_id`` as a stage or subtopic: main-stage matches first, then the
        source map's own papers (``seed``), verified before unverified, newest first."""
        hits = [p for p in self.papers if entry_id in p.stages or entry_id in p.subtopics]
        order = {"verified": 0, "partial": 1, "unverified": 2}
        return sorted(
            hits,
            key=lambda p: (
                p.stages[0] != entry_id,
                not p.seed,
                order[p.verification],
                -(p.year or 0),
                p.title,
            ),
        )

    def children(self, topic_id: str) -> list[Topic]:
        return [t for t in self.entries.values() if isinstance(t, Topic) and t.parent == topic_id]


KIND_FOLDERS = {"stages": "stage", "topics": "topic", "papers": "paper", "signals": "signal"}


def knowledge_files(root: Path) -> list[Path]:
    """Every entry file: the YAML files in the kind
    folders (nothing else under ``root`` is read).
    """
    files: list[Path] = []
    for folder in KIND_FOLDERS:
        where = Path(root) / folder
        if where.is_dir():
            files += [p for p in where.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file()]
    return sorted(files)


def check_folder(root: Path) -> None:
    """A knowledge folder has catalog.yaml and the kind
    folders; anything else is refused before reading.
    """
    if root.exists() and not root.is_dir():
        raise KnowledgeError(root, None, None, "a file, not a knowledge folder")
    if not root.is_dir():
        raise KnowledgeError(root, None, None, "knowledge folder not found")
    if not (root / SETTINGS_FILE).is_file():
        raise KnowledgeError(
            root,
            None,
            None,
            f"not a knowledge folder: no {SETTINGS_FILE} (a knowledge folder "
            f"holds {SETTINGS_FILE} and the folders {', '.join(f + '/' for f in KIND_FOLDERS)})",
        )
    if not (root / "stages").is_dir():
        raise KnowledgeError(
            root,
            None,
            None,
            "not a knowledge folder: no stages/ folder (the five stages live there)",
        )


def _relative(path: Path, root: Path) -> str:
    try:
        return root.name + "/" + path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _read_yaml(path: Path, shown: str) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KnowledgeError(shown, None, None, f"cannot read file: {exc}") from None
    import yaml

    try:
        return yaml.load(text, Loader=_yaml_loader())  # noqa: S506 - a SafeLoader subclass
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


def parse_entry(raw: object, shown: str, index: int, folder_kind: str | None = None) -> Entry:
    """Validate one raw mapping; errors name the file, the entry and the field (all of them)."""
    if not isinstance(raw, dict):
        raise KnowledgeError(shown, f"#{index + 1}", None, "each entry must be a mapping of fields")
    label = str(raw.get("id") or f"#{index + 1}")
    if "kind" not in raw:
        raise KnowledgeError(shown, label, "kind", f"missing; one of {', '.join(KINDS)}")
    if raw.get("kind") not in KINDS:
        raise KnowledgeError(
            shown, label, "kind", f"{raw.get('kind')!r} is not one of {', '.join(KINDS)}"
        )
    if folder_kind is not None and raw.get("kind") != folder_kind:
        folder = next(f for f, k in KIND_FOLDERS.items() if k == raw["kind"])
        raise KnowledgeError(
            shown,
            label,
            "kind",
            f"a {raw['kind']} in the {folder_kind}s' folder; "
            f"move the file to {folder}/ or correct the kind",
        )
    try:
        return ENTRY.validate_python(raw)
    except ValidationError as exc:
        errors = exc.errors()
        misspelt = any(e["type"] == "extra_forbidden" for e in errors)
        found = []
        for error in errors:
            if misspelt and error["type"] == "missing":
                # a misspelt field also shows up as a missing one; the misspelling says it all
                continue
            field_name, problem = (
                _field_path(error["loc"]),
                error["msg"].removeprefix("Value error, "),
            )
            if error["type"] == "extra_forbidden":
                problem = "unknown field (check the spelling)"
            elif error["type"] == "missing":
                problem = "missing (required)"
            elif not error["loc"] or field_name == "kind":
                # A check across fields names its field itself: "presets[2].value: ...".
                named, sep, rest = problem.partition(": ")
                if sep and " " not in named:
                    field_name, problem = named, rest
            found.append(KnowledgeError(shown, label, field_name, problem))
        raise_all(found)
        raise AssertionError("unreachable") from None


def load_catalog(root: Path) -> Catalog:
    """Read, validate and cross-check every entry file; report
    every mistake, each naming file, entry and field.
    """
    root = Path(root)
    check_folder(root)
    entries: dict[str, Entry] = {}
    sources: dict[str, str] = {}
    errors: list[KnowledgeError] = []
    for path in knowledge_files(root):
        shown = _relative(path, root)
        folder_kind = KIND_FOLDERS[path.relative_to(root).parts[0]]
        try:
            data = _read_yaml(path, shown)
        except KnowledgeError as exc:
            errors.append(exc)
            continue
        if data is None:
            errors.append(
                KnowledgeError(
                    shown, None, None, "the file is empty; add an entry or delete the file"
                )
            )
            continue
        items = data if isinstance(data, list) else [data]
        for index, raw in enumerate(items):
            try:
                entry = parse_entry(raw, shown, index, folder_kind)
            except KnowledgeError as exc:
                errors += exc.errors
                continue
            if entry.id in entries:
                errors.append(
                    KnowledgeError(
                        shown,
                        entry.id,
                        "id",
                        f"duplicate id, already defined in {sources[entry.id]}",
                    )
                )
                continue
            entries[entry.id] = entry
            sources[entry.id] = shown
    try:
        settings = _load_settings(root)
    except KnowledgeError as exc:
        errors.append(exc)
        settings = CatalogSettings()
    catalog = Catalog(entries=entries, sources=sources, settings=settings)
    if (
        not errors
    ):  # links are checked between valid entries only, or every broken file would cascade
        errors += check_links(catalog)
        errors += _collect(lambda: check_complaints(catalog, _relative(root / SETTINGS_FILE, root)))
        missing = [s for s in STAGE_IDS if s not in entries]
        if missing:
            errors.append(
                KnowledgeError(
                    _relative(root / "stages", root),
                    None,
                    None,
                    f"the map's five stages are required; missing: {', '.join(missing)}",
                )
            )
    raise_all(errors)
    return catalog


def _collect(check) -> list[KnowledgeError]:
    try:
        check()
    except KnowledgeError as exc:
        return list(exc.errors)
    return []


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
        problem = (
            "unknown setting (check the spelling)"
            if first["type"] == "extra_forbidden"
            else first["msg"]
        )
        raise KnowledgeError(shown, "settings", _field_path(first["loc"]), problem) from None


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
        errors += _collect(
            lambda entry=entry: _check_entry_links(catalog, entry, stage_ids, signal_ids)
        )
    return errors


def check_entry(catalog: Catalog, entry: Entry) -> list[KnowledgeError]:
    """One entry's links checked against a catalog that
    holds it (an addition merged beside the files).
    """
    stage_ids = {s.id for s in catalog.of_kind("stage")}
    signal_ids = {s.id for s in catalog.of_kind("signal")}
    return _collect(lambda: _check_entry_links(catalog, entry, stage_ids, signal_ids))


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
    """Every complaint of the guided flow, and the check-up list, name signals that exist; every
    answer_words key is some signal's choice."""
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
    for sid in catalog.settings.diagnosis.checkup:
        if sid not in signal_ids:
            raise KnowledgeError(
                shown, "settings", "diagnosis.checkup", f"names unknown signal '{sid}'"
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
