"""The layers of rlmap_bot, checked on the source: lower layers never import higher ones, and nothing cycles.

The order, lowest first (a package or top-level module may import from its own
layer and the layers below it, never from a layer above):

0. ``errors``, ``text``, ``files``, ``metrics``, ``crypto``, ``logs``, ``wording``, ``parts``, ``paths``,
   ``settings``: plain helpers and the settings model; they know no feature.
1. ``results``: what commands return, pydantic models only (the front-ends render them by type).
2. ``knowledge`` (the catalog and its store) and ``state`` (the state store and
   the records it keeps): the two stores, each on its own.
3. ``search``, ``diagnosis``, ``runs``: the core answers, over the stores.
4. ``core``: what every front-end holds (the knowledge snapshot and the state store).
5. ``jobs``, ``digest``, ``watch``, ``curation``: work over the core (jobs is the one
   scheduler; digests, watches and the weekly paper scan are its kinds of job).
6. ``commands``: every command declared once, over everything below.
7. ``cli``, ``slack``: the front-ends; only they know click's terminal or Slack.
8. ``__main__``.

Every import counts, wherever it is: at module level, inside a function (the
lazy imports that keep start-up fast), and under ``if TYPE_CHECKING`` (a type
is a dependency too). Besides the order: no cycle between modules, and no
module below the front-ends imports ``slack``/``cli`` or the ``slack_sdk`` and
``slack_bolt`` libraries.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "rlmap_bot"

LAYERS: list[set[str]] = [
    {"errors", "text", "files", "metrics", "crypto", "logs", "wording", "parts", "paths", "settings"},
    {"results"},
    {"knowledge", "state"},
    {"search", "diagnosis", "runs"},
    {"core"},
    {"jobs", "digest", "watch", "curation"},
    {"commands"},
    {"cli", "slack"},
    {"__main__"},
]
FRONT_ENDS = {"cli", "slack"}
FRONT_END_LIBRARIES = {"slack_sdk", "slack_bolt"}
#: Upward imports the order lets through: the verdict and step models still live in
#: diagnosis/engine.py and diagnosis/flow.py, and results built on them import them from there.
UPWARD_ALLOWED = {("rlmap_bot.results.runs", "rlmap_bot.diagnosis.engine"),
                  ("rlmap_bot.results.simulation", "rlmap_bot.diagnosis.engine"),
                  ("rlmap_bot.results.guided", "rlmap_bot.diagnosis.flow")}


def modules(src: Path, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name, not ``__init__``)."""
    out = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int]]:
    """What ``name`` imports (modules of the package resolved to the deepest known module, libraries by
    their top name), with line numbers; every import statement in the file, wherever it is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            if target.split(".")[0] == PACKAGE.split(".")[0] and target.startswith(PACKAGE):
                while target not in known and "." in target:
                    target = target.rpartition(".")[0]
            if (target, node.lineno) not in found:
                found.append((target, node.lineno))
    return found


def unit(module: str) -> str:
    """The layer unit of a module: its top-level package or module under rlmap_bot."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_of(module: str, layers: list[set[str]]) -> int | None:
    name = unit(module)
    return next((i for i, units in enumerate(layers) if name in units), None)


def problems(src: Path, layers: list[set[str]] = LAYERS, front_ends: set[str] = FRONT_ENDS,
             package: str = PACKAGE) -> list[str]:
    """Every violation in the tree under ``src``: upward imports, unknown units, front-end imports, cycles."""
    known = modules(src, package)
    found: list[str] = []
    graph: dict[str, set[str]] = {name: set() for name in known}
    lowest_front = min(layer_of(f"{package}.{f}", layers) or 0 for f in front_ends)
    for name, path in known.items():
        here = layer_of(name, layers) if name != package else None
        if name != package and here is None:
            found.append(f"{name}: not in any layer (add {unit(name)!r} to LAYERS)")
            continue
        for target, line in imports(name, path, known):
            where = f"{path.relative_to(src)}:{line}"
            if target.split(".")[0] in FRONT_END_LIBRARIES and here is not None and here < lowest_front:
                found.append(f"{where}: {name} imports {target}, a front-end library, below the front-ends")
            if target not in known or target == name:
                continue
            if target != package:  # (importing a module imports its parent packages too; not counted)
                graph[name].add(target)
            there = layer_of(target, layers) if target != package else None
            if here is None or there is None:
                continue
            if unit(target) in front_ends and here < lowest_front:
                found.append(f"{where}: {name} imports {target}: nothing below the front-ends knows "
                             f"{' or '.join(sorted(front_ends))}")
            elif there > here and (name, target) not in UPWARD_ALLOWED:
                found.append(f"{where}: {name} (layer {here}) imports {target} (layer {there}), a higher layer")
    found += [f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(graph)]
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle for each strongly connected group of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_path_through(graph, group) for group in groups]


def _path_through(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """A readable cycle inside a strongly connected group: a -> b -> ... -> a."""
    members, start = set(group), group[0]
    path, seen = [start], {start}
    node = start
    while True:
        nxt = next((n for n in sorted(graph[node]) if n in members and n == start and len(path) > 1), None)
        if nxt is not None:
            return path + [start]
        nxt = next((n for n in sorted(graph[node]) if n in members and n not in seen), None)
        if nxt is None:
            nxt = next(n for n in sorted(graph[node]) if n in members)
            return path + [nxt]
        path.append(nxt)
        seen.add(nxt)
        node = nxt


# -- the project ------------------------------------------------------------------------------------------
def test_every_unit_of_the_package_has_a_layer():
    units = {unit(name) for name in modules(SRC) if name != PACKAGE}
    layered = set().union(*LAYERS)
    assert units <= layered, f"not in any layer: {sorted(units - layered)}"


def test_the_layers_hold_and_nothing_cycles():
    found = problems(SRC)
    assert found == [], "\n".join(found)


# -- the checker itself, on small trees ------------------------------------------------------------------
def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {p.parent for p in tmp_path.rglob("*.py")}:
        (folder / "__init__.py").touch()
    return tmp_path


SMALL = [{"errors"}, {"knowledge"}, {"commands"}, {"cli", "slack"}]


def test_the_checker_passes_a_tree_that_keeps_its_layers(tmp_path):
    src = _tree(tmp_path, {
        "rlmap_bot/errors.py": "",
        "rlmap_bot/knowledge/store.py": "from rlmap_bot.errors import X\n",
        "rlmap_bot/commands/run.py": "from rlmap_bot.knowledge import store\nfrom ..errors import X\n",
        "rlmap_bot/slack/app.py": "import rlmap_bot.commands.run\nimport slack_sdk\n",
    })
    assert problems(src, SMALL, {"cli", "slack"}) == []


@pytest.mark.parametrize("files, expect", [
    ({"rlmap_bot/knowledge/store.py": "def f():\n    from rlmap_bot.commands.run import g\n"},
     "rlmap_bot.knowledge.store (layer 1) imports rlmap_bot.commands.run (layer 2), a higher layer"),
    ({"rlmap_bot/commands/run.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                   "    from rlmap_bot.slack.app import App\n"},
     "rlmap_bot.commands.run imports rlmap_bot.slack.app: nothing below the front-ends knows cli or slack"),
    ({"rlmap_bot/commands/run.py": "from ..cli import main\n"},
     "rlmap_bot.commands.run imports rlmap_bot.cli.main: nothing below the front-ends knows"),
    ({"rlmap_bot/knowledge/store.py": "import slack_sdk\n"}, "imports slack_sdk, a front-end library"),
    ({"rlmap_bot/slack/app.py": "from rlmap_bot.slack.listeners import events\n",
      "rlmap_bot/slack/listeners/events.py": "from rlmap_bot.slack.app import App\n"},
     "import cycle: rlmap_bot.slack.app -> rlmap_bot.slack.listeners.events -> rlmap_bot.slack.app"),
    ({"rlmap_bot/knowledge/a.py": "from rlmap_bot.knowledge import b\n",
      "rlmap_bot/knowledge/b.py": "def f():\n    import rlmap_bot.knowledge.a\n"},
     "import cycle: rlmap_bot.knowledge.a -> rlmap_bot.knowledge.b -> rlmap_bot.knowledge.a"),
    ({"rlmap_bot/jobs/x.py": ""}, "rlmap_bot.jobs.x: not in any layer"),
])
def test_the_checker_fails_on_each_kind_of_violation(tmp_path, files, expect):
    base = {"rlmap_bot/errors.py": "", "rlmap_bot/knowledge/store.py": "", "rlmap_bot/commands/run.py": "",
            "rlmap_bot/cli/main.py": "", "rlmap_bot/slack/app.py": ""}
    src = _tree(tmp_path, {**base, **files})
    found = problems(src, SMALL, {"cli", "slack"})
    assert any(expect in line for line in found), found
