"""A tiny, safe expression language for diagnosis rules.

Curators write conditions such as ``proxy_reward_trend == 'rising' and
heldout_score_trend == 'falling'`` or ``abs(eval_improvement) < 2 *
eval_seed_std * sqrt(2 / eval_num_seeds)``.  Python's own parser reads them;
only a whitelist of node types is allowed, so a rule file can never run code.

Signals a team does not know are *unknown*, not false: evaluation is
three-valued (Kleene logic), so ``a or b`` holds once ``a`` does even if ``b`` is
unknown, while ``a and b`` waits for both.  A rule fires only when its
condition is known to be true.

:meth:`Expr.check` type-checks a condition against the signals' types, so
``clip_fraction == 'high'`` (a number compared with a word, never true) is a
catalog error rather than a rule that silently never fires.
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "sqrt": math.sqrt,
    "min": min,
    "max": max,
    "log": math.log,
}
_ONE_ARG = {"abs", "sqrt", "log"}
_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_CMPOPS = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


class ExprError(ValueError):
    """The expression is not in the allowed subset, cannot be evaluated, or mixes types."""


class _Unknown:
    """A value nobody reported; see the module docstring for how it propagates."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@dataclass(frozen=True)
class ValueType:
    """What a name holds, for type-checking: a number, a yes/no, or one of some words."""

    kind: str  # "number", "bool" or "choice"
    choices: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Expr:
    """A parsed condition and the signal names it reads."""

    source: str
    tree: ast.Expression
    names: frozenset[str]
    run: Callable[[Mapping[str, Any]], Any] = field(
        compare=False, repr=False
    )  # parse() compiles it
    # The elementary conditions under the and/or/not structure, compiled too (for contradicted()).
    atoms: tuple[Callable[[Mapping[str, Any]], Any], ...] = field(
        default=(), compare=False, repr=False
    )

    def value(self, values: Mapping[str, Any]) -> Any:
        """Three-valued evaluation: absent names are
        unknown; returns UNKNOWN when it cannot tell.
        """
        try:
            return self.run(values)
        except ExprError:
            raise
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise ExprError(f"cannot evaluate {self.source!r}: {exc}") from None

    def holds(self, values: Mapping[str, Any]) -> bool:
        """True only when the condition is known to be true (unknown or failing is not true)."""
        try:
            result = self.value(values)
        except ExprError:
            return False
        return result is not UNKNOWN and bool(result)

    def contradicted(self, values: Mapping[str, Any]) -> bool:
        """True when some elementary condition (a comparison,
        or a yes/no name) is known to be false.

        ``a == 'x' and (b or c == 'y')`` with ``c`` known to be 'z' is contradicted even while
        ``a`` and ``b`` are unknown: the reading of ``c`` speaks against this branch.
        """
        for atom in self.atoms:
            try:
                if atom(values) is False:
                    return True
            except (ExprError, ArithmeticError, ValueError, TypeError):
                return True
        return False

    def check(self, types: Mapping[str, ValueType]) -> None:
        """Raise ExprError naming the first comparison or operation that mixes types."""
        result = _type(self.tree.body, types)
        if result.kind != "bool":
            raise ExprError(
                f"the condition must be true or false, but {self.source!r} is a {_describe(result)}"
            )


def parse(source: str) -> Expr:
    """Parse ``source``; raise :class:`ExprError` naming the first disallowed part."""
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"not a valid expression: {exc.msg}") from None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id not in _FUNCTIONS:
                names.add(node.id)
        elif isinstance(node, ast.Call):
            if (
                not isinstance(node.func, ast.Name)
                or node.func.id not in _FUNCTIONS
                or node.keywords
            ):
                raise ExprError(
                    f"only these functions are allowed: {', '.join(sorted(_FUNCTIONS))}"
                )
        elif not isinstance(
            node,
            (
                ast.Expression,
                ast.BoolOp,
                ast.And,
                ast.Or,
                ast.UnaryOp,
                ast.Not,
                ast.USub,
                ast.BinOp,
                ast.Compare,
                ast.Constant,
                ast.Load,
                ast.Tuple,
                ast.List,
                *_BINOPS,
                *_CMPOPS,
            ),
        ):
            raise ExprError(f"{type(node).__name__} is not allowed in a rule")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bool)):
            raise ExprError("constants must be numbers, strings or booleans")
    return Expr(
        source=source.strip(),
        tree=tree,
        names=frozenset(names),
        run=_compile(tree.body),
        atoms=tuple(_compile(a) for a in _atoms(tree.body)),
    )


# -- evaluation ------------------------------------------------------------------------------
def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _compile(node: ast.AST) -> Callable[[Mapping[str, Any]], Any]:
    """The condition as nested closures, so evaluating a rule does not walk its syntax tree."""
    if isinstance(node, ast.Constant):
        const = node.value
        return lambda values: const
    if isinstance(node, ast.Name):
        name = node.id
        return lambda values: values.get(name, UNKNOWN)
    if isinstance(node, ast.BoolOp):
        parts = [_compile(v) for v in node.values]
        decided = isinstance(node.op, ast.Or)

        def boolop(values: Mapping[str, Any]) -> Any:
            unknown = False
            for part in parts:
                result = part(values)
                if result is UNKNOWN:
                    unknown = True
                elif bool(result) == decided:
                    return decided
            return UNKNOWN if unknown else (not decided)

        return boolop
    if isinstance(node, ast.UnaryOp):
        operand = _compile(node.operand)
        if isinstance(node.op, ast.Not):
            return lambda values: UNKNOWN if (v := operand(values)) is UNKNOWN else (not v)
        return lambda values: UNKNOWN if (v := operand(values)) is UNKNOWN else -v
    if isinstance(node, ast.BinOp):
        left, right, op = _compile(node.left), _compile(node.right), _BINOPS[type(node.op)]

        def binop(values: Mapping[str, Any]) -> Any:
            a, b = left(values), right(values)
            if a is UNKNOWN or b is UNKNOWN:
                return UNKNOWN
            if not (_number(a) and _number(b)):
                raise ExprError("arithmetic takes numbers only")
            return op(a, b)

        return binop
    if isinstance(node, ast.Compare):
        first = _compile(node.left)
        pairs = [
            (_CMPOPS[type(op)], _compile(c))
            for op, c in zip(node.ops, node.comparators, strict=True)
        ]

        def compare(values: Mapping[str, Any]) -> Any:
            left = first(values)
            unknown = False
            for op, comparator in pairs:
                right = comparator(values)
                if (
                    left is UNKNOWN
                    or right is UNKNOWN
                    or (isinstance(right, tuple) and UNKNOWN in right)
                ):
                    unknown = True
                elif not op(left, right):
                    return False
                left = right
            return UNKNOWN if unknown else True

        return compare
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)  # parse() allows only calls of named functions
        fn = _FUNCTIONS[node.func.id]
        args = [_compile(a) for a in node.args]

        def call(values: Mapping[str, Any]) -> Any:
            got = [a(values) for a in args]
            return UNKNOWN if any(g is UNKNOWN for g in got) else fn(*got)

        return call
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_compile(e) for e in node.elts]
        return lambda values: tuple(i(values) for i in items)
    raise ExprError(f"{type(node).__name__} is not allowed in a rule")


def _atoms(node: ast.AST) -> list[ast.AST]:
    """The elementary conditions under the and/or/not structure of a condition."""
    if isinstance(node, ast.BoolOp):
        return [a for v in node.values for a in _atoms(v)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        return [node] if not isinstance(inner, (ast.BoolOp, ast.UnaryOp)) else _atoms(inner)
    return [node]


# -- type checking ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _T:
    kind: str  # number, bool, choice, word, list
    choices: frozenset[str] = frozenset()
    word: str | None = None
    name: str | None = None  # the signal, when the value is a signal's
    items: tuple[_T, ...] = ()


def _describe(t: _T) -> str:
    if t.kind == "choice":
        return f"choice signal '{t.name}'" if t.name else "choice"
    if t.kind == "word":
        return f"the word {t.word!r}"
    if t.kind == "number":
        return f"number signal '{t.name}'" if t.name else "number"
    if t.kind == "bool":
        return f"yes/no signal '{t.name}'" if t.name else "true/false value"
    return "list"


def _type(node: ast.AST, types: Mapping[str, ValueType]) -> _T:
    text = ast.unparse(node)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return _T("bool")
        if isinstance(node.value, (int, float)):
            return _T("number")
        return _T("word", word=str(node.value))
    if isinstance(node, ast.Name):
        spec = types.get(node.id)
        if spec is None:
            raise ExprError(f"names unknown signal '{node.id}'")
        return _T(spec.kind, choices=spec.choices, name=node.id)
    if isinstance(node, ast.BoolOp):
        for sub in node.values:
            _condition(sub, types)
        return _T("bool")
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            _condition(node.operand, types)
            return _T("bool")
        operand = _type(node.operand, types)
        if operand.kind != "number":
            raise ExprError(
                f"'-' needs a number, but {ast.unparse(node.operand)!r} is a {_describe(operand)}"
            )
        return _T("number")
    if isinstance(node, ast.BinOp):
        for side in (node.left, node.right):
            t = _type(side, types)
            if t.kind != "number":
                raise ExprError(
                    f"arithmetic on a non-number in {text!r}: {ast.unparse(side)!r} is a "
                    f"{_describe(t)}"
                )
        return _T("number")
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)  # parse() allows only calls of named functions
        fname = node.func.id
        if fname in _ONE_ARG and len(node.args) != 1:
            raise ExprError(f"{fname}() takes one number, in {text!r}")
        if fname in {"min", "max"} and len(node.args) < 2:
            raise ExprError(f"{fname}() takes two or more numbers, in {text!r}")
        for arg in node.args:
            t = _type(arg, types)
            if t.kind != "number":
                raise ExprError(
                    f"{fname}() takes numbers, but {ast.unparse(arg)!r} is a {_describe(t)}"
                )
        return _T("number")
    if isinstance(node, (ast.Tuple, ast.List)):
        return _T("list", items=tuple(_type(e, types) for e in node.elts))
    if isinstance(node, ast.Compare):
        left = _type(node.left, types)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _type(comparator, types)
            if isinstance(op, (ast.In, ast.NotIn)):
                if right.kind != "list":
                    raise ExprError(f"'in' needs a list of values on its right, in {text!r}")
                for item in right.items:
                    _comparable(left, item, text)
            else:
                if left.kind == "list" or right.kind == "list":
                    raise ExprError(f"a list can only follow 'in', in {text!r}")
                _comparable(left, right, text, ordering=isinstance(op, _ORDERING))
            left = right
        return _T("bool")
    raise ExprError(f"{type(node).__name__} is not allowed in a rule")


def _condition(node: ast.AST, types: Mapping[str, ValueType]) -> None:
    t = _type(node, types)
    if t.kind != "bool":
        raise ExprError(
            f"{ast.unparse(node)!r} is a {_describe(t)}, not a condition; compare it with something"
        )


def _comparable(a: _T, b: _T, text: str, ordering: bool = False) -> None:
    """Raise unless ``a`` and ``b`` can be compared in a way that can come out true."""
    if ordering:
        for side in (a, b):
            if side.kind != "number":
                raise ExprError(
                    f"'<' and '>' compare numbers, but {_describe(side)} is not one, in {text!r}"
                )
        return
    kinds = {a.kind, b.kind}
    if kinds == {"number"} or kinds == {"bool"} or kinds == {"word"}:
        return
    if kinds == {"choice"}:
        if not (a.choices & b.choices):
            raise ExprError(f"{_describe(a)} and {_describe(b)} share no choice, in {text!r}")
        return
    if kinds == {"choice", "word"}:
        choice, word = (a, b) if a.kind == "choice" else (b, a)
        if word.word not in choice.choices:
            raise ExprError(
                f"{word.word!r} is not one of {_describe(choice)}'s choices "
                f"({', '.join(sorted(choice.choices))}), in {text!r}"
            )
        return
    raise ExprError(
        f"compares {_describe(a)} with {_describe(b)}, which can never be equal, in {text!r}"
    )
