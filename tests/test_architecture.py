"""The layers of rlmap_bot, checked on the source with import-linter, and the size of its modules.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``), in the order
docs/architecture.md gives, lowest last: the plain helpers with the result models, the two
stores, the core answers, ``core``, the work over the core, ``commands``, the front-ends,
``__main__``. A package may import from its own layer and the layers below it, never from above;
nothing below the front-ends imports ``cli``, ``slack``, ``slack_sdk`` or ``slack_bolt``; the result
models import no other part of the bot but ``parts``, and no heavy library; and no two modules or
packages of one package import each other, directly or round about. Every import counts, wherever
it is: at module level, inside a function, and under ``if TYPE_CHECKING``.

The tests run ``lint-imports`` (import-linter's command) on the project, and on small trees built
from the project's own contracts to show that each kind of violation fails it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = "rlmap_bot"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
# No module in src/ longer than this, in lines. judgement: a module a maintainer reads in one
# sitting; the anchors the project is read beside (sqlite-utils, datasette, Errbot) keep most
# modules well under it.
MAX_MODULE_LINES = 500


def contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def layer_units() -> set[str]:
    """Every top-level module or package the layers contract names."""
    layers = next(c for c in contracts() if c["id"] == "layers")["layers"]
    return {name.strip().split(".", 1)[1] for layer in layers for name in re.split(r"[|:]", layer)}


def lint(cwd: Path, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", str(config)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


# -- the project ----------------------------------------------------------------------------------
def test_every_unit_of_the_package_has_a_layer():
    units = {
        p.stem if p.is_file() else p.name
        for p in (SRC / PACKAGE).iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    assert units - layer_units() == set(), (
        "add these to [tool.importlinter] layers in pyproject.toml"
    )


def test_the_layers_hold_and_nothing_cycles():
    run = lint(ROOT, ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Contracts: {len(contracts())} kept, 0 broken." in run.stdout


def test_no_module_in_src_is_over_the_line_limit():
    long = {
        str(p.relative_to(SRC)): n
        for p in sorted(SRC.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, f"split these modules (lines over {MAX_MODULE_LINES}): {long}"


# -- the contracts, on small trees ----------------------------------------------------------------
def _toy(tmp_path: Path, files: dict[str, str]) -> Path:
    """A package ``toy`` with one empty module per layer
    unit, ``files`` over them, and the project's
    contracts with ``rlmap_bot`` read as ``toy``."""
    for unit in layer_units():
        (tmp_path / "toy" / f"{unit}.py").parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "toy" / f"{unit}.py").touch()
    for name, text in files.items():
        path = tmp_path / name
        module = tmp_path / "toy" / f"{Path(name).parts[1]}.py"
        if len(Path(name).parts) > 2:  # the unit is a package
            module.unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {p.parent for p in tmp_path.rglob("*.py")}:
        (folder / "__init__.py").touch()
    text = (ROOT / "pyproject.toml").read_text()
    section = text[text.index("[tool.importlinter]") :]
    section = (
        section[: m.start()]
        if (m := re.search(r"^\[(?!\[?tool\.importlinter)", section, re.M))
        else section
    )
    config = tmp_path / "contracts.toml"
    config.write_text(section.replace(PACKAGE, "toy"))
    return config


def test_the_contracts_pass_a_tree_that_keeps_its_layers(tmp_path):
    config = _toy(
        tmp_path,
        {
            "toy/knowledge/store.py": "from toy.errors import X\n",
            "toy/commands/run.py": "from toy.knowledge import store\nfrom ..errors import X\n",
            "toy/slack/app.py": "import toy.commands.run\nimport slack_sdk\n",
            "toy/results/diagnosis.py": "import pydantic\nfrom toy import parts\n",
        },
    )
    run = lint(tmp_path, config)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize(
    "files, expect",
    [
        (
            {
                "toy/knowledge/store.py": "def f():\n    from toy.commands.run import g\n",
                "toy/commands/run.py": "",
            },
            "toy.knowledge is not allowed to import toy.commands",
        ),
        (
            {
                "toy/commands/run.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    "
                "from toy.slack.app import App\n",
                "toy/slack/app.py": "",
            },
            "toy.commands is not allowed to import toy.slack",
        ),
        (
            {"toy/knowledge/store.py": "import slack_sdk\n"},
            "toy.knowledge is not allowed to import slack_sdk",
        ),
        (
            {"toy/results/diagnosis.py": "import numpy\n"},
            "toy.results is not allowed to import numpy",
        ),
        (
            {"toy/results/diagnosis.py": "from toy.settings import Settings\n"},
            "toy.results is not allowed to import toy.settings",
        ),
        (
            {
                "toy/slack/app.py": "from toy.slack.listeners import events\n",
                "toy/slack/listeners/events.py": "from toy.slack.app import App\n",
            },
            "No cycles are allowed in toy.slack",
        ),
        (
            {
                "toy/knowledge/a.py": "from toy.knowledge import b\n",
                "toy/knowledge/b.py": "def f():\n    import toy.knowledge.a\n",
            },
            "No cycles are allowed in toy.knowledge",
        ),
    ],
)
def test_the_contracts_fail_on_each_kind_of_violation(tmp_path, files, expect):
    run = lint(tmp_path, _toy(tmp_path, files))
    assert run.returncode != 0
    assert expect in " ".join(run.stdout.split()), run.stdout + run.stderr


def test_source_comments_say_what_the_code_does_not_its_history():
    """History belongs to git: no issue numbers, review
    passes or dates in src/ comments and docstrings.
    """
    import io
    import re
    import tokenize

    history = re.compile(
        r"\bissue \d+|\bnewcomer pass\b|\bhelper-\d+\b|\b20\d\d-[01]\d-[0-3]\d\b", re.I
    )
    found = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING) and history.search(tok.string):
                if tok.type == tokenize.STRING and not tok.string.lstrip("rbuRBU").startswith(
                    ('"""', "'''")
                ):
                    continue  # a string the program uses, not a docstring or comment
                found.append(
                    f"{path.relative_to(ROOT)}:{tok.start[0]}: "
                    f"{history.search(tok.string).group(0)}"
                )
    assert found == [], "\n".join(found)


# -- private names stay in their module ---------------------------------------------------------
def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_taken(tree, here: str, package: str) -> list[tuple[str, str, int]]:
    """(module taken from, private name, line) of every private name a module's code takes from
    the package: by name, as a private module, or read off a module it imported."""
    import ast

    taken = []
    modules: dict[str, str] = {}  # local name -> the package module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = here.split(".")[: len(here.split(".")) - node.level + 1]
            named = [node.module] if node.module else []
            target = ".".join(base + named) if node.level else node.module or ""
            if target.split(".")[0] != package:
                continue
            for alias in node.names:
                if _private(alias.name):
                    taken.append((target, alias.name, node.lineno))
                modules[alias.asname or alias.name] = f"{target}.{alias.name}"
            if any(_private(p) for p in target.split(".")):
                taken.append((target, target, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != package:
                    continue
                if any(_private(p) for p in alias.name.split(".")):
                    taken.append((alias.name, alias.name, node.lineno))
                if alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            taken.append((modules[node.value.id], node.attr, node.lineno))
    return taken


def private_crossings(src: Path, package: str = PACKAGE) -> list[str]:
    """Every private name (``_x``, not ``__x__``) one module of ``src/package`` takes from
    another, in its package or not: imported by name (``from a.b import _x``), a private module
    imported (``import a._b``), or read off an imported module (``mod._x``)."""
    import ast

    found = []
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        here = module if is_package else module.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for target, name, line in _private_taken(tree, here, package):
            if target != module:
                found.append(f"{path.relative_to(src)}:{line}: {name} from {target}")
    return found


def test_no_private_name_crosses_a_module():
    """A module's private names (``_x``) are its own: another module that needs one, in its
    package or another, gets it public, from the module whose concern it is, never through a
    re-export."""
    assert private_crossings(SRC) == []


@pytest.mark.parametrize(
    "code",
    [
        "from toy.watch.posts import _result\n",
        "from ..watch.posts import _result\n",
        "import toy.watch._posts\n",
        "from toy.watch import posts\nposts._result()\n",
    ],
)
def test_a_private_name_taken_from_another_module_is_found(tmp_path, code):
    (tmp_path / "toy" / "watch").mkdir(parents=True)
    (tmp_path / "toy" / "slack").mkdir()
    (tmp_path / "toy" / "watch" / "posts.py").write_text("def _result(): ...\n\n\n_result()\n")
    (tmp_path / "toy" / "watch" / "_posts.py").write_text("")
    (tmp_path / "toy" / "slack" / "poster.py").write_text(code)
    (tmp_path / "toy" / "watch" / "service.py").write_text(code.replace("..watch.posts", ".posts"))
    found = private_crossings(tmp_path, "toy")
    assert {f.split(":")[0] for f in found} == {
        str(Path("toy/slack/poster.py")),
        str(Path("toy/watch/service.py")),
    }, found


def test_no_test_module_imports_another():
    """Helpers shared by tests live in tests/support/: a test module that imports another takes
    that module's imports along, and breaks when a helper there moves or is renamed."""
    import ast

    tests = Path(__file__).parent
    modules = {path.stem for path in tests.glob("test_*.py")}
    found = []
    for path in sorted(tests.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in modules]
    assert found == []
