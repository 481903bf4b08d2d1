"""Which question a guided diagnosis asks next, and when it stops.

One place decides, for the stored flow and for simulations alike:

1. Open with the complaint (what the team sees), unless the catalog lists none.
2. Complete a combination: when a known reading belongs to a combination that could
   still settle the verdict, ask the rest of that combination next.
3. Then the signals the chosen complaints list; with no complaint, the check-up
   route in its order (hub readings first, then the silent problems).
4. Among candidates, ask the one with the highest expected information gain
   weighed by its cost tier, so dashboard readings come before audits and extra
   experiments unless those are worth much more.
5. Stop when the verdict is ``stop_confidence`` sure, no unanswered question
   could explain its evidence away, and every chosen complaint is explained (the
   verdict's evidence reads one of the signals it lists) or has had its signals
   asked; or when a verdict is in hand and the last ``stop_after_unknowns``
   answers were "don't know"; or when nothing left is worth asking; or after ``max_questions``
   answered signal questions or ``max_asked`` put ("don't know" included).
6. Pause, with no verdict yet, after ``pause_after_unknowns`` "don't know"s in a row: the
   front-end shows the ``pause_checks`` questions that would tell most and stops; the session
   stays open, and answering (or resuming) goes on from the first of them.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from rlmap_bot.diagnosis.engine import Engine
from rlmap_bot.knowledge.schema import Complaint, Signal
from rlmap_bot.results.diagnosis import NextCheck, Session

COMPLAINT = "complaint"  # the opening question's id in a session (never a signal id)


class Guide:
    """The question picker and stopping rule over one engine."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.settings = engine.settings
        # The last ranking worked out, with the answers it is for: a "don't know" asks for the
        # next question and then whether to pause, both over the same answers.
        self._last: tuple[tuple[str, frozenset[str]], list[NextCheck]] | None = None

    def information(self, values: dict[str, Any], gone: set[str]) -> list[NextCheck]:
        """The engine's ranking of the checks left (never changed by callers), worked out once
        for a move's answers however many decisions read it."""
        key = (json.dumps(values, sort_keys=True, default=str), frozenset(gone))
        last = self._last  # one read: another thread may replace it meanwhile
        if last is not None and last[0] == key:
            return last[1]
        checks = self.engine.information(values, exclude=gone)
        self._last = (key, checks)
        return checks

    # -- reading a session ----------------------------------------------------------------
    def signal_answers(self, session: Session) -> dict[str, Any]:
        return {k: v for k, v in session.answers.items() if k in self.engine.signals}

    def known_answers(self, session: Session) -> dict[str, Any]:
        """Answers whose question still exists (signals in the catalog, and the complaint)."""
        return {
            k: v for k, v in session.answers.items() if k in self.engine.signals or k == COMPLAINT
        }

    def complaints(self, session: Session) -> list[Complaint]:
        chosen = session.answers.get(COMPLAINT) or []
        return [self.engine.complaints[c] for c in chosen if c in self.engine.complaints]

    @staticmethod
    def signals_asked(session: Session) -> int:
        return sum(1 for h in session.history if h != COMPLAINT)

    @staticmethod
    def signals_answered(session: Session) -> int:
        """Signal questions answered with a value ("don't know" not counted)."""
        return sum(1 for h in session.history if h != COMPLAINT and h in session.answers)

    @staticmethod
    def unknown_streak(session: Session) -> int:
        """Signal questions answered "don't know" in a row, most recent last."""
        streak = 0
        for h in reversed(session.history):
            if h == COMPLAINT or h in session.answers:
                break
            streak += 1
        return streak

    def max_questions(self, session: Session) -> int:
        """Signal questions that can be put (answered or not),
        plus the opening question when this session has one.
        """
        opened = COMPLAINT in session.history or session.current == COMPLAINT
        return self.settings.max_asked + (1 if opened else 0)

    def exhausted(self, session: Session) -> bool:
        """``max_questions`` answered, or ``max_asked`` put: a "don't know" costs a click, not a
        measurement, so a team that has numbers is asked on past a few it lacks."""
        return (
            self.signals_answered(session) >= self.settings.max_questions
            or self.signals_asked(session) >= self.settings.max_asked
        )

    def pause(self, session: Session) -> list[NextCheck]:
        """The checks that would tell most, when the flow should pause; else none.

        It pauses with no verdict in hand after ``pause_after_unknowns`` "don't know"s in a row:
        the team does not have what is asked, so the flow says what to measure instead of asking
        on. The question it would ask next comes first (resuming answers it), then the
        unasked signals of highest expected information gain.
        """
        if session.current is None or session.current == COMPLAINT:
            return []
        if self.unknown_streak(session) < self.settings.pause_after_unknowns:
            return []
        values = self.signal_answers(session)
        if self.engine.binding_of(values)[0] is not None:
            return []
        gone = set(values) | set(session.skipped) | set(session.history)
        checks = [c for c in self.information(values, gone) if c.gain > self.settings.min_gain]
        first = [c for c in checks if c.signal == session.current]
        rest = sorted((c for c in checks if c.signal != session.current), key=lambda c: -c.gain)
        return (first + rest)[: self.settings.pause_checks]

    # -- deciding -------------------------------------------------------------------------
    def first(self) -> str | None:
        if self.engine.complaints:
            return COMPLAINT
        return self.next(Session(user="-"))

    def next(self, session: Session) -> str | None:
        """The next question's id, or None when the diagnosis is done."""
        if self.exhausted(session):
            return None
        values = self.signal_answers(session)
        gone = set(values) | set(session.skipped) | set(session.history)
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
        useful = [c for c in checks if c.gain > self.settings.min_gain]
        if not useful:
            return None
        completing = self.engine.completing_signals(values, exclude=gone)
        if chosen:
            return _best(useful, completing) or _best(useful, _listed(chosen)) or useful[0].signal
        worth = {c.signal for c in useful}
        checkup = next((sid for sid in self.settings.checkup if sid in worth), None)
        return _best(useful, completing) or checkup or useful[0].signal

    def unexplained(self, values: dict[str, Any], chosen: list[Complaint]) -> list[Complaint]:
        """Chosen complaints that none of the verdict's
        supporting evidence reads a listed signal of.
        """
        read = self.engine.supporting_signals(values)
        return [c for c in chosen if not read & set(c.signals)]


def _listed(complaints: Iterable[Complaint]) -> set[str]:
    return {sid for c in complaints for sid in c.signals}


def _best(checks: list[NextCheck], among: set[str]) -> str | None:
    """The highest-priority check whose signal is in ``among`` (checks are sorted best first)."""
    return next((c.signal for c in checks if c.signal in among), None)


def parse_complaints(engine: Engine, raw: Any) -> list[str]:
    """Complaint ids from a button value, a list, or typed text ('a c', '1,3', 'stalled slow').

    An empty answer or 'none' means no complaint.  Raises ValueError naming the options
    when a part matches none of them.
    """
    options = list(engine.complaints.values())
    if isinstance(raw, (list, tuple)):
        parts = [str(p) for p in raw]
    else:
        text = str(raw or "").strip()
        whole = text.lower()
        for c in options:
            if whole in {c.id, c.label.lower()}:
                return [c.id]
        parts = [p for p in re.split(r"[,;/\s]+|\band\b", text) if p]
    chosen: list[str] = []
    for part in parts:
        word = part.strip().lower()
        if word in {"none", "nothing", "no"}:
            continue
        found = None
        if len(word) == 1 and word.isalpha():
            index = ord(word) - ord("a")
            found = options[index].id if 0 <= index < len(options) else None
        elif word.isdigit():
            index = int(word) - 1
            found = options[index].id if 0 <= index < len(options) else None
        elif word in engine.complaints:
            found = word
        if found is None:
            letters = f"a-{chr(ord('a') + len(options) - 1)}" if options else "none"
            raise ValueError(
                f"{part!r} is not one of the options: pick letters {letters}, numbers "
                f"1-{len(options)}, "
                f"or ids ({', '.join(c.id for c in options)})"
            )
        if found not in chosen:
            chosen.append(found)
    return chosen


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
