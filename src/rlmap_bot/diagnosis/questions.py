"""Which unanswered signals are worth asking, and which could overturn a verdict.

The next questions are the ones whose answers are expected to move the verdict distribution most
(the mean Kullback-Leibler divergence of the distribution after each preset answer from the one
before), discounted by what answering them costs.  Entropy reduction scored a moderate reading as
noise: with nothing known "none" is likeliest, and an answer that makes one stage as likely as
"none" raises the entropy, so a question whose answer alone would give a verdict was never asked.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from rlmap_bot.diagnosis.rules import CompiledRule, known
from rlmap_bot.diagnosis.scoring import Evaluation, Scoring
from rlmap_bot.knowledge.schema import Signal
from rlmap_bot.results.diagnosis import NextCheck


def surprise(after: Iterable[float], before: Iterable[float]) -> float:
    """How far an answer moves the verdict distribution: KL(after || before), in bits."""
    return sum(p * math.log2(p / q) for p, q in zip(after, before, strict=True) if p > 0 and q > 0)


class Questions:
    """Ranks the questions left, over one :class:`~rlmap_bot.diagnosis.scoring.Scoring`."""

    def __init__(self, scoring: Scoring, signals: Mapping[str, Signal]):
        self.scoring = scoring
        self.rules = scoring.rules
        self.settings = scoring.settings
        self.signals = signals

    def information(
        self,
        values: Mapping[str, Any],
        exclude: Iterable[str] = (),
        among: frozenset[int] | None = None,
    ) -> list[NextCheck]:
        """Unanswered signals ranked by expected information gain weighed by cost, best first.

        A signal's gain is how far its answer is expected to move the belief about which stage
        binds (KL divergence, bits), averaged over its preset answers, plus what the
        combination rules it takes part in could reduce once their other unknown signals are
        asked too, per question (see :meth:`combination_gain`); without the second, a signal
        that only matters in a combination (an eval gain next to the seed spread) would never
        be asked.  ``among``: the belief is the one those rules' readings give (see
        :meth:`Scoring.dist`), so a signal none of them reads gains nothing.
        """
        fired = self.rules.fired(values)
        base = self.scoring.uncertainty(fired, among)
        before = self.scoring.dist(fired, among)
        skip = {n for n in values if known(values, n)} | set(exclude)
        weights = self.settings.cost_weights
        combos = self.combination_gain(values, fired, base, skip, among)
        checks: list[NextCheck] = []
        for signal in self.signals.values():
            if signal.id in skip:
                continue
            # a narrowed signal (the complaint said "not rising") is weighed on what it leaves
            options = self.rules.options(signal.id, values.get(signal.id))
            if not options:
                continue
            moved = 0.0
            for option in options:
                trial = {**values, signal.id: option}
                moved += surprise(
                    self.scoring.dist(self.rules.trial_fired(fired, trial, signal.id), among),
                    before,
                )
            gain = moved / len(options) + combos.get(signal.id, 0.0)
            priority = gain * weights.get(signal.cost, 1.0)
            checks.append(
                NextCheck(
                    signal=signal.id,
                    title=signal.title,
                    question=signal.question,
                    gain=round(gain, 4),
                    cost=signal.cost,
                    priority=round(priority, 4),
                )
            )
        checks.sort(key=lambda c: (-c.priority, -c.gain, c.signal))
        return checks

    def combination_gain(
        self,
        values: Mapping[str, Any],
        fired: list[CompiledRule],
        base: float,
        skip: set[str],
        among: frozenset[int] | None = None,
    ) -> dict[str, float]:
        """Per unknown signal, the uncertainty the combination rules it takes part in could remove,
        per question.

        For a rule that reads several unknown signals (none of them skipped), the chance it
        fires is counted over the candidate answers of all of them; its value is that chance
        times the entropy its firing removes, divided by the number of questions it needs, and
        a signal's value is the sum over its rules.
        """
        out: dict[str, float] = {}
        fired_ids = {c.index for c in fired}
        for compiled in self.rules.rules:
            if compiled.index in fired_ids or (among is not None and compiled.index not in among):
                continue
            unknown = [n for n in compiled.names if not known(values, n)]
            if len(unknown) < 2 or any(n in skip for n in unknown):
                continue
            chance = self.rules.chance(compiled, values)
            if chance <= 0:
                continue
            shifted = self.scoring.uncertainty([*fired, compiled], among)
            value = chance * (base - shifted) / len(unknown)
            if value <= 0:
                continue
            for name in unknown:
                out[name] = out.get(name, 0.0) + value
        return out

    def completing_signals(
        self, values: Mapping[str, Any], exclude: Iterable[str] = ()
    ) -> set[str]:
        """Unknown signals that would complete a combination the known readings have begun.

        A rule strong enough to settle a verdict on its own (points reaching ``min_score``)
        that has not fired, reads a known or narrowed signal, and none of whose conditions on the
        known readings is false: its unknown signals complete it.  Rules reading a skipped signal
        cannot complete and are left.
        """
        skip = set(exclude)
        found: set[str] = set()
        fired = {c.index for c in self.rules.fired(values)}
        for compiled in self.rules.rules:
            if (
                compiled.index in fired
                or max(compiled.rule.points.values()) < self.settings.min_score
            ):
                continue
            unknown = [n for n in compiled.names if not known(values, n)]
            if not compiled.begun(values) or not unknown or any(n in skip for n in unknown):
                continue
            if not compiled.contradicted(values) and self.rules.chance(compiled, values) > 0:
                found.update(unknown)
        return found

    def threats(
        self, values: Mapping[str, Any], candidates: Iterable[str], evaluated: Evaluation
    ) -> list[str]:
        """Unanswered signals one answer of which would explain the current verdict's own evidence
        away, given :meth:`Scoring.evaluate`'s result for ``values``.

        A rival stage gaining evidence is a second bottleneck, not a threat; a threat is an
        answer that weakens the binding stage's evidence (an override or a reading against it)
        until it no longer binds.  The guided flow does not stop while one remains.
        """
        fired, kept, scores = evaluated
        leader = self.scoring.binding(scores, values, kept)
        if leader is None:
            return []
        found = []
        for sid in candidates:
            if known(values, sid):
                continue
            for option in self.rules.options(sid, values.get(sid)):
                trial_values = {**values, sid: option}
                trial_kept = self.scoring.kept(self.rules.trial_fired(fired, trial_values, sid))
                trial = self.scoring.scores(trial_kept)
                if (
                    trial[leader] < scores[leader]
                    and self.scoring.binding(trial, trial_values, trial_kept) != leader
                ):
                    found.append(sid)
                    break
        return found
