"""Metric names the alias table does not know, read by the words in them.

A run's metrics are first looked up in ``knowledge/metrics/*.yaml``.  A quantity the table finds
no metric for may still be plainly named: ``performance`` or ``solve accuracy`` is a reward-like
score, ``output length`` or ``response_length/main_chain/mean`` a response length.  Each rule
below reads one quantity from the words of a name (split at ``/``, ``_``, ``-``, ``.``, spaces
and camelCase), with the reason it is said; the pick among several names fitting one rule prefers
a mean, then the shortest name.  The reading is always said, with the ``--map`` that changes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_WORD = re.compile(r"[a-z]+|\d+")

#: Words naming a summary other than the level (a spread or an extreme): never the quantity itself.
SPREAD = frozenset(
    {
        "std",
        "stdev",
        "var",
        "variance",
        "min",
        "max",
        "p90",
        "p95",
        "p99",
        "sum",
        "count",
        "total",
        "num",
        "hist",
        "histogram",
        "coef",
        "coeff",
        "weight",
        "lr",
    }
)
#: Words that make a name a held-out measurement rather than a training one.
HELDOUT = frozenset({"eval", "evaluation", "val", "valid", "validation", "test", "heldout", "dev"})
#: Words of a mean; a name with one is preferred over one with none.
MEAN = frozenset({"mean", "avg", "average"})


@dataclass(frozen=True)
class Rule:
    """One quantity read from names holding any of ``words``, none of ``unless``."""

    quantity: str
    words: frozenset[str]
    unless: frozenset[str]
    reason: str
    all_of: frozenset[str] = frozenset()

    def fits(self, words: frozenset[str]) -> bool:
        if self.all_of and not self.all_of <= words:
            return False
        if self.words and not words & self.words:
            return False
        return not words & (self.unless | SPREAD)


_SCORE = frozenset(
    {
        "reward",
        "rewards",
        "score",
        "scores",
        "accuracy",
        "acc",
        "performance",
        "success",
        "solve",
        "solved",
        "pass",
        "correct",
        "correctness",
        "win",
        "winrate",
        "return",
    }
)
#: Words that name something else measured about rewards (a penalty, a loss, a length, a share of
#: zero spread, an advantage, a time): such a name is no reward level.
_NOT_SCORE = frozenset(
    {
        "kl",
        "loss",
        "penalty",
        "length",
        "len",
        "tokens",
        "token",
        "time",
        "zero",
        "frac",
        "fraction",
        "clip",
        "clipped",
        "advantage",
        "advantages",
        "grad",
        "norm",
        "entropy",
        "lag",
        "model",
        "rm",
        "format",
        "baseline",
        "value",
        "values",
        "ratio",
    }
)

#: The rules, in the order they claim a name (a name serves one quantity).
RULES: tuple[Rule, ...] = (
    Rule(
        "heldout_score",
        _SCORE,
        _NOT_SCORE,
        "a reward, score, accuracy or success word with an eval/val/test word: a held-out score",
    ),
    Rule(
        "task_reward",
        _SCORE,
        _NOT_SCORE | HELDOUT,
        "a reward, score, accuracy, performance or success word: a reward-like level of the "
        "training rollouts",
    ),
    Rule(
        "response_length",
        frozenset({"length", "len", "tokens"}),
        frozenset(
            {
                "prompt",
                "input",
                "query",
                "clip",
                "clipped",
                "truncated",
                "truncation",
                "ratio",
                "frac",
                "time",
                "per",
                "throughput",
                "kl",
                "penalty",
                "reward",
                "score",
            }
        )
        | HELDOUT,
        "a length or tokens word (not of the prompt, not a share or a count): the response length",
    ),
    Rule(
        "entropy",
        frozenset({"entropy"}),
        frozenset({"loss", "bonus"}) | HELDOUT,
        "the word entropy: the policy's per-token entropy",
    ),
    Rule(
        "grad_norm",
        frozenset({"grad", "gradient", "gradients"}),
        HELDOUT,
        "gradient and norm words: the gradient norm",
        all_of=frozenset({"norm"}),
    ),
)
#: The unit a name-read quantity is taken in (as a person's ``--map``, quantities.MAPPED_UNIT).
UNITS = {
    "task_reward": "reward",
    "heldout_score": "score",
    "response_length": "tokens",
    "entropy": "nats",
    "grad_norm": "norm",
}
#: The signal a person maps to change each reading.
SIGNAL_FOR = {
    "task_reward": "proxy_reward_trend",
    "heldout_score": "heldout_score_trend",
    "response_length": "length_growth",
    "entropy": "entropy_trend",
    "grad_norm": "grad_norm_spikes",
}
#: Names that are bookkeeping, not measurements.
BOOKKEEPING = frozenset(
    {"step", "steps", "epoch", "timestamp", "runtime", "time", "iteration", "iter"}
)


@lru_cache(maxsize=4096)
def words(name: str) -> frozenset[str]:
    """The lower-case words of a metric name."""
    return frozenset(_WORD.findall(_CAMEL.sub(" ", name).lower()))


def rule_for(name: str) -> Rule | None:
    """The first rule a name fits, or None."""
    ws = words(name)
    if not ws or ws <= BOOKKEEPING or name.startswith("_"):
        return None
    for rule in RULES:
        if rule.quantity == "heldout_score" and not ws & HELDOUT:
            continue
        if rule.fits(ws):
            return rule
    return None


def guesser() -> Callable[[str], bool]:
    """Whether a reader should keep a name's series because a rule may read it."""
    return lambda name: rule_for(name) is not None


@dataclass(frozen=True)
class Guess:
    quantity: str
    metric: str
    rule: Rule
    others: tuple[str, ...]

    @property
    def said(self) -> str:
        """One line: what was taken for what, why, and how to change it."""
        other = f" (also fitting: {', '.join(self.others[:3])})" if self.others else ""
        return (
            f"read '{self.metric}' as {self.quantity.replace('_', ' ')} by its name "
            f"({self.rule.reason}){other}; if that is wrong, give --map "
            f"{SIGNAL_FOR[self.quantity]}=METRIC"
        )


def guesses(names: Iterable[str], wanted: Iterable[str]) -> dict[str, Guess]:
    """For each quantity in ``wanted``, the best of ``names`` a rule reads as it."""
    fitting: dict[str, list[str]] = {}
    for name in names:
        rule = rule_for(name)
        if rule is not None:
            fitting.setdefault(rule.quantity, []).append(name)
    out: dict[str, Guess] = {}
    for quantity in wanted:
        found = fitting.get(quantity)
        if not found:
            continue
        found.sort(key=lambda n: (not words(n) & MEAN, len(words(n)), len(n), n))
        rule = next(r for r in RULES if r.quantity == quantity)
        out[quantity] = Guess(quantity, found[0], rule, tuple(found[1:]))
    return out
