"""Read and validate the catalog files under ``knowledge/``.

A file holds one entry (a mapping) or several (a list of mappings).  Every
problem is reported as a :class:`KnowledgeError` naming the file, the entry and
the field, so a curator can fix a pull request from the error line alone.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Iterable, cast

from pydantic import ConfigDict, TypeAdapter, ValidationError

from rlmap_bot.knowledge.catalog import Catalog, KnowledgeError, collect_errors, raise_all
from rlmap_bot.knowledge.schema import KINDS, STAGE_IDS, Entry
from rlmap_bot.knowledge.settings import CatalogSettings

# Any kind of entry, by its 'kind'. Entry is an annotated union, which TypeAdapter takes though
# its stub asks for a class. Built when the first catalog file is validated (defer_build, as every
# model of knowledge/schema.py): opening a built store validates no file.
ENTRY: TypeAdapter[Entry] = TypeAdapter(cast(Any, Entry), config=ConfigDict(defer_build=True))


SETTINGS_FILE = "catalog.yaml"
#: The verdicts' calibration map, generated (benchmarks/calibrate.py) and kept beside the settings.
CALIBRATION_FILE = "calibration.yaml"


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
            f"not a knowledge folder: no {SETTINGS_FILE} (a knowledge folder holds {SETTINGS_FILE} "
            f"and the folders {', '.join(f + '/' for f in KIND_FOLDERS)})",
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
            f"a {raw['kind']} in the {folder_kind}s' folder; move the file to {folder}/ or correct "
            f"the kind",
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
    # Imported here: the cross-entry checks (and the rule language they type-check with) serve a
    # build alone, and a plain ask, which imports this module for check_folder, never builds.
    from rlmap_bot.knowledge.checks import check_complaints, check_links

    if (
        not errors
    ):  # links are checked between valid entries only, or every broken file would cascade
        errors += check_links(catalog)
        errors += collect_errors(
            lambda: check_complaints(catalog, _relative(root / SETTINGS_FILE, root))
        )
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


def _load_settings(root: Path) -> CatalogSettings:
    path = root / SETTINGS_FILE
    if not path.exists():
        return CatalogSettings()
    shown = _relative(path, root)
    loaded = _read_yaml(path, shown)
    if loaded is not None and not isinstance(loaded, dict):
        raise KnowledgeError(shown, None, None, "must be a mapping of settings")
    loaded = dict(loaded or {})
    calibration = root / CALIBRATION_FILE
    if calibration.exists():
        fitted = _read_yaml(calibration, _relative(calibration, root))
        loaded["diagnosis"] = {**(loaded.get("diagnosis") or {}), "calibration": fitted}
    try:
        return CatalogSettings.model_validate(loaded)
    except ValidationError as exc:
        first = exc.errors()[0]
        problem = (
            "unknown setting (check the spelling)"
            if first["type"] == "extra_forbidden"
            else first["msg"]
        )
        raise KnowledgeError(shown, "settings", _field_path(first["loc"]), problem) from None
