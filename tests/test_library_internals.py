"""No private attribute of slack_bolt, slack_sdk or arxiv in src/: their documented API only.

Each module's syntax tree is read (``ast``) and every object that comes from one of those
libraries is followed: names imported from them, what they return or construct, names and
``self.`` attributes assigned from those, parameters annotated with their types, and ``self``
and ``super()`` inside a class that subclasses one of theirs. An attribute ``._x`` (or
``__dict__``, ``__new__``, ``vars()``) taken on such an object, or an import of a private
module or name from them, is a finding. Attributes a subclass sets itself are its own.

ruff's SLF001 (flake8-self) flags every ``obj._x``, the project's own objects too; this check
is narrower: it knows which objects are the libraries'. The checker is tested on planted code
first, so it is known to find what it looks for.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
LIBRARIES = ("slack_bolt", "slack_sdk", "arxiv")
SELF_TAKEN = {"__dict__", "__new__"}  # dunders that reach past a class's API (cloning, raw state)


def _private(name: str) -> bool:
    return name in SELF_TAKEN or (
        name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
    )


def _from_library(module: str | None) -> bool:
    return bool(module) and module.split(".")[0] in LIBRARIES  # type: ignore[union-attr]


class _Finder(ast.NodeVisitor):
    """Findings of one module: (line, what)."""

    def __init__(self) -> None:
        self.library: set[str] = (
            set()
        )  # names (and dotted self. paths) that hold the libraries' objects
        self.subclasses: dict[str, set[str]] = {}  # class name -> attributes it sets itself
        self.findings: list[tuple[int, str]] = []

    # -- what holds a library object ---------------------------------------------------------------
    def tainted(self, node: ast.AST | None, owner: str | None = None) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return node.id in self.library or (owner is not None and node.id in ("self", "cls"))
        if isinstance(node, ast.Attribute):
            if ast.unparse(node) in self.library:
                return True
            if (
                owner is not None
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
            ):
                return self.inherited(node, owner)
            return self.tainted(node.value, owner)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "super":
                return owner is not None
            return self.tainted(node.func, owner)
        if isinstance(node, ast.Subscript):
            return self.tainted(node.value, owner)
        return False

    def inherited(self, node: ast.Attribute, owner: str) -> bool:
        """Whether ``self.x`` in a library subclass is the library's (the subclass neither sets nor
        defines it)."""
        return node.attr not in self.subclasses.get(owner, set())

    def _annotated(self, annotation: ast.AST | None) -> bool:
        if annotation is None:
            return False
        text = annotation.value if isinstance(annotation, ast.Constant) else ast.unparse(annotation)
        return any(
            part in self.library
            for part in str(text)
            .replace("|", " ")
            .replace("[", " ")
            .replace("]", " ")
            .replace(",", " ")
            .replace(".", " . ")
            .split()
        )

    def learn(self, tree: ast.Module) -> None:
        """Collect the library names of a module until nothing new is learnt."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _from_library(alias.name):
                        self.library.add(alias.asname or alias.name.split(".")[0])
                        if any(part.startswith("_") for part in alias.name.split(".")):
                            self.findings.append((node.lineno, f"import {alias.name}"))
            elif isinstance(node, ast.ImportFrom) and _from_library(node.module):
                for alias in node.names:
                    self.library.add(alias.asname or alias.name)
                    if alias.name.startswith("_") or any(
                        p.startswith("_") for p in (node.module or "").split(".")
                    ):
                        self.findings.append(
                            (node.lineno, f"from {node.module} import {alias.name}")
                        )
        for _ in range(5):
            before = len(self.library) + sum(len(v) for v in self.subclasses.values())
            self._learn(tree, None)
            if before == len(self.library) + sum(len(v) for v in self.subclasses.values()):
                break

    def _learn(self, node: ast.AST, owner: str | None) -> None:
        if isinstance(node, ast.ClassDef):
            owner = None
            if any(self.tainted(b) for b in node.bases):
                owner = node.name
                self.library.add(node.name)
                own = self.subclasses.setdefault(node.name, set())
                for inner in ast.walk(node):
                    if (
                        isinstance(inner, ast.Attribute)
                        and isinstance(inner.ctx, ast.Store)
                        and isinstance(inner.value, ast.Name)
                        and inner.value.id == "self"
                    ):
                        own.add(inner.attr)
                    elif (
                        isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef)
                        and inner is not node
                    ):
                        own.add(inner.name)
                    elif isinstance(inner, ast.AnnAssign):
                        own.add(ast.unparse(inner.target))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if self.tainted(node.value, owner) or (
                isinstance(node, ast.AnnAssign) and self._annotated(node.annotation)
            ):
                for target in targets:
                    if isinstance(target, ast.Name | ast.Attribute) and not (
                        owner is not None and isinstance(target, ast.Attribute)
                    ):
                        self.library.add(ast.unparse(target))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                if self._annotated(arg.annotation):
                    self.library.add(arg.arg)
        for child in ast.iter_child_nodes(node):
            self._learn(child, owner)

    # -- what is taken from it ------------------------------------------------------------
    def check(self, tree: ast.Module) -> None:
        self._visit(tree, None)

    def _visit(self, node: ast.AST, owner: str | None) -> None:
        if isinstance(node, ast.ClassDef):
            owner = node.name if node.name in self.subclasses else None
        if isinstance(node, ast.Attribute) and _private(node.attr):
            value = node.value
            if owner is not None and isinstance(value, ast.Name) and value.id == "self":
                reaches = self.inherited(node, owner)  # a subclass's own attributes are its own
            else:
                reaches = self.tainted(value, owner)
            if reaches:
                self.findings.append((node.lineno, ast.unparse(node)))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "vars"
            and node.args
            and self.tainted(node.args[0], owner)
        ):
            self.findings.append((node.lineno, ast.unparse(node)))
        for child in ast.iter_child_nodes(node):
            self._visit(child, owner)


def private_uses(source: str) -> list[tuple[int, str]]:
    """(line, code) of every private attribute of the three libraries used in ``source``."""
    tree = ast.parse(source)
    finder = _Finder()
    finder.learn(tree)
    finder.check(tree)
    return sorted(set(finder.findings))


# -- the checker finds what it looks for ------------------------------------------------------
PLANTED = {
    "a private attribute of a library object": (
        (
            "import arxiv\nclass Source:\n    def __init__(self):\n        self.client = "
            "arxiv.Client()\n        self.client._session = None\n"
        ),
        ["self.client._session"],
    ),
    "a clone through __new__ and __dict__": (
        (
            "from slack_sdk import WebClient\nclass Copy(WebClient):\n    @classmethod\n    def "
            "around(cls, base: WebClient):\n        client = cls.__new__(cls)\n        "
            "client.__dict__.update(vars(base))\n        return client\n"
        ),
        ["cls.__new__", "client.__dict__", "vars(base)"],
    ),
    "a subclass reaching into its base's private state": (
        (
            "from slack_sdk import WebClient\nclass Mine(WebClient):\n    def "
            "__init__(self):\n        super().__init__()\n        self.mine = 1\n    def "
            "f(self):\n        return self._perform_urllib_http_request, super()._logger, "
            "self.mine\n"
        ),
        ["self._perform_urllib_http_request", "super()._logger"],
    ),
    "an internal of an app's listener runner": (
        "from slack_bolt import App\napp = App()\napp.listener_runner._x = 1\n",
        ["app.listener_runner._x"],
    ),
    "a private module": ("from arxiv._feed import parse\n", ["from arxiv._feed import parse"]),
}


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_the_checker_finds_each_planted_private_use(case):
    source, expected = PLANTED[case]
    assert sorted(what for _line, what in private_uses(source)) == sorted(expected)


def test_the_checker_leaves_public_use_and_the_projects_own_private_names_alone():
    source = (
        "from slack_sdk import WebClient\nclass Mine(WebClient):\n    def __init__(self, base: "
        "WebClient):\n        super().__init__(token=base.token, "
        "retry_handlers=list(base.retry_handlers))\n        self._own = 1\n    def "
        "f(self):\n        return self._own, self.base_url\nclass Ours:\n    def "
        "__init__(self):\n        self._state = {}\n    def g(self, other: 'Ours'):\n        "
        "return other._state, self._state\n"
    )
    assert private_uses(source) == []


# -- the rule -----------------------------------------------------------------------------------
def test_src_uses_no_private_attribute_of_slack_bolt_slack_sdk_or_arxiv():
    found = [
        f"{path.relative_to(SRC)}:{line}: {what}"
        for path in sorted(SRC.rglob("*.py"))
        for line, what in private_uses(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "use the libraries' documented API instead:\n" + "\n".join(found)
