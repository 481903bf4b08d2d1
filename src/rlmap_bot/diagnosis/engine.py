"""The diagnosis engine: from what a team knows about its run to the binding stage.

Signals and their rules are catalog data (``knowledge/signals/``).  A rule adds
points to stages when its condition is known to hold; a rule may *override*
others whose reading it explains away (many passes over the pool explain a
rising proxy with a flat held-out score better than reward hacking does), and
overridden rules do not count.

A stage's score is its strongest reading in full plus ``corroboration`` times
each of its other readings, for or against.  Readings of one run overlap, so
summing them in full would let several weak, correlated readings outvote one
decisive reading; weighing the strongest fully keeps one decisive symptom
enough for a verdict, and two readings of equal strength on different stages
a named tie.  Scores become probabilities with a softmax that includes a "no
single stage" option, so weak or conflicting evidence yields no verdict rather
than a guess.  The next questions are the ones whose answers are expected to
move that distribution most (the mean Kullback-Leibler divergence of the
distribution after each preset answer from the one before), discounted by what
answering them costs.  Entropy reduction, used before, scored a moderate
reading as noise: with nothing known "none" is likeliest, and an answer that
makes one stage as likely as "none" raises the entropy, so a question whose
answer alone would give a verdict was never asked (issue 17).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from pydantic import BaseModel, Field
from rapidfuzz import process

from rlmap_bot.errors import UsageError
from rlmap_bot.knowledge.expr import UNKNOWN, Expr
from rlmap_bot.knowledge.loader import Catalog
from rlmap_bot.knowledge.schema import STAGE_IDS, Rule, Signal

_CACHE_LIMIT = 20_000


def format_value(value: Any) -> str:
    """A signal value as people write it: yes/no, 0.3, rising."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value)
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
    fact: str | None = Field(default=None, description="The source's fact the rule rests on.")
    judgement: str | None = Field(default=None, description="What the rule adds beyond that fact, and why.")
    explains_away: list[str] = Field(default_factory=list, description="Fired rules this one replaced.")

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
    gain: float = Field(description="How far an answer is expected to move the belief about the binding stage (bits).")
    cost: str = Field(default="logs", description="What answering takes: dashboard, logs, audit or experiment.")
    priority: float = Field(default=0.0, description="Gain weighed by cost; the order in which to ask.")


class Verdict(BaseModel):
    """What the engine concludes; ``binding_stage`` is None when nothing is singled out."""

    binding_stage: str | None
    binding_title: str | None = None
    tied: list[str] = Field(default_factory=list, description="Stages with strong, near-equal evidence when none binds alone.")
    confidence: float
    one_measurement: bool = Field(default=False, description=(
        "The verdict rests on one reading (one measurement, or the one comparison a mechanism is defined "
        "by), below the firm bar: a second reading of the same stage would confirm it."))
    summary: str
    ranking: list[StageScore]
    evidence: list[Evidence]
    next_checks: list[NextCheck]
    papers: list[PaperRef]
    signals: dict[str, Any] = Field(default_factory=dict)


@dataclass
class _CompiledRule:
    index: int
    key: str  # "signal.rule"
    rule: Rule
    expr: Expr
    names: tuple[str, ...]
    overrides: frozenset[str]
    cache: dict = field(default_factory=dict)

    def holds(self, values: Mapping[str, Any]) -> bool:
        """Whether the condition is known to hold; memoised on the values it reads."""
        key = tuple(values.get(n, UNKNOWN) for n in self.names)
        hit = self.cache.get(key)
        if hit is None:
            if len(self.cache) > _CACHE_LIMIT:
                self.cache.clear()
            hit = self.cache[key] = self.expr.holds(values)
        return hit


class Engine:
    """Scores stages from signal values using the catalog's signals and rules."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.settings = catalog.settings.diagnosis
        self.signals: dict[str, Signal] = {s.id: s for s in catalog.signals}
        self.stage_titles = {s.id: s.title for s in catalog.stages}
        self.stages = [s for s in STAGE_IDS if s in self.stage_titles] or list(STAGE_IDS)
        self.complaints = {c.id: c for c in self.settings.complaints}
        self.rules: list[_CompiledRule] = []
        self.rules_by_signal: dict[str, list[_CompiledRule]] = {}
        # Precedence (catalog settings) works as an override: the reading that comes first explains the rest.
        follows: dict[str, set[str]] = {}
        for order in self.settings.precedence:
            for ref in order.explains:
                signal_rules = self.signals[ref].rules if ref in self.signals else []
                follows.setdefault(order.first, set()).update(
                    [f"{ref}.{r.id}" for r in signal_rules if any(p > 0 for p in r.points.values())]
                    if "." not in ref else [ref])
        for signal in self.signals.values():
            for rule in signal.rules:
                refs = frozenset({r if "." in r else f"{signal.id}.{r}" for r in rule.overrides}
                                 | follows.get(f"{signal.id}.{rule.id}", set()))
                expr = rule.expr
                compiled = _CompiledRule(len(self.rules), f"{signal.id}.{rule.id}", rule, expr,
                                         tuple(sorted(expr.names)), refs)
                self.rules.append(compiled)
                for name in expr.names:
                    self.rules_by_signal.setdefault(name, []).append(compiled)
        self._candidates = {sid: self.candidate_values(s) for sid, s in self.signals.items()}
        self._chances: dict[tuple, float] = {}
        self._uncertainties: dict[frozenset, float] = {}
        self._dists: dict[frozenset, list[float]] = {}
        # Per signal, the other signals its rules read: what a trial answer's outcome depends on.
        self._context = {sid: tuple(sorted({n for c in rules for n in c.names} - {sid}))
                         for sid, rules in self.rules_by_signal.items()}
        self._trials: dict[tuple, tuple[_CompiledRule, ...]] = {}

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
    def _fired(self, values: Mapping[str, Any], rules: Iterable[_CompiledRule] | None = None) -> list[_CompiledRule]:
        return [c for c in (self.rules if rules is None else rules) if c.holds(values)]

    @staticmethod
    def _kept(fired: list[_CompiledRule]) -> list[_CompiledRule]:
        """The fired rules that no other fired rule explains away."""
        dropped = set().union(*(c.overrides for c in fired)) if fired else set()
        return [c for c in fired if c.key not in dropped] if dropped else fired

    def _scores(self, kept: Iterable[_CompiledRule]) -> dict[str, float]:
        """Strongest reading in full, the others at the corroboration weight (see the module doc)."""
        readings: dict[str, list[float]] = {s: [] for s in self.stages}
        for compiled in kept:
            for target, points in compiled.rule.points.items():
                if target in readings:
                    readings[target].append(points)
        k = self.settings.corroboration
        scores: dict[str, float] = {}
        for stage, pts in readings.items():
            if not pts:
                scores[stage] = 0.0
                continue
            top = max(pts) if max(pts) > 0 else min(pts)
            scores[stage] = top + k * (sum(pts) - top)
        return scores

    def _evaluate(self, values: Mapping[str, Any]) -> tuple[list[_CompiledRule], list[_CompiledRule], dict[str, float]]:
        fired = self._fired(values)
        kept = self._kept(fired)
        return fired, kept, self._scores(kept)

    def _trial_fired(self, fired: list[_CompiledRule], values: Mapping[str, Any], changed: str) -> list[_CompiledRule]:
        """The fired rules after ``values`` changed in one signal, re-evaluating only the rules that read it."""
        touching = self.rules_by_signal.get(changed, [])
        if not touching:
            return fired
        key = (changed, values.get(changed, UNKNOWN), tuple(values.get(n, UNKNOWN) for n in self._context[changed]))
        now = self._trials.get(key)
        if now is None:
            if len(self._trials) > _CACHE_LIMIT:
                self._trials.clear()
            now = self._trials[key] = tuple(c for c in touching if c.holds(values))
        ids = {c.index for c in touching}
        return [c for c in fired if c.index not in ids] + list(now)

    def _trial_scores(self, fired: list[_CompiledRule], values: Mapping[str, Any], changed: str) -> dict[str, float]:
        return self._scores(self._kept(self._trial_fired(fired, values, changed)))

    def _dist(self, fired: list[_CompiledRule]) -> list[float]:
        """The verdict distribution for a set of fired rules; memoised on the set."""
        key = frozenset(c.index for c in fired)
        hit = self._dists.get(key)
        if hit is None:
            if len(self._dists) > _CACHE_LIMIT:
                self._dists.clear()
            hit = self._dists[key] = self._distribution(self._scores(self._kept(fired)))
        return hit

    @staticmethod
    def _surprise(after: list[float], before: list[float]) -> float:
        """How far an answer moves the verdict distribution: KL(after || before), in bits."""
        return sum(p * math.log2(p / q) for p, q in zip(after, before, strict=True) if p > 0 and q > 0)

    def _uncertainty(self, fired: list[_CompiledRule]) -> float:
        """Entropy of the verdict distribution for a set of fired rules; memoised on the set."""
        key = frozenset(c.index for c in fired)
        hit = self._uncertainties.get(key)
        if hit is None:
            if len(self._uncertainties) > _CACHE_LIMIT:
                self._uncertainties.clear()
            hit = self._uncertainties[key] = self._entropy(self._distribution(self._scores(self._kept(fired))))
        return hit

    def _probabilities(self, scores: Mapping[str, float]) -> tuple[dict[str, float], float]:
        t = self.settings.temperature
        logits = [scores[s] / t for s in self.stages] + [self.settings.none_score / t]
        top = max(logits)
        exps = [math.exp(x - top) for x in logits]
        total = sum(exps)
        probs = {s: exps[i] / total for i, s in enumerate(self.stages)}
        return probs, exps[-1] / total

    def _binding(self, scores: Mapping[str, float], values: Mapping[str, Any],
                 kept: list[_CompiledRule]) -> str | None:
        """The stage that binds, or None.

        It needs a ``min_lead`` over the runner-up, and either ``min_score`` (a firm verdict) or,
        below that, ``tentative_score`` while its reading could still be confirmed (a verdict
        that rests on one measurement, see :meth:`_confirmable`).
        """
        ranked = sorted(self.stages, key=lambda s: -scores[s])
        top, second = ranked[0], ranked[1]
        if scores[top] - scores[second] < self.settings.min_lead:
            return None
        if scores[top] >= self.settings.min_score:
            return top
        if scores[top] >= self.settings.tentative_score and self._confirmable(top, values, kept):
            return top
        return None

    def _confirmable(self, stage: str, values: Mapping[str, Any], kept: list[_CompiledRule]) -> bool:
        """Whether a moderate reading of ``stage`` still stands alone rather than unconfirmed.

        A strong reading stands (readings against other mechanisms of the stage may pull its
        score under ``min_score``, not explain it).  A moderate reading needs a second one to be firm.  While the readings that would confirm
        it (rules giving ``stage`` at least ``min_score`` that read the same signals) are
        unknown, the one measurement is the best the evidence says; once they are known and
        none confirmed it, it was checked and found wanting, and the verdict abstains.
        """
        def points(c: _CompiledRule) -> float:
            return next((p for s, p in c.rule.points.items() if s == stage), 0.0)

        if max((points(c) for c in kept), default=0.0) >= self.settings.min_score:
            return True  # a strong reading, only weighed down by healthy readings of other mechanisms
        backing = {n for c in kept if points(c) > 0 for n in c.names}
        held = {c.index for c in kept}
        stronger = [c for c in self.rules if c.index not in held and backing & set(c.names)
                    and points(c) >= self.settings.min_score]
        for compiled in stronger:
            unknown = [n for n in compiled.names if n not in values]
            if unknown and not compiled.expr.contradicted(values) and self._chance(compiled, values, unknown) > 0:
                return True
        return not stronger

    @staticmethod
    def _entropy(dist: list[float]) -> float:
        """Uncertainty, in bits, about which stage binds (or none)."""
        return -sum(p * math.log2(p) for p in dist if p > 0)

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
        """Unanswered signals ranked by expected information gain weighed by cost, best first.

        A signal's gain is how far its answer is expected to move the belief about which stage
        binds (KL divergence, bits), averaged over its preset answers, plus what the
        combination rules it takes part in could reduce once their other unknown signals are
        asked too, per question (see :meth:`_combination_gain`); without the second, a signal
        that only matters in a combination (an eval gain next to the seed spread) would never
        be asked.
        """
        fired = self._fired(values)
        base = self._uncertainty(fired)
        before = self._dist(fired)
        skip = set(values) | set(exclude)
        weights = self.settings.cost_weights
        combos = self._combination_gain(values, fired, base, skip)
        checks: list[NextCheck] = []
        for signal in self.signals.values():
            if signal.id in skip:
                continue
            options = self._candidates[signal.id]
            if not options:
                continue
            moved = 0.0
            for option in options:
                trial = {**values, signal.id: option}
                moved += self._surprise(self._dist(self._trial_fired(fired, trial, signal.id)), before)
            gain = moved / len(options) + combos.get(signal.id, 0.0)
            priority = gain * weights.get(signal.cost, 1.0)
            checks.append(NextCheck(signal=signal.id, title=signal.title, question=signal.question,
                                    gain=round(gain, 4), cost=signal.cost, priority=round(priority, 4)))
        checks.sort(key=lambda c: (-c.priority, -c.gain, c.signal))
        return checks

    def _combination_gain(self, values: Mapping[str, Any], fired: list[_CompiledRule], base: float,
                          skip: set[str]) -> dict[str, float]:
        """Per unknown signal, the uncertainty the combination rules it takes part in could remove, per question.

        For a rule that reads several unknown signals (none of them skipped), the chance it
        fires is counted over the candidate answers of all of them; its value is that chance
        times the entropy its firing removes, divided by the number of questions it needs, and
        a signal's value is the sum over its rules.
        """
        out: dict[str, float] = {}
        fired_ids = {c.index for c in fired}
        for compiled in self.rules:
            if compiled.index in fired_ids:
                continue
            unknown = [n for n in compiled.names if n not in values]
            if len(unknown) < 2 or any(n in skip for n in unknown):
                continue
            chance = self._chance(compiled, values, unknown)
            if chance <= 0:
                continue
            shifted = self._uncertainty([*fired, compiled])
            value = chance * (base - shifted) / len(unknown)
            if value <= 0:
                continue
            for name in unknown:
                out[name] = out.get(name, 0.0) + value
        return out

    def _chance(self, compiled: _CompiledRule, values: Mapping[str, Any], unknown: list[str]) -> float:
        """The share of the unknown names' candidate answer combinations for which the rule holds."""
        key = (compiled.index, tuple(values.get(n, UNKNOWN) for n in compiled.names))
        hit = self._chances.get(key)
        if hit is not None:
            return hit
        combos = [dict(values)]
        for name in unknown:
            options = self._candidates.get(name) or []
            if not options:
                combos = []
                break
            combos = [{**c, name: o} for c in combos for o in options]
        chance = sum(1 for c in combos if compiled.holds(c)) / len(combos) if combos else 0.0
        if len(self._chances) > _CACHE_LIMIT:
            self._chances.clear()
        self._chances[key] = chance
        return chance

    def threads(self, values: Mapping[str, Any], exclude: Iterable[str] = ()) -> set[str]:
        """Unknown signals that would complete a combination the known readings have begun.

        A rule strong enough to settle a verdict on its own (points reaching ``min_score``)
        that has not fired, reads a known signal, and none of whose conditions on the known
        readings is false: its unknown signals are the thread to follow.  Rules reading a
        skipped signal cannot complete and are left.
        """
        skip = set(exclude)
        found: set[str] = set()
        fired = {c.index for c in self._fired(values)}
        for compiled in self.rules:
            if compiled.index in fired or max(compiled.rule.points.values()) < self.settings.min_score:
                continue
            unknown = [n for n in compiled.names if n not in values]
            if len(unknown) == len(compiled.names) or not unknown or any(n in skip for n in unknown):
                continue
            if not compiled.expr.contradicted(values) and self._chance(compiled, values, unknown) > 0:
                found.update(unknown)
        return found

    def threats(self, values: Mapping[str, Any], candidates: Iterable[str]) -> list[str]:
        """Unanswered signals one answer of which would explain the current verdict's own evidence away.

        A rival stage gaining evidence is a second bottleneck, not a threat; a threat is an
        answer that weakens the binding stage's evidence (an override or a reading against it)
        until it no longer binds.  The guided flow does not stop while one remains.
        """
        return self._threats(values, candidates, self._evaluate(values))

    def _threats(self, values: Mapping[str, Any], candidates: Iterable[str],
                 evaluated: tuple[list[_CompiledRule], list[_CompiledRule], dict[str, float]]) -> list[str]:
        """:meth:`threats`, given :meth:`_evaluate`'s result for ``values`` (a verdict has it already)."""
        fired, kept, scores = evaluated
        leader = self._binding(scores, values, kept)
        if leader is None:
            return []
        found = []
        for sid in candidates:
            if sid in values:
                continue
            for option in self._candidates.get(sid, []):
                trial_values = {**values, sid: option}
                trial_kept = self._kept(self._trial_fired(fired, trial_values, sid))
                trial = self._scores(trial_kept)
                if trial[leader] < scores[leader] and self._binding(trial, trial_values, trial_kept) != leader:
                    found.append(sid)
                    break
        return found

    def diagnose(self, raw: Mapping[str, Any], exclude: Iterable[str] = (), validated: bool = False) -> Verdict:
        """The verdict for these signal values (validated first unless told they are)."""
        values = dict(raw) if validated else self.validate(raw)
        fired, kept, scores = self._evaluate(values)
        probs, none_prob = self._probabilities(scores)
        binding = self._binding(scores, values, kept)
        ranking = sorted(
            (StageScore(stage=s, title=self.stage_titles.get(s, s), score=round(scores[s], 3),
                        probability=round(probs[s], 4)) for s in self.stages),
            key=lambda r: (-r.score, self.stages.index(r.stage)),
        )
        evidence = self._evidence(fired, kept, values)
        ranked = [c for c in self.information(values, exclude) if c.gain > self.settings.min_gain]
        tied = [] if binding else self._tied(scores)
        backing = [e for e in evidence if binding and e.supports(binding)]
        one = binding is not None and scores[binding] < self.settings.min_score and len(backing) == 1
        confirming = self._confirming(values, ranked, exclude) if one else []
        # A verdict on one measurement says which checks would confirm it: "Check next" starts with those.
        ranked = [c for c in ranked if c.signal in confirming] + [c for c in ranked if c.signal not in confirming]
        if binding is not None and not one:
            ranked = self._about_the_verdict(binding, values, ranked, (fired, kept, scores))
        checks = ranked[: self.settings.next_checks]
        # Confidence is the probability of what is said: the stage, one of the tied stages, or "none".
        confidence = probs[binding] if binding else (sum(probs[s] for s in tied) if tied else none_prob)
        return Verdict(
            binding_stage=binding,
            binding_title=self.stage_titles.get(binding) if binding else None,
            tied=tied,
            confidence=round(confidence, 4),
            one_measurement=one,
            summary=self._summary(binding, ranking, evidence, checks, values, one, confirming),
            ranking=ranking,
            evidence=evidence,
            next_checks=checks,
            papers=self._papers(binding, tied, evidence),
            signals=values,
        )

    def _about_the_verdict(self, binding: str, values: Mapping[str, Any], ranked: list[NextCheck],
                           evaluated: tuple[list[_CompiledRule], list[_CompiledRule], dict[str, float]]) -> list[NextCheck]:
        """A firm verdict's checks: first what could explain its evidence away (:meth:`threats`), then
        what bears on its stage (a rule of the signal moves it), then the rest, each by priority.

        Ranked by information alone, the same few silent problems (a log-prob mismatch, contamination,
        a saturated benchmark: each decisive for another stage) led every verdict's list; a team that
        has a verdict wants first what would confirm or overturn it (a newcomer pass, 2026-12-03).
        """
        signals = [c.signal for c in ranked]
        threats = set(self._threats(values, signals, evaluated))
        bearing = {c.signal for c in ranked
                   if any(binding in r.rule.points for r in self.rules_by_signal.get(c.signal, ()))}
        return ([c for c in ranked if c.signal in threats] + [c for c in ranked if c.signal in bearing - threats]
                + [c for c in ranked if c.signal not in threats | bearing])

    def _tied(self, scores: Mapping[str, float]) -> list[str]:
        """Stages that each have enough evidence but none leads by enough."""
        ranked = sorted(self.stages, key=lambda s: -scores[s])
        top = scores[ranked[0]]
        if top < self.settings.min_score:
            return []
        return [s for s in ranked if scores[s] >= self.settings.min_score and top - scores[s] < self.settings.min_lead]

    def binding_of(self, values: Mapping[str, Any]) -> tuple[str | None, float]:
        """The binding stage (or None) and its probability, without building a whole verdict."""
        _, kept, scores = self._evaluate(values)
        binding = self._binding(scores, values, kept)
        if binding is None:
            return None, 0.0
        probs, _ = self._probabilities(scores)
        return binding, probs[binding]

    def supporting_signals(self, values: Mapping[str, Any]) -> set[str]:
        """The signals read by the kept readings that support the binding stage (none when none binds):
        a verdict's supporting evidence, without building the verdict."""
        _, kept, scores = self._evaluate(values)
        binding = self._binding(scores, values, kept)
        if binding is None:
            return set()
        backing = [c for c in kept if any(s == binding and p > 0 for s, p in c.rule.points.items())]
        return {n for c in backing for n in c.names if n in values}

    def is_settled(self, values: Mapping[str, Any]) -> bool:
        """True once the verdict is clear enough to stop asking (before threats and complaints)."""
        binding, probability = self.binding_of(values)
        return binding is not None and probability >= self.settings.stop_confidence

    # -- explanation ----------------------------------------------------------------------
    def _evidence(self, fired: list[_CompiledRule], kept: list[_CompiledRule], values: Mapping[str, Any]) -> list[Evidence]:
        fired_keys = {c.key for c in fired}
        out: list[Evidence] = []
        for compiled in kept:
            rule = compiled.rule
            source = self.catalog.entries.get(rule.source)
            ref = PaperRef(id=rule.source, title=source.title if source else rule.source)
            facts = getattr(source, "facts", []) if source else []
            fact = facts[rule.fact] if rule.fact is not None and rule.fact < len(facts) else None
            points = dict(rule.points)
            main = max(points, key=lambda st: (abs(points[st]), points[st]))
            out.append(Evidence(
                rule=compiled.key,
                signals={n: values[n] for n in compiled.names if n in values},
                stage=main,
                direction="for" if points[main] > 0 else "against",
                points=points,
                why=rule.why,
                source=ref,
                fact=fact,
                judgement=rule.judgement,
                explains_away=sorted(compiled.overrides & fired_keys),
            ))
        out.sort(key=lambda e: (-abs(e.points[e.stage]), e.rule))
        return out

    def _papers(self, binding: str | None, tied: list[str], evidence: list[Evidence]) -> list[PaperRef]:
        """The sources of the evidence behind what is said, heaviest evidence first.

        For a verdict, the rules supporting the binding stage; for a tie, those supporting the
        tied stages; otherwise every reading that points at a stage.  A paper's weight is the
        sum of the points its rules give those stages, so the reading list follows the
        evidence rather than padding with every paper on a stage.
        """
        focus = [binding] if binding else (tied or list(self.stages))
        weight: dict[str, float] = {}
        titles: dict[str, str] = {}
        for ev in evidence:
            backing = sum(ev.points.get(s, 0.0) for s in focus if ev.points.get(s, 0.0) > 0)
            if backing <= 0:
                continue
            entry = self.catalog.entries.get(ev.source.id)
            if entry is None or entry.kind != "paper":
                continue
            weight[ev.source.id] = weight.get(ev.source.id, 0.0) + backing
            titles[ev.source.id] = entry.title
        ranked = sorted(weight, key=lambda pid: (-weight[pid], pid))
        return [PaperRef(id=pid, title=titles[pid]) for pid in ranked[: self.settings.papers]]

    def _confirming(self, values: Mapping[str, Any], ranked: list[NextCheck], exclude: Iterable[str]) -> list[str]:
        """For a verdict on one measurement: the unknown signals that would complete a decisive
        combination with it, best first (the threads), else the best next checks."""
        threads = self.threads(values, exclude=exclude)
        found = [c.signal for c in ranked if c.signal in threads] or [c.signal for c in ranked]
        return found[: self.settings.next_checks]

    def _summary(self, binding, ranking, evidence, checks, values, one: bool = False,
                 confirming: list[str] | None = None) -> str:
        if binding:
            title = self.stage_titles.get(binding, binding)
            n = sum(1 for e in evidence if e.supports(binding))
            if one:
                confirm = ", ".join(confirming or []) or "a second reading of that stage"
                return (f"{title} is the likeliest binding constraint, but the verdict rests on one measurement; "
                        f"to confirm it, check: {confirm}.")
            return f"{title} is the binding constraint, on {n} piece{'s' if n != 1 else ''} of evidence."
        settle = ", ".join(c.signal for c in checks) or "more signals"
        if not values:
            return f"No evidence yet. Start with: {settle}."
        if all(r.score <= 0 for r in ranking):
            return (f"The answers so far point at no stage: on these signals no stage looks like the "
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
