"""The diagnosis engine: from what a team knows about its run to the binding stage.

Signals and their rules are catalog data (``knowledge/signals/``).  A rule adds
points to stages when its condition holds over the answered signals; a stage's
score is the sum.  Scores become probabilities with a softmax that includes a
"no single stage" option, so weak or conflicting evidence yields no verdict
rather than a guess.  The next questions are the ones whose answers are
expected to move that distribution most (mean KL divergence over the preset
answers): a question that can only confirm what is known is not worth asking.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from pydantic import BaseModel, Field
from rapidfuzz import process

from rlmap_bot.errors import UsageError
from rlmap_bot.knowledge.expr import Expr, ExprError
from rlmap_bot.knowledge.loader import Catalog
from rlmap_bot.knowledge.schema import STAGE_IDS, Rule, Signal



def format_value(value: Any) -> str:
    """A signal value as people write it: yes/no, 0.3, rising."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class DiagnosisInputError(UsageError):
    """Bad signal input: an unknown id, a wrong type, a value out of range."""


class PaperRef(BaseModel):
    id: str
    title: str


class Evidence(BaseModel):
    """One fired rule: what was seen, which stages it moves and by how much, and why."""

    rule: str
    signals: dict[str, Any]
    stage: str = Field(description="The stage the rule moves most.")
    direction: str = Field(description="'for' when it points at that stage, 'against' when it argues it is fine")
    points: dict[str, float] = Field(description="Points added to each stage it moves.")
    why: str
    source: PaperRef

    def supports(self, stage: str) -> bool:
        return self.points.get(stage, 0.0) > 0


class StageScore(BaseModel):
    stage: str
    title: str
    score: float
    probability: float


class NextCheck(BaseModel):
    signal: str
    title: str
    question: str
    gain: float = Field(description="Expected shift of belief (bits, KL divergence) over the preset answers.")


class Verdict(BaseModel):
    """What the engine concludes; ``binding_stage`` is None when nothing is singled out."""

    binding_stage: str | None
    binding_title: str | None = None
    tied: list[str] = Field(default_factory=list, description="Stages with strong, near-equal evidence when none binds alone.")
    confidence: float
    summary: str
    ranking: list[StageScore]
    evidence: list[Evidence]
    next_checks: list[NextCheck]
    papers: list[PaperRef]
    signals: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class _CompiledRule:
    owner: str
    rule: Rule
    expr: Expr


class Engine:
    """Scores stages from signal values using the catalog's signals and rules."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.settings = catalog.settings.diagnosis
        self.signals: dict[str, Signal] = {s.id: s for s in catalog.signals}
        self.stage_titles = {s.id: s.title for s in catalog.stages}
        self.stages = [s for s in STAGE_IDS if s in self.stage_titles] or list(STAGE_IDS)
        self.rules: list[_CompiledRule] = []
        self.rules_by_signal: dict[str, list[_CompiledRule]] = {}
        for signal in self.signals.values():
            for rule in signal.rules:
                compiled = _CompiledRule(f"{signal.id}.{rule.id}", rule, rule.expr)
                self.rules.append(compiled)
                for name in compiled.expr.names:
                    self.rules_by_signal.setdefault(name, []).append(compiled)

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

    # -- scoring --------------------------------------------------------------------------
    def _fires(self, compiled: _CompiledRule, values: Mapping[str, Any]) -> bool:
        if not compiled.expr.names <= values.keys():
            return False
        try:
            return bool(compiled.expr.evaluate(values))
        except ExprError:
            return False

    def _fired(self, values: Mapping[str, Any], rules: Iterable[_CompiledRule] | None = None) -> list[_CompiledRule]:
        return [c for c in (self.rules if rules is None else rules) if self._fires(c, values)]

    def _scores(self, fired: Iterable[_CompiledRule]) -> dict[str, float]:
        scores = {s: 0.0 for s in self.stages}
        for compiled in fired:
            for stage, pts in compiled.rule.points.items():
                if stage in scores:
                    scores[stage] += pts
        return scores

    def _probabilities(self, scores: Mapping[str, float]) -> tuple[dict[str, float], float]:
        t = self.settings.temperature
        logits = [scores[s] / t for s in self.stages] + [self.settings.none_score / t]
        top = max(logits)
        exps = [math.exp(x - top) for x in logits]
        total = sum(exps)
        probs = {s: exps[i] / total for i, s in enumerate(self.stages)}
        return probs, exps[-1] / total

    def _binding(self, scores: Mapping[str, float]) -> str | None:
        ranked = sorted(self.stages, key=lambda s: -scores[s])
        top, second = ranked[0], ranked[1]
        if scores[top] >= self.settings.min_score and scores[top] - scores[second] >= self.settings.min_lead:
            return top
        return None

    @staticmethod
    def _divergence(after: list[float], before: list[float]) -> float:
        """KL(after || before) in bits: how far an answer would move the belief."""
        return sum(a * math.log2(a / b) for a, b in zip(after, before) if a > 0 and b > 0)

    def _distribution(self, scores: Mapping[str, float]) -> list[float]:
        probs, none = self._probabilities(scores)
        return [*probs.values(), none]

    def candidate_values(self, signal: Signal) -> list[Any]:
        """The answers a question could get, for weighing its information."""
        if signal.presets:
            return [signal.coerce(p.value) for p in signal.presets]
        if signal.type == "choice":
            return list(signal.choices)
        if signal.type == "bool":
            return [True, False]
        return []

    def information(self, values: Mapping[str, Any], exclude: Iterable[str] = ()) -> list[NextCheck]:
        """Unanswered signals ranked by expected information gain, best first."""
        fired = self._fired(values)
        base_scores = self._scores(fired)
        base = self._distribution(base_scores)
        skip = set(values) | set(exclude)
        checks: list[NextCheck] = []
        for signal in self.signals.values():
            if signal.id in skip:
                continue
            options = self.candidate_values(signal)
            if not options:
                continue
            related = self.rules_by_signal.get(signal.id, [])
            expected = 0.0
            for option in options:
                trial = {**values, signal.id: option}
                scores = dict(base_scores)
                for compiled in related:
                    if self._fires(compiled, trial):
                        for stage, pts in compiled.rule.points.items():
                            if stage in scores:
                                scores[stage] += pts
                expected += self._divergence(self._distribution(scores), base)
            gain = expected / len(options)
            checks.append(NextCheck(signal=signal.id, title=signal.title, question=signal.question, gain=round(gain, 4)))
        checks.sort(key=lambda c: (-c.gain, c.signal))
        return checks

    def diagnose(self, raw: Mapping[str, Any], exclude: Iterable[str] = (), validated: bool = False) -> Verdict:
        """The verdict for these signal values (validated first unless told they are)."""
        values = dict(raw) if validated else self.validate(raw)
        fired = self._fired(values)
        scores = self._scores(fired)
        probs, none_prob = self._probabilities(scores)
        binding = self._binding(scores)
        ranking = sorted(
            (StageScore(stage=s, title=self.stage_titles.get(s, s), score=round(scores[s], 3),
                        probability=round(probs[s], 4)) for s in self.stages),
            key=lambda r: (-r.score, self.stages.index(r.stage)),
        )
        evidence = self._evidence(fired, values)
        checks = [c for c in self.information(values, exclude) if c.gain > 0.001][: self.settings.next_checks]
        tied = [] if binding else self._tied(scores)
        # Confidence is the probability of what is said: the stage, one of the tied stages, or "none".
        confidence = probs[binding] if binding else (sum(probs[s] for s in tied) if tied else none_prob)
        return Verdict(
            binding_stage=binding,
            binding_title=self.stage_titles.get(binding) if binding else None,
            tied=tied,
            confidence=round(confidence, 4),
            summary=self._summary(binding, ranking, evidence, checks, values),
            ranking=ranking,
            evidence=evidence,
            next_checks=checks,
            papers=self._papers(binding, evidence, ranking),
            signals=values,
        )

    def _tied(self, scores: Mapping[str, float]) -> list[str]:
        """Stages that each have enough evidence but none leads by enough."""
        ranked = sorted(self.stages, key=lambda s: -scores[s])
        top = scores[ranked[0]]
        if top < self.settings.min_score:
            return []
        return [s for s in ranked if scores[s] >= self.settings.min_score and top - scores[s] < self.settings.min_lead]

    def is_settled(self, values: Mapping[str, Any]) -> bool:
        """True once the verdict is clear enough to stop asking."""
        scores = self._scores(self._fired(values))
        binding = self._binding(scores)
        if binding is None:
            return False
        probs, _ = self._probabilities(scores)
        return probs[binding] >= self.settings.stop_confidence

    # -- explanation ----------------------------------------------------------------------
    def _evidence(self, fired: list[_CompiledRule], values: Mapping[str, Any]) -> list[Evidence]:
        out: list[Evidence] = []
        for compiled in fired:
            source = self.catalog.entries.get(compiled.rule.source)
            ref = PaperRef(id=compiled.rule.source, title=source.title if source else compiled.rule.source)
            points = dict(compiled.rule.points)
            main = max(points, key=lambda st: (abs(points[st]), points[st]))
            out.append(Evidence(
                rule=compiled.owner,
                signals={n: values[n] for n in sorted(compiled.expr.names)},
                stage=main,
                direction="for" if points[main] > 0 else "against",
                points=points,
                why=compiled.rule.why,
                source=ref,
            ))
        out.sort(key=lambda e: (-abs(e.points[e.stage]), e.rule))
        return out

    def _papers(self, binding: str | None, evidence: list[Evidence], ranking: list[StageScore]) -> list[PaperRef]:
        limit = self.settings.papers
        focus = binding or (ranking[0].stage if ranking and ranking[0].score > 0 else None)
        ids: dict[str, None] = {}
        for ev in evidence:
            if (focus is None and ev.direction == "for") or (focus is not None and ev.supports(focus)):
                ids[ev.source.id] = None
        if focus:
            for paper in self.catalog.papers_for(focus):
                ids.setdefault(paper.id, None)
        refs = []
        for pid in ids:
            entry = self.catalog.entries.get(pid)
            if entry is not None and entry.kind == "paper":
                refs.append(PaperRef(id=pid, title=entry.title))
        return refs[:limit]

    def _summary(self, binding, ranking, evidence, checks, values) -> str:
        if binding:
            title = self.stage_titles.get(binding, binding)
            n = sum(1 for e in evidence if e.supports(binding))
            return f"{title} is the binding constraint, on {n} piece{'s' if n != 1 else ''} of evidence."
        settle = ", ".join(c.signal for c in checks) or "more signals"
        if not values:
            return f"No evidence yet. Start with: {settle}."
        if all(r.score <= 0 for r in ranking):
            return (f"Nothing you reported points at a binding stage: on these signals no stage looks like the "
                    f"constraint. To be sure, check: {settle}.")
        lead, second = ranking[0], ranking[1]
        if lead.score >= self.settings.min_score and lead.score - second.score < self.settings.min_lead:
            return (f"{lead.title} and {second.title} both have strong evidence ({lead.score:g} and {second.score:g} "
                    f"points): no single stage binds; both may. These would tell them apart: {settle}.")
        points = "point" if lead.score == 1 else "points"
        return (
            f"No single stage stands out yet ({lead.title} leads with {lead.score:g} {points}, not enough). "
            f"These would settle it: {settle}."
        )
