"""The catalog's rules, compiled for scoring, and what can be asked of them.

Each rule keeps its condition, the signals it reads and the rules it explains away (its own
``overrides`` and the catalog's ``precedence``: the reading that comes first explains the rest).
:class:`RuleSet` indexes them by signal and answers the two questions the question picker asks
again and again: which rules hold after one more answer, and for what share of the possible
answers a rule would hold.  Both are memoised with :func:`functools.lru_cache` on exactly the
values the rules read.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from rlmap_bot.knowledge.expr import UNKNOWN, Expr
from rlmap_bot.knowledge.loader import Catalog
from rlmap_bot.knowledge.schema import Rule, Signal

# Bound of each memo below, in entries. judgement: a key is a handful of signal values (about
# 200 bytes with its tuple), so 20,000 keys is a few MB a cache; the locked and tuning scenario
# banks, the heaviest users (every profile's guided flow on one engine), stay within it, and a
# long-lived bot answering many teams keeps its memory flat instead of growing with every run.
MEMO_SIZE = 20_000


class OneOf(frozenset):
    """A signal narrowed but not answered: its value is one of these (the complaint a team chose
    says the held-out score does not rise, so it is flat or falling).

    A rule holds when it holds whichever of them the value is, and is contradicted when it
    cannot hold for any; so ``heldout_score_trend != 'rising'`` holds while ``== 'flat'`` waits
    for the answer. Kleene's unknown is the same thing over every possible value. Equal and hashed
    as the set, so memo keys stay exact; ``order`` keeps the choices' order for display.
    """

    order: tuple[Any, ...]

    def __new__(cls, values: Iterable[Any]) -> OneOf:
        ordered = tuple(dict.fromkeys(values))
        self = super().__new__(cls, ordered)
        self.order = ordered
        return self

    def __repr__(self) -> str:
        return f"OneOf{self.order!r}"


def known(values: Mapping[str, Any], name: str) -> bool:
    """Whether ``name`` has a value (not unknown, not only narrowed)."""
    value = values.get(name, UNKNOWN)
    return value is not UNKNOWN and not isinstance(value, OneOf)


def plain(value: Any) -> Any:
    """A value as results carry it: a narrowed one as the list of what it may be."""
    return list(value.order) if isinstance(value, OneOf) else value


def _true(atom: Callable[[Mapping[str, Any]], Any], values: Mapping[str, Any]) -> bool:
    """Whether an elementary condition is known to hold on these values."""
    try:
        return atom(values) is True
    except (ArithmeticError, ValueError, TypeError):
        return False


def _spread(read: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    """Every reading a tuple with narrowed values could be, one value chosen for each."""
    return itertools.product(*(v.order if isinstance(v, OneOf) else (v,) for v in read))


@dataclass(eq=False)
class CompiledRule:
    """One rule of one signal, ready to evaluate."""

    index: int
    key: str  # "signal.rule"
    rule: Rule
    expr: Expr
    names: tuple[str, ...]
    overrides: frozenset[str]
    _holds_on: Callable[[tuple[Any, ...]], bool] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._holds_on = lru_cache(maxsize=MEMO_SIZE)(self._evaluate)

    def reads(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """The values this rule reads, in ``names`` order (UNKNOWN where absent): its memo key."""
        return tuple(values.get(n, UNKNOWN) for n in self.names)

    def holds(self, values: Mapping[str, Any]) -> bool:
        """Whether the condition is known to hold; memoised on the values it reads."""
        return self._holds_on(self.reads(values))

    def _evaluate(self, read: tuple[Any, ...]) -> bool:
        if any(isinstance(v, OneOf) for v in read):
            return all(self._evaluate(each) for each in _spread(read))
        return self.expr.holds(
            {n: v for n, v in zip(self.names, read, strict=True) if v is not UNKNOWN}
        )

    def contradicted(self, values: Mapping[str, Any]) -> bool:
        """Whether what is known (narrowed values included) rules the condition out: some
        elementary condition is false, whichever value each narrowed signal has."""
        read = self.reads(values)
        if not any(isinstance(v, OneOf) for v in read):
            return self.expr.contradicted(values)
        return all(
            self.expr.contradicted(
                {n: v for n, v in zip(self.names, each, strict=True) if v is not UNKNOWN}
            )
            for each in _spread(read)
        )

    def begun(self, values: Mapping[str, Any]) -> bool:
        """Whether what is known has begun this rule: it reads a signal with a value, or one of
        its elementary conditions holds whatever value each narrowed signal has (``!= 'rising'``
        of "flat or falling" does; ``== 'falling'`` does not, so a narrowing alone begins only
        the rules it speaks for)."""
        if any(known(values, n) for n in self.names):
            return True
        read = self.reads(values)
        if not any(isinstance(v, OneOf) for v in read):
            return False
        spreads = [
            {n: v for n, v in zip(self.names, each, strict=True) if v is not UNKNOWN}
            for each in _spread(read)
        ]
        return any(all(_true(atom, each) for each in spreads) for atom in self.expr.atoms)

    def points_to(self, stage: str) -> float:
        """The points this rule gives ``stage`` (0 when it does not move it)."""
        return next((p for s, p in self.rule.points.items() if s == stage), 0.0)


def candidate_values(signal: Signal) -> list[Any]:
    """The answers a question could get, for weighing its information."""
    if signal.presets:
        return [signal.coerce(p.value) for p in signal.presets]
    if signal.type == "choice":
        return list(signal.choices)
    if signal.type == "bool":
        return [True, False]
    return []


def _explained(catalog: Catalog, signals: Mapping[str, Signal]) -> dict[str, set[str]]:
    """Per rule key, the rules the catalog's precedence says its reading explains."""
    follows: dict[str, set[str]] = {}
    for order in catalog.settings.diagnosis.precedence:
        for ref in order.explains:
            signal_rules = signals[ref].rules if ref in signals else []
            follows.setdefault(order.first, set()).update(
                [f"{ref}.{r.id}" for r in signal_rules if any(p > 0 for p in r.points.values())]
                if "." not in ref
                else [ref]
            )
    return follows


class RuleSet:
    """Every compiled rule, indexed by the signals it reads, with the memos over them."""

    def __init__(self, catalog: Catalog, signals: Mapping[str, Signal]):
        follows = _explained(catalog, signals)
        self.rules: list[CompiledRule] = []
        self.by_signal: dict[str, list[CompiledRule]] = {}
        for signal in signals.values():
            for rule in signal.rules:
                refs = frozenset(
                    {r if "." in r else f"{signal.id}.{r}" for r in rule.overrides}
                    | follows.get(f"{signal.id}.{rule.id}", set())
                )
                expr = rule.expr
                compiled = CompiledRule(
                    len(self.rules),
                    f"{signal.id}.{rule.id}",
                    rule,
                    expr,
                    tuple(sorted(expr.names)),
                    refs,
                )
                self.rules.append(compiled)
                for name in expr.names:
                    self.by_signal.setdefault(name, []).append(compiled)
        self.candidates = {sid: candidate_values(s) for sid, s in signals.items()}
        # Per signal, the other signals its rules read: what a trial answer's outcome depends on.
        self._context = {
            sid: tuple(sorted({n for c in rules for n in c.names} - {sid}))
            for sid, rules in self.by_signal.items()
        }
        self._now_holding = lru_cache(maxsize=MEMO_SIZE)(self._holding)
        self._chance_of = lru_cache(maxsize=MEMO_SIZE)(self._share)

    def fired(
        self, values: Mapping[str, Any], rules: Iterable[CompiledRule] | None = None
    ) -> list[CompiledRule]:
        return [c for c in (self.rules if rules is None else rules) if c.holds(values)]

    def trial_fired(
        self, fired: list[CompiledRule], values: Mapping[str, Any], changed: str
    ) -> list[CompiledRule]:
        """The fired rules after ``values`` changed in one
        signal, re-evaluating only the rules that read it.
        """
        touching = self.by_signal.get(changed, [])
        if not touching:
            return fired
        context = tuple(values.get(n, UNKNOWN) for n in self._context[changed])
        now = self._now_holding(changed, values.get(changed, UNKNOWN), context)
        ids = {c.index for c in touching}
        return [c for c in fired if c.index not in ids] + list(now)

    def _holding(
        self, changed: str, value: Any, context: tuple[Any, ...]
    ) -> tuple[CompiledRule, ...]:
        """The rules reading ``changed`` that hold; their values are ``changed`` and its context."""
        values = {
            n: v for n, v in zip(self._context[changed], context, strict=True) if v is not UNKNOWN
        }
        if value is not UNKNOWN:
            values[changed] = value
        return tuple(c for c in self.by_signal[changed] if c.holds(values))

    def options(self, name: str, value: Any = UNKNOWN) -> list[Any]:
        """The answers ``name`` could still get: its candidates, or those a narrowing leaves."""
        candidates = self.candidates.get(name) or []
        if isinstance(value, OneOf):
            return [c for c in candidates if c in value] or list(value.order)
        return candidates

    def chance(self, compiled: CompiledRule, values: Mapping[str, Any]) -> float:
        """The share of the rule's unknown signals'
        candidate answer combinations for which it holds.
        """
        return self._chance_of(compiled.index, compiled.reads(values))

    def _share(self, index: int, read: tuple[Any, ...]) -> float:
        compiled = self.rules[index]
        known = {n: v for n, v in zip(compiled.names, read, strict=True) if v is not UNKNOWN}
        combos = [{n: v for n, v in known.items() if not isinstance(v, OneOf)}]
        for name, value in zip(compiled.names, read, strict=True):
            if value is not UNKNOWN and not isinstance(value, OneOf):
                continue
            options = self.options(name, value)
            if not options:
                return 0.0
            combos = [{**c, name: o} for c in combos for o in options]
        return sum(1 for c in combos if compiled.holds(c)) / len(combos)
