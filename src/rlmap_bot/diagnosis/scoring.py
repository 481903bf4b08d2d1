"""From fired rules to stage scores, the verdict distribution and the binding stage.

A rule may *override* others whose reading it explains away (many passes over the pool explain a
rising proxy with a flat held-out score better than reward hacking does), and overridden rules do
not count.  A stage's score is its strongest reading in full plus ``corroboration`` times each of
its other readings, for or against.  Readings of one run overlap, so summing them in full would
let several weak, correlated readings outvote one decisive reading; weighing the strongest fully
keeps one decisive symptom enough for a verdict, and two readings of equal strength on different
stages a named tie.  Scores become probabilities with a softmax that includes a "no single stage"
option, so weak or conflicting evidence yields no verdict rather than a guess.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Literal

from rlmap_bot.diagnosis.rules import MEMO_SIZE, CompiledRule, RuleSet, known
from rlmap_bot.knowledge.settings import DiagnosisSettings

# What :meth:`Scoring.evaluate` returns: the fired rules, those kept, and each stage's score.
Evaluation = tuple[list[CompiledRule], list[CompiledRule], dict[str, float]]


def margin_weight(settings: DiagnosisSettings, margin: float | None) -> float:
    """How much a reading counts for, by its margin past its noise band (in bands): none inside
    the band, ``margin_weight`` at its edge, rising linearly to full at ``margin_full`` bands
    (None: a reading with no band, a person's answer, counts in full)."""
    if margin is None:
        return 1.0
    if margin < 1:
        return 0.0
    low, full = settings.margin_weight, settings.margin_full
    return min(1.0, low + (1 - low) * (margin - 1) / (full - 1))


def rule_weights(
    settings: DiagnosisSettings, fired: Iterable[CompiledRule], margins: Mapping[str, float | None]
) -> dict[int, float]:
    """Each fired rule's weight under the margins of the readings it is weighed by (the weakest
    decides: a comparison of two curves is as sure as its less sure curve); rules at 1 left out."""
    out: dict[int, float] = {}
    for c in fired:
        w = min(
            (margin_weight(settings, margins[s]) for s in c.rule.weighed_by if s in margins),
            default=1.0,
        )
        if w < 1.0:
            out[c.index] = w
    return out


class Scoring:
    """Scores stages for a set of signal values, and says which binds."""

    def __init__(self, settings: DiagnosisSettings, stages: list[str], rules: RuleSet):
        self.settings = settings
        self.stages = stages
        self.rules = rules
        self._dist_of = lru_cache(maxsize=MEMO_SIZE)(self._distribution_of)

    @staticmethod
    def kept(fired: list[CompiledRule]) -> list[CompiledRule]:
        """The fired rules that no other fired rule explains away."""
        dropped = set().union(*(c.overrides for c in fired)) if fired else set()
        return [c for c in fired if c.key not in dropped] if dropped else fired

    def scores(
        self, kept: Iterable[CompiledRule], weights: Mapping[int, float] | None = None
    ) -> dict[str, float]:
        """Strongest reading in full, the others at the
        corroboration weight (see the module doc); ``weights``: rule index -> the share of its
        points a reading's margin leaves it (:func:`rule_weights`).
        """
        readings: dict[str, list[float]] = {s: [] for s in self.stages}
        for compiled in kept:
            w = weights.get(compiled.index, 1.0) if weights else 1.0
            for target, points in compiled.rule.points.items():
                if target in readings:
                    readings[target].append(points * w)
        k = self.settings.corroboration
        scores: dict[str, float] = {}
        for stage, pts in readings.items():
            if not pts:
                scores[stage] = 0.0
                continue
            top = max(pts) if max(pts) > 0 else min(pts)
            scores[stage] = top + k * (sum(pts) - top)
        return scores

    def evaluate(
        self, values: Mapping[str, Any], margins: Mapping[str, float | None] | None = None
    ) -> Evaluation:
        """Fired and kept rules and the stage scores (see :meth:`weighed`)."""
        fired, kept, scores, _ = self.weighed(values, margins)
        return fired, kept, scores

    def weighed(
        self, values: Mapping[str, Any], margins: Mapping[str, float | None] | None = None
    ) -> tuple[list[CompiledRule], list[CompiledRule], dict[str, float], dict[int, float]]:
        """Fired and kept rules, the stage scores and the rules' weights: ``margins`` (signal ->
        its margin past its noise band, for readings from a run's logs) weigh the rules that say
        so, and a rule weighed to nothing (a reading inside its band) has not fired."""
        fired = self.rules.fired(values)
        weights = rule_weights(self.settings, fired, margins) if margins else {}
        if weights:
            fired = [c for c in fired if weights.get(c.index, 1.0) > 0]
        kept = self.kept(fired)
        return fired, kept, self.scores(kept, weights), weights

    def probabilities(self, scores: Mapping[str, float]) -> tuple[dict[str, float], float]:
        """Each stage's probability of binding, and that of "no single stage" (a softmax)."""
        t = self.settings.temperature
        logits = [scores[s] / t for s in self.stages] + [self.settings.none_score / t]
        top = max(logits)
        exps = [math.exp(x - top) for x in logits]
        total = sum(exps)
        probs = {s: exps[i] / total for i, s in enumerate(self.stages)}
        return probs, exps[-1] / total

    def stated(self, probability: float, kind: Literal["stage", "none"]) -> float:
        """How sure a verdict says it is: the probability of what it states, through the
        calibration map fitted on runs with known truth (``knowledge/calibration.yaml``), so that
        of verdicts said at X%, about X% are right; the probability itself when there is none."""
        calibration = self.settings.calibration
        return probability if calibration is None else calibration.stated(probability, kind)

    def distribution(self, scores: Mapping[str, float]) -> list[float]:
        probs, none = self.probabilities(scores)
        return [*probs.values(), none]

    @staticmethod
    def entropy(dist: Iterable[float]) -> float:
        """Uncertainty, in bits, about which stage binds (or none)."""
        return -sum(p * math.log2(p) for p in dist if p > 0)

    def dist(
        self, fired: list[CompiledRule], among: frozenset[int] | None = None
    ) -> tuple[float, ...]:
        """The verdict distribution for a set of fired rules; memoised on the set.

        ``among``: only the kept readings of these rules count (those bearing on a complaint,
        after every fired rule has had its say on what it explains away).
        """
        return self._dist_of(frozenset(c.index for c in fired), among)

    def uncertainty(self, fired: list[CompiledRule], among: frozenset[int] | None = None) -> float:
        """Entropy of the verdict distribution for a set of fired rules."""
        return self.entropy(self.dist(fired, among))

    def _distribution_of(
        self, indices: frozenset[int], among: frozenset[int] | None
    ) -> tuple[float, ...]:
        fired = [self.rules.rules[i] for i in sorted(indices)]
        kept = self.kept(fired)
        if among is not None:
            kept = [c for c in kept if c.index in among]
        return tuple(self.distribution(self.scores(kept)))

    def binding(
        self,
        scores: Mapping[str, float],
        values: Mapping[str, Any],
        kept: list[CompiledRule],
        weights: Mapping[int, float] | None = None,
    ) -> str | None:
        """The stage that binds, or None.

        It needs a ``min_lead`` over the runner-up, and either ``min_score`` (a firm verdict) or,
        below that, ``tentative_score`` while its reading could still be confirmed (a verdict
        that rests on one measurement, see :meth:`confirmable`).
        """
        ranked = sorted(self.stages, key=lambda s: -scores[s])
        top, second = ranked[0], ranked[1]
        if scores[top] - scores[second] < self.settings.min_lead:
            return None
        if scores[top] >= self.settings.min_score:
            return top
        if scores[top] >= self.settings.tentative_score and self.confirmable(
            top, values, kept, weights
        ):
            return top
        return None

    def confirmable(
        self,
        stage: str,
        values: Mapping[str, Any],
        kept: list[CompiledRule],
        weights: Mapping[int, float] | None = None,
    ) -> bool:
        """Whether a moderate reading of ``stage`` still stands alone rather than unconfirmed.

        A strong reading stands (readings against other mechanisms of the stage may pull its
        score under ``min_score``, not explain it).  A moderate reading needs a second one to be
        firm.  While the readings that would confirm it (rules giving ``stage`` at least
        ``min_score`` that read the same signals) are unknown, the one measurement is the best
        the evidence says; once they are known and none confirmed it, it was checked and found
        wanting, and the verdict abstains.
        """
        w = weights or {}
        strongest = max((c.points_to(stage) * w.get(c.index, 1.0) for c in kept), default=0.0)
        if strongest >= self.settings.min_score:
            return (
                True  # a strong reading, only weighed down by healthy readings of other mechanisms
            )
        backing = {n for c in kept if c.points_to(stage) > 0 for n in c.names}
        held = {c.index for c in kept}
        stronger = [
            c
            for c in self.rules.rules
            if c.index not in held
            and backing & set(c.names)
            and c.points_to(stage) >= self.settings.min_score
        ]
        for compiled in stronger:
            unknown = [n for n in compiled.names if not known(values, n)]
            if (
                unknown
                and not compiled.contradicted(values)
                and self.rules.chance(compiled, values) > 0
            ):
                return True
        return not stronger

    def tied(self, scores: Mapping[str, float]) -> list[str]:
        """Stages that each have enough evidence but none leads by enough."""
        ranked = sorted(self.stages, key=lambda s: -scores[s])
        top = scores[ranked[0]]
        if top < self.settings.min_score:
            return []
        return [
            s
            for s in ranked
            if scores[s] >= self.settings.min_score and top - scores[s] < self.settings.min_lead
        ]
