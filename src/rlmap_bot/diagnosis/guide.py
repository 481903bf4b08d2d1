"""Which question a guided diagnosis asks next, and when it stops.

One place decides, for the stored flow and for simulations alike:

1. Open with the complaint (what the team sees), unless the catalog lists none.
2. Complete a combination: when a known reading belongs to a combination that could
   still settle the verdict, ask the rest of that combination next.
3. Then the signals the chosen complaints list; with no complaint (or once they are
   asked), the unanswered signal of highest expected information gain over all stages,
   weighed by its cost tier, so the readings that decide a stage on their own come
   first and dashboard readings come before audits and extra experiments unless
   those are worth much more.
4. Stop when the verdict is ``stop_confidence`` sure, no unanswered question
   could explain its evidence away, and every chosen complaint is explained (the
   verdict's evidence reads one of the signals it lists) or has had its signals
   asked; or when a verdict is in hand and the last ``stop_after_unknowns``
   answers were "don't know"; or with "nothing binds" once "no single stage" is
   ``stop_confidence`` likely (readings against most stages, none for any); or when
   nothing left is worth asking; or after ``max_asked`` questions put, the opening
   one and "don't know"s included.
5. Pause, with no verdict yet, once the team has said "don't know" ``pause_after_unknowns``
   times: the front-end shows the ``pause_checks`` questions that would tell most, and the
   question left open asks which of the readings still unasked the team can give (every one
   worth asking, best first); from then on only those picked are asked, and "none of these"
   ends the diagnosis. The session stays open, so a team can measure one and come back.
   Past that list, ``pause_after_unknowns`` "don't know"s in a row to the readings picked
   pause it again, the question it would ask next first among the checks.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from rlmap_bot.diagnosis.engine import Engine
from rlmap_bot.diagnosis.rules import OneOf, known
from rlmap_bot.diagnosis.said import offered, stated
from rlmap_bot.knowledge.schema import Preset, Signal
from rlmap_bot.knowledge.settings import Complaint
from rlmap_bot.results.diagnosis import NextCheck, Session

COMPLAINT = "complaint"  # the opening question's id in a session (never a signal id)
READINGS = "readings"  # the id of "which of these can you read?" at a pause (never a signal id)
PICKS = (COMPLAINT, READINGS)  # the questions answered by picking several of a list


class Guide:
    """The question picker and stopping rule over one engine."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.settings = engine.settings
        # The last rankings worked out, by the answers they are for: a "don't know" asks for the
        # next question and then whether to pause, both over the same answers, and a pause ranks
        # over all stages and over those a complaint leaves open (so two are kept).
        self._last: dict[tuple[str, frozenset[str], frozenset[int] | None], list[NextCheck]] = {}

    def information(
        self, values: dict[str, Any], gone: set[str], among: frozenset[int] | None = None
    ) -> list[NextCheck]:
        """The engine's ranking of the checks left (never changed by callers), worked out once
        for a move's answers however many decisions read it."""
        key = (json.dumps(values, sort_keys=True, default=_json), frozenset(gone), among)
        last = self._last  # one read: another thread may replace it meanwhile
        if key in last:
            return last[key]
        checks = self.engine.information(values, exclude=gone, among=among)
        kept = [(k, v) for k, v in last.items() if k[0] == key[0]][-1:]
        self._last = dict([*kept, (key, checks)])  # replaced whole, never changed in place
        return checks

    # -- reading a session ----------------------------------------------------------------
    def signal_answers(self, session: Session) -> dict[str, Any]:
        """The signal values the session knows: what the chosen complaints say (:meth:`said`),
        then every answer given, which wins over what a complaint said of the same signal."""
        given = {k: v for k, v in session.answers.items() if k in self.engine.signals}
        return {**self.said(session), **given}

    def said(self, session: Session) -> dict[str, Any]:
        """What the chosen complaints state, as answers (:func:`~rlmap_bot.diagnosis.said.stated`).
        Worked out from the complaint answer each time, so going back to the opening question,
        or a catalog reload that changes a complaint, takes it back with it."""
        return stated(self.complaints(session), self.engine.signals)

    def presets(self, session: Session, signal_id: str) -> list[Preset]:
        """The presets a signal's question offers: those a complaint's narrowing leaves."""
        signal = self.engine.signals.get(signal_id)
        if signal is None:
            return []
        return offered(signal, self.signal_answers(session).get(signal_id))

    def gone(self, session: Session, values: dict[str, Any]) -> set[str]:
        """Signals not to ask: answered (a narrowed one is still asked), skipped or put already."""
        return {k for k in values if known(values, k)} | set(session.skipped) | set(session.history)

    def known_answers(self, session: Session) -> dict[str, Any]:
        """Answers whose question still exists (signals in the catalog, and the complaint)."""
        return {k: v for k, v in session.answers.items() if k in self.engine.signals or k in PICKS}

    def complaints(self, session: Session) -> list[Complaint]:
        chosen = session.answers.get(COMPLAINT) or []
        return [self.engine.complaints[c] for c in chosen if c in self.engine.complaints]

    @staticmethod
    def unknown_streak(session: Session) -> int:
        """Signal questions answered "don't know" in a row, most recent last."""
        streak = 0
        for h in reversed(session.history):
            if h in PICKS or h in session.answers:
                break
            streak += 1
        return streak

    @staticmethod
    def unknowns(session: Session) -> int:
        """Signal questions answered "don't know" so far."""
        return sum(1 for h in session.history if h not in PICKS and h not in session.answers)

    def max_questions(self, session: Session) -> int:
        """Questions this session can put in all, the opening one included."""
        return self.settings.max_asked

    def exhausted(self, session: Session) -> bool:
        """``max_asked`` questions put, answered or not, the opening one included."""
        return len(session.history) >= self.settings.max_asked

    def pause(self, session: Session) -> list[NextCheck]:
        """The checks that would tell most, when the flow should pause; else none.

        It pauses with no verdict in hand after ``pause_after_unknowns`` "don't know"s in a row:
        the team does not have what is asked, so the flow says what to measure instead of asking
        on. The question it would ask next comes first (resuming answers it), then the
        unasked signals of highest expected information gain.
        """
        if session.current is None or session.current == COMPLAINT:
            return []
        if session.current == READINGS:
            return self.pause_offer(session)[: self.settings.pause_checks]
        if self.unknown_streak(session) < self.settings.pause_after_unknowns:
            return []
        values = self.signal_answers(session)
        if self.engine.binding_of(values)[0] is not None:
            return []
        checks = self.pause_offer(session)
        first = [c for c in checks if c.signal == session.current]
        rest = [c for c in checks if c.signal != session.current]
        return (first + rest)[: self.settings.pause_checks]

    def readings(self, session: Session) -> list[NextCheck]:
        """The readings offered at a pause ("which of these can you read?"): every unasked signal
        worth asking, at most ``readings_listed``: those that best separate what the complaints
        leave open first (:meth:`telling`), then the rest by priority."""
        separating, rest = self.telling(session)
        return (separating + rest)[: self.settings.readings_listed]

    def pause_offer(self, session: Session) -> list[NextCheck]:
        """The unasked signals a pause names as what to measure, best first (:meth:`telling`)."""
        separating, rest = self.telling(session)
        return separating + sorted(rest, key=lambda c: -c.gain)

    def telling(self, session: Session) -> tuple[list[NextCheck], list[NextCheck]]:
        """The unasked signals worth asking, in two parts: those that best separate the stages
        the chosen complaints leave open (best first), and the rest (by priority).

        The first part ranks by expected information gain over the verdict distribution that
        only the readings bearing on the complaints give (the rules reading a signal they list,
        which is what "explained" means for a complaint), given every answer so far, the
        complaints' own statements included; a stage none of those rules can still point at
        stays where it is whatever the answer, so it is the stages left open that are
        separated. Expected information rather than a discrimination score between the two
        leading stages: after a complaint and a few "don't know"s there is seldom a leader yet,
        and the same KL measure that orders the questions (:mod:`~rlmap_bot.diagnosis.questions`)
        also credits a reading that would settle one explanation outright or rule the leading
        one out. A reading no such rule reads (a diverged loss, after "the eval does not rise")
        moves that distribution not at all, however decisive it is for something else, so it
        comes in the second part, ranked over all stages as with no complaint.
        """
        values = self.signal_answers(session)
        gone = self.gone(session, values)
        floor = self.settings.min_gain
        general = [c for c in self.information(values, gone) if c.gain > floor]
        chosen = self.complaints(session)
        if not chosen:
            return [], general
        among = self.engine.bearing_on(_listed(chosen))
        separating = sorted(
            (c for c in self.information(values, gone, among) if c.gain > floor),
            key=lambda c: -c.gain,
        )
        first = {c.signal for c in separating}
        return separating, [c for c in general if c.signal not in first]

    # -- deciding -------------------------------------------------------------------------
    def first(self) -> str | None:
        if self.engine.complaints:
            return COMPLAINT
        return self.next(Session(user="-"))

    def next(self, session: Session) -> str | None:
        """The next question's id, or None when the diagnosis is done."""
        if self.exhausted(session) or READINGS in session.skipped:
            return None  # the bound, or "none of these" to the readings offered at a pause
        values = self.signal_answers(session)
        gone = self.gone(session, values)
        have = session.answers.get(READINGS)
        if have is not None:  # the team said which readings it has: only those are asked
            gone |= set(self.engine.signals) - set(have)
        checks = self.information(values, gone)
        chosen = self.complaints(session)
        binding, probability = self.engine.binding_of(values)
        if (
            binding is not None
            and self.unknown_streak(session) >= self.settings.stop_after_unknowns
            and not self.unexplained(values, chosen)
        ):
            return None  # a verdict in hand, and the team no longer knows what is asked
        if binding is not None and probability >= self.settings.stop_confidence:
            # Sure enough, unless an answer could explain the
            # evidence away or a complaint is unexplained;
            # such questions are asked whatever their expected gain.
            threats = set(self.engine.threats(values, [c.signal for c in checks]))
            if threats:
                return _best(checks, threats)
            return _best(checks, _listed(self.unexplained(values, chosen)))
        if binding is None and self.nothing_binds(values, [c.signal for c in checks], have):
            return None
        useful = [c for c in checks if c.gain > self.settings.min_gain]
        if not useful:
            return None
        if (
            have is None
            and binding is None
            and self.unknowns(session) >= self.settings.pause_after_unknowns
        ):
            return READINGS  # the pause: ask which readings the team has instead of each in turn
        completing = self.engine.completing_signals(values, exclude=gone)
        if chosen:
            return _best(useful, completing) or _best(useful, _listed(chosen)) or useful[0].signal
        return _best(useful, completing) or useful[0].signal

    def nothing_binds(
        self, values: dict[str, Any], left: list[str], have: list[str] | None
    ) -> bool:
        """Whether the answers say, as surely as a verdict needs (``stop_confidence``), that no
        single stage binds (readings against most stages and none for any); and, once the team
        has said which readings it has (``have``), that no answer to one of those still ``left``
        would make a stage bind."""
        if self.engine.none_probability(values) < self.settings.stop_confidence:
            return False
        if have is None:
            return True
        return not any(
            self.engine.binding_of({**values, sid: option})[0] is not None
            for sid in left
            for option in self.engine.rules.options(sid, values.get(sid))
        )

    def unexplained(self, values: dict[str, Any], chosen: list[Complaint]) -> list[Complaint]:
        """Chosen complaints that none of the verdict's
        supporting evidence reads a listed signal of.
        """
        read = self.engine.supporting_signals(values)
        return [c for c in chosen if not read & set(c.signals)]


def _json(value: Any) -> Any:
    """How a ranking's memo key writes a narrowed value (a set has no JSON form)."""
    return list(value.order) if isinstance(value, OneOf) else str(value)


def _listed(complaints: Iterable[Complaint]) -> set[str]:
    return {sid for c in complaints for sid in c.signals}


def _best(checks: list[NextCheck], among: set[str]) -> str | None:
    """The highest-priority check whose signal is in ``among`` (checks are sorted best first)."""
    return next((c.signal for c in checks if c.signal in among), None)


def answer_hint(signal: Signal | None) -> str:
    """How to type an answer, as people write it."""
    if signal is None:
        return (
            "pick any that apply: letters like 'a c', numbers like '1,3', or ids; '?' if none fits"
        )
    if signal.type == "bool":
        return "yes or no (y/n)"
    if signal.type == "choice":
        return "one of: " + ", ".join(signal.choices)
    if signal.type == "fraction":
        return "a share like 40% or 0.4"
    example = _example(signal)
    if signal.unit == "x":
        return f"a ratio like {example}x"
    if signal.type == "integer":
        return f"a whole number like {example}"
    if signal.unit:
        return f"a number of {signal.unit}, like {example}"
    return f"a number like {example}"


def _example(signal: Signal) -> str:
    numbers = [
        p.value
        for p in signal.presets
        if isinstance(p.value, (int, float)) and not isinstance(p.value, bool)
    ]
    value = numbers[len(numbers) // 2] if numbers else 1
    return f"{value:g}" if isinstance(value, float) else str(value)
