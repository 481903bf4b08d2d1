"""A tiny, safe expression language for diagnosis rules.

Curators write conditions such as ``proxy_reward_trend == 'rising' and
heldout_score_trend == 'falling'`` or ``abs(eval_improvement) < 2 *
eval_seed_std / sqrt(eval_num_seeds)``.  Python's own parser reads them; only a
whitelist of node types is allowed, so a rule file can never run code.
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass
from typing import Any, Mapping

_FUNCTIONS = {"abs": abs, "sqrt": math.sqrt, "min": min, "max": max, "log": math.log}
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


class ExprError(ValueError):
    """The expression is not in the allowed subset, or cannot be evaluated."""


@dataclass(frozen=True)
class Expr:
    """A parsed condition and the signal names it reads."""

    source: str
    tree: ast.Expression
    names: frozenset[str]

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        """Evaluate with ``values`` bound to names; every name must be present."""
        try:
            return _eval(self.tree.body, values)
        except ExprError:
            raise
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise ExprError(f"cannot evaluate {self.source!r}: {exc}") from None


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
            if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords:
                raise ExprError(f"only these functions are allowed: {', '.join(sorted(_FUNCTIONS))}")
        elif not isinstance(
            node,
            (
                ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub,
                ast.BinOp, ast.Compare, ast.Constant, ast.Load, ast.Tuple, ast.List,
                *_BINOPS, *_CMPOPS,
            ),
        ):
            raise ExprError(f"{type(node).__name__} is not allowed in a rule")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bool)):
            raise ExprError("constants must be numbers, strings or booleans")
    return Expr(source=source.strip(), tree=tree, names=frozenset(names))


def _eval(node: ast.AST, values: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in _FUNCTIONS:
            return _FUNCTIONS[node.id]
        if node.id not in values:
            raise ExprError(f"no value for {node.id!r}")
        return values[node.id]
    if isinstance(node, ast.BoolOp):
        results = (_eval(v, values) for v in node.values)
        return all(results) if isinstance(node.op, ast.And) else any(results)
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, values)
        return (not operand) if isinstance(node.op, ast.Not) else -operand
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, values), _eval(node.right, values)
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (left, right)):
            raise ExprError("arithmetic takes numbers only")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, values)
        for op, comparator in zip(node.ops, node.comparators):
            right = _eval(comparator, values)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Call):
        return _FUNCTIONS[node.func.id](*(_eval(a, values) for a in node.args))  # type: ignore[attr-defined]
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_eval(e, values) for e in node.elts)
    raise ExprError(f"{type(node).__name__} is not allowed in a rule")
