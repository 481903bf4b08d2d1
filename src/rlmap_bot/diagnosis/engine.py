"""The diagnosis engine: from what a team knows about its run to the binding stage.

Signals and their rules are catalog data (``knowledge/signals/``).  A rule adds points to stages
when its condition is known to hold.  The engine puts together the parts: the compiled rules
(:mod:`~rlmap_bot.diagnosis.rules`), how readings become scores and a verdict
(:mod:`~rlmap_bot.diagnosis.scoring`), which questions to ask next
(:mod:`~rlmap_bot.diagnosis.questions`) and what the verdict says in words
(:mod:`~rlmap_bot.diagnosis.summary`); it returns a :class:`~rlmap_bot.results.diagnosis.Verdict`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rapidfuzz import process

from rlmap_bot.diagnosis import levers, summary
from rlmap_bot.diagnosis.questions import Questions
from rlmap_bot.diagnosis.rules import RuleSet, candidate_values, plain
from rlmap_bot.diagnosis.scoring import Evaluation, Scoring
from rlmap_bot.errors import UsageError
from rlmap_bot.knowledge.loader import Catalog
from rlmap_bot.knowledge.schema import STAGE_IDS, Signal
from rlmap_bot.results.diagnosis import NextCheck, StageScore, Verdict
from rlmap_bot.wording import abstains


class DiagnosisInputError(UsageError):
    """Bad signal input: an unknown id, a wrong type, a value out of range."""


class Engine:
    """Scores stages from signal values using the catalog's signals and rules."""

    candidate_values = staticmethod(candidate_values)

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.settings = catalog.settings.diagnosis
        self.signals: dict[str, Signal] = {s.id: s for s in catalog.signals}
        self.stage_titles = {s.id: s.title for s in catalog.stages}
        self.stages = [s for s in STAGE_IDS if s in self.stage_titles] or list(STAGE_IDS)
        self.complaints = {c.id: c for c in self.settings.complaints}
        self.rules = RuleSet(catalog, self.signals)
        self.scoring = Scoring(self.settings, self.stages, self.rules)
        self.questions = Questions(self.scoring, self.signals)

    # -- input ----------------------------------------------------------------------------
    def validate(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Check and convert every value; raise on the first problem, before using any."""
        if not isinstance(raw, Mapping):
            raise DiagnosisInputError("signals must be a JSON object of signal id -> value")
        values: dict[str, Any] = {}
        for key, value in raw.items():
            signal = self.signals.get(str(key))
            if signal is None:
                near = process.extractOne(str(key), list(self.signals), score_cutoff=75)
                hint = f"; did you mean '{near[0]}'?" if near else ""
                raise DiagnosisInputError(f"unknown signal '{key}'{hint}")
            if value is None:
                continue  # "don't know" in JSON
            try:
                values[signal.id] = signal.coerce(value)
            except ValueError as exc:
                raise DiagnosisInputError(str(exc)) from None
        return values

    # -- questions ------------------------------------------------------------------------
    def information(
        self,
        values: Mapping[str, Any],
        exclude: Iterable[str] = (),
        among: frozenset[int] | None = None,
    ) -> list[NextCheck]:
        """Unanswered signals ranked by expected information gain weighed by cost, best first
        (``among``: over the belief only those rules' readings give)."""
        return self.questions.information(values, exclude, among)

    def bearing_on(self, signals: Iterable[str]) -> frozenset[int]:
        """The rules that read any of ``signals``: the readings that can explain a complaint
        listing them (or count against an explanation), as :meth:`information`'s ``among``."""
        return frozenset(c.index for sid in set(signals) for c in self.rules.by_signal.get(sid, ()))

    def completing_signals(
        self, values: Mapping[str, Any], exclude: Iterable[str] = ()
    ) -> set[str]:
        """Unknown signals that would complete a decisive
        combination the known readings have begun.
        """
        return self.questions.completing_signals(values, exclude)

    def threats(self, values: Mapping[str, Any], candidates: Iterable[str]) -> list[str]:
        """Unanswered signals one answer of which would
        explain the current verdict's own evidence away.
        """
        return self.questions.threats(values, candidates, self.scoring.evaluate(values))

    # -- verdicts -------------------------------------------------------------------------
    def diagnose(
        self,
        raw: Mapping[str, Any],
        exclude: Iterable[str] = (),
        validated: bool = False,
        margins: Mapping[str, float | None] | None = None,
    ) -> Verdict:
        """The verdict for these signal values (validated first unless told they are).

        ``margins``: for signals read from a run's logs, how far past its noise band each
        reading is; given (even empty), the verdict is one on a run, and its confidence is said
        through the calibration map fitted on runs with known truth (:meth:`Scoring.stated`).
        A person's answers are not what that map was measured on, so theirs is the engine's own."""
        values = dict(raw) if validated else self.validate(raw)
        scoring = self.scoring
        fired, kept, scores, weights = scoring.weighed(values, margins)
        probs, none_prob = scoring.probabilities(scores)
        binding = scoring.binding(scores, values, kept, weights)
        ranking = sorted(
            (
                StageScore(
                    stage=s,
                    title=self.stage_titles.get(s, s),
                    score=round(scores[s], 3),
                    probability=round(probs[s], 4),
                )
                for s in self.stages
            ),
            key=lambda r: (-r.score, self.stages.index(r.stage)),
        )
        evidence = summary.evidence(self.catalog, fired, kept, values, weights)
        ranked = [c for c in self.information(values, exclude) if c.gain > self.settings.min_gain]
        tied = [] if binding else scoring.tied(scores)
        backing = [e for e in evidence if binding and e.supports(binding)]
        one = (
            binding is not None and scores[binding] < self.settings.min_score and len(backing) == 1
        )
        confirming = self._confirming(values, ranked, exclude) if one else []
        # A verdict on one measurement says which checks
        # would confirm it: "Check next" starts with those.
        ranked = [c for c in ranked if c.signal in confirming] + [
            c for c in ranked if c.signal not in confirming
        ]
        if binding is not None and not one:
            ranked = self._about_the_verdict(binding, values, ranked, (fired, kept, scores))
        checks = ranked[: self.settings.next_checks]
        # Confidence is the probability of what is said:
        # the stage, one of the tied stages, or "none".
        confidence = (
            probs[binding] if binding else (sum(probs[s] for s in tied) if tied else none_prob)
        )
        # Read from a run's logs: said as such verdicts were found right on runs with known
        # truth.  A verdict on one measurement has no such frequency: on generated runs its truth
        # is that measurement itself (right by construction, so benchmarks/calibrate.py leaves it
        # out of the map), and the real-log bank holds one.  A percentage is a measured frequency,
        # so it is said with none: the stage it points at and the reading that would settle it.
        # (A person's answers keep the engine's own probability: no map was measured on them.)
        stated: float | None = round(confidence, 4)
        if margins is not None:
            stated = (
                None
                if one
                else round(scoring.stated(confidence, "stage" if binding or tied else "none"), 4)
            )
        title = self.stage_titles.get(binding, binding) if binding else None
        verdict = Verdict(
            binding_stage=binding,
            binding_title=self.stage_titles.get(binding) if binding else None,
            tied=tied,
            confidence=stated,
            one_measurement=one,
            summary=summary.summary(
                self.settings, title, ranking, evidence, checks, values, binding, one, confirming
            ),
            ranking=ranking,
            evidence=evidence,
            next_checks=checks,
            papers=summary.papers(self.catalog, self.stages, binding, tied, evidence),
            signals={k: plain(v) for k, v in values.items()},
            next_step=levers.for_verdict(self.catalog, binding, evidence, checks, one),
        )
        if abstains(verdict):  # nothing read moved a stage: no evidence, so no percentage
            verdict.confidence = None
        return verdict

    def _about_the_verdict(
        self,
        binding: str,
        values: Mapping[str, Any],
        ranked: list[NextCheck],
        evaluated: Evaluation,
    ) -> list[NextCheck]:
        """A firm verdict's checks: first what could explain
        its evidence away (:meth:`threats`), then
        what bears on its stage (a rule of the signal moves it), then the rest, each by priority.

        Ranked by information alone, the same few silent
        problems (a log-prob mismatch, contamination,
        a saturated benchmark: each decisive for another
        stage) led every verdict's list; a team that
        has a verdict wants first what would confirm or overturn it.
        """
        signals = [c.signal for c in ranked]
        threats = set(self.questions.threats(values, signals, evaluated))
        bearing = {
            c.signal
            for c in ranked
            if any(binding in r.rule.points for r in self.rules.by_signal.get(c.signal, ()))
        }
        return (
            [c for c in ranked if c.signal in threats]
            + [c for c in ranked if c.signal in bearing - threats]
            + [c for c in ranked if c.signal not in threats | bearing]
        )

    def _confirming(
        self, values: Mapping[str, Any], ranked: list[NextCheck], exclude: Iterable[str]
    ) -> list[str]:
        """For a verdict on one measurement: the unknown signals that would complete a decisive
        combination with it, best first, else the best next checks."""
        completing = self.completing_signals(values, exclude=exclude)
        found = [c.signal for c in ranked if c.signal in completing] or [c.signal for c in ranked]
        return found[: self.settings.next_checks]

    def binding_of(self, values: Mapping[str, Any]) -> tuple[str | None, float]:
        """The binding stage (or None) and its probability, without building a whole verdict."""
        _, kept, scores = self.scoring.evaluate(values)
        binding = self.scoring.binding(scores, values, kept)
        if binding is None:
            return None, 0.0
        probs, _ = self.scoring.probabilities(scores)
        return binding, probs[binding]

    def none_probability(self, values: Mapping[str, Any]) -> float:
        """The probability that no single stage binds, from the softmax over stage scores."""
        _, _, scores = self.scoring.evaluate(values)
        return self.scoring.probabilities(scores)[1]

    def supporting_signals(self, values: Mapping[str, Any]) -> set[str]:
        """The signals read by the kept readings that
        support the binding stage (none when none binds):
        a verdict's supporting evidence, without building the verdict."""
        _, kept, scores = self.scoring.evaluate(values)
        binding = self.scoring.binding(scores, values, kept)
        if binding is None:
            return set()
        backing = [c for c in kept if any(s == binding and p > 0 for s, p in c.rule.points.items())]
        return {n for c in backing for n in c.names if n in values}

    def is_settled(self, values: Mapping[str, Any]) -> bool:
        """True once the verdict is clear enough to stop asking (before threats and complaints)."""
        binding, probability = self.binding_of(values)
        return binding is not None and probability >= self.settings.stop_confidence
