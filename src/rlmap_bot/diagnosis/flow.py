"""The guided diagnosis as a state machine over stored sessions.

Every front-end (terminal, Slack thread) drives the same calls: start, answer,
skip, back, stop.  Each returns a :class:`Step`: the next question, or the
verdict.  Sessions are saved after every move, so a restart loses nothing and
any process that shares the state store can continue a diagnosis.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any, Callable

from pydantic import BaseModel, Field

from rlmap_bot.errors import UsageError
from rlmap_bot.diagnosis.engine import DiagnosisInputError, Engine, Verdict
from rlmap_bot.state.models import Session
from rlmap_bot.state.store import ConflictError, StateStore, utcnow

EngineSource = Callable[[], Engine]

DEFAULT_TTL = dt.timedelta(hours=72)
# Words a person types instead of an answer, in the terminal or in a Slack thread.
CONTROL_WORDS = {"?": "skip", "": "skip", "skip": "skip", "dk": "skip", "don't know": "skip", "dont know": "skip",
                 "back": "back", "<": "back", "undo": "back", "stop": "stop", "verdict": "stop", "quit": "stop",
                 "help": "help", "how": "help", "explain": "help"}


def control_word(text: str) -> str | None:
    """'skip', 'back', 'stop' or 'help' when ``text`` is one of the control words, else None."""
    return CONTROL_WORDS.get(text.strip().lower())


class FlowError(UsageError):
    """A move that does not apply (finished session, stale button, bad answer)."""


class PresetView(BaseModel):
    label: str
    value: Any


class Question(BaseModel):
    """What to ask next, with everything a front-end needs to render it."""

    signal: str
    title: str
    text: str
    type: str
    unit: str | None = None
    choices: list[str] = Field(default_factory=list)
    presets: list[PresetView] = Field(default_factory=list)
    how_to_measure: str
    number: int = Field(description="1 for the first question asked in this session, and so on.")
    can_go_back: bool


class Step(BaseModel):
    session: Session
    question: Question | None = None
    verdict: Verdict | None = None
    leaning: Verdict | None = Field(default=None, description="The verdict so far, while questions remain.")
    note: str | None = None

    @property
    def finished(self) -> bool:
        return self.verdict is not None


def _retrying(move, attempts: int = 3):
    """Re-run a move that lost a race (two clicks, a reply while the card was attached).

    Each attempt re-reads the session, so a move that no longer applies fails
    with a FlowError ("already answered") instead of overwriting the other one.
    """
    for attempt in range(attempts):
        try:
            return move()
        except ConflictError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


class Flow:
    """Drives sessions through the engine; the state store keeps them."""

    def __init__(self, engine: Engine | EngineSource, store: StateStore, ttl: dt.timedelta = DEFAULT_TTL):
        # A provider, not an engine: after a catalog reload every move uses the new engine.
        self._engine = engine if callable(engine) and not isinstance(engine, Engine) else (lambda: engine)
        self.store = store
        self.ttl = ttl

    @property
    def engine(self) -> Engine:
        return self._engine()

    # -- moves ------------------------------------------------------------------------------
    def start(self, user: str, team: str = "local", channel: str = "local", thread_ts: str | None = None) -> Step:
        session = Session(user=user, team=team, channel=channel, thread_ts=thread_ts)
        session = session.model_copy(update={"current": self._pick(session)})
        self.store.sessions.create(session)
        return self._step(session)

    def load(self, session_id: str) -> Session:
        session = self.store.sessions.get(session_id)
        if session is None:
            raise FlowError("that diagnosis no longer exists")
        if session.status == "open" and utcnow() - session.updated_at > self.ttl:
            session = self.store.sessions.save(session.model_copy(update={"status": "expired"}))
        return session

    def resume(self, session_id: str) -> Step:
        return self._step(self.load(session_id))

    def answer(self, session_id: str, signal_id: str, raw: Any) -> Step:
        return _retrying(lambda: self._answer(session_id, signal_id, raw))

    def _answer(self, session_id: str, signal_id: str, raw: Any) -> Step:
        session = self._open(session_id)
        if signal_id != session.current:
            raise FlowError("that question was already answered; answer the latest one")
        try:
            value = self.engine.validate({signal_id: raw})[signal_id]
        except (DiagnosisInputError, KeyError) as exc:
            raise FlowError(str(exc) if str(exc) else f"{signal_id} needs a value") from None
        answers = {**session.answers, signal_id: value}
        return self._advance(session, answers=answers, skipped=session.skipped, note=f"{signal_id} = {value}")

    def skip(self, session_id: str, signal_id: str | None = None) -> Step:
        """'Don't know': move on without an answer; the signal stays out of next checks."""
        return _retrying(lambda: self._skip(session_id, signal_id))

    def _skip(self, session_id: str, signal_id: str | None) -> Step:
        session = self._open(session_id)
        if signal_id is not None and signal_id != session.current:
            raise FlowError("that question was already answered; answer the latest one")
        if session.current is None:
            return self._step(session)
        return self._advance(session, answers=session.answers, skipped=[*session.skipped, session.current],
                             note=f"skipped {session.current}")

    def back(self, session_id: str) -> Step:
        return _retrying(lambda: self._back(session_id))

    def _back(self, session_id: str) -> Step:
        session = self._open(session_id)
        if not session.history:
            raise FlowError("this is the first question; there is nothing to go back to")
        last = session.history[-1]
        answers = {k: v for k, v in session.answers.items() if k != last}
        skipped = [s for s in session.skipped if s != last]
        session = self.store.sessions.save(session.model_copy(update={
            "answers": answers, "skipped": skipped, "history": session.history[:-1], "current": last,
        }))
        return self._step(session, note=f"back to {last}")

    def stop(self, session_id: str) -> Step:
        return _retrying(lambda: self._stop(session_id))

    def _stop(self, session_id: str) -> Step:
        session = self._open(session_id)
        session = self.store.sessions.save(session.model_copy(update={"status": "stopped", "current": None}))
        return self._step(session, note="stopped early")

    def attach(self, session_id: str, message_ts: str | None = None, thread_ts: str | None = None) -> Session:
        """Remember where a front-end shows this session (its card, its thread)."""
        update: dict[str, Any] = {}
        if message_ts is not None:
            update["message_ts"] = message_ts
        if thread_ts is not None:
            update["thread_ts"] = thread_ts
        return _retrying(lambda: self.store.sessions.save(self.load(session_id).model_copy(update=update)))

    def discard(self, session_id: str) -> None:
        """Forget a session nobody answered (a terminal whose input ended at once): nothing to resume."""
        session = self.store.sessions.get(session_id)
        if session is not None and not session.history and not session.answers:
            self.store.sessions.delete(session_id)

    def card_of(self, session_id: str, wait: float = 3.0) -> str | None:
        """The ts of the session's card, waiting briefly while the front-end that started it posts it.

        A reply can reach another thread (or replica) between the card being posted and its
        ts being recorded; waiting here keeps one card per diagnosis instead of a second one.
        """
        deadline = time.monotonic() + wait
        while True:
            session = self.store.sessions.get(session_id)
            if session is None or session.message_ts or time.monotonic() >= deadline:
                return session.message_ts if session else None
            time.sleep(0.05)

    # -- internals --------------------------------------------------------------------------
    def _open(self, session_id: str) -> Session:
        session = self.load(session_id)
        if session.status != "open":
            raise FlowError(f"that diagnosis is {session.status}; start a new one")
        return session

    def _advance(self, session: Session, answers: dict[str, Any], skipped: list[str], note: str) -> Step:
        history = [*session.history, session.current] if session.current else list(session.history)
        moved = session.model_copy(update={"answers": answers, "skipped": skipped, "history": history})
        nxt = self._pick(moved)
        status = "open" if nxt else "done"
        saved = self.store.sessions.save(moved.model_copy(update={"current": nxt, "status": status}))
        return self._step(saved, note=note)

    def _pick(self, session: Session) -> str | None:
        """The most informative question left, or None when done."""
        asked = len(session.history)
        if asked >= self.engine.settings.max_questions:
            return None
        if session.answers and self.engine.is_settled(session.answers):
            return None
        checks = self.engine.information(session.answers, exclude=session.skipped)
        useful = [c for c in checks if c.gain > 0.001]
        return useful[0].signal if useful else None

    def open_sessions(self, team: str | None = None, user: str | None = None) -> list[Session]:
        """Open diagnoses, after expiring the stale ones (so lists never show the dead)."""
        self.store.sessions.expire(utcnow() - self.ttl)
        return self.store.sessions.list(team=team, user=user, status="open")

    def _step(self, session: Session, note: str | None = None) -> Step:
        known = self.engine.signals
        if session.current is not None and session.current not in known:
            # The catalog was reloaded without this question's signal: ask the next one instead.
            cleaned = session.model_copy(update={"answers": {k: v for k, v in session.answers.items() if k in known}})
            session = self.store.sessions.save(cleaned.model_copy(update={"current": self._pick(cleaned)}))
        verdict = self.engine.diagnose({k: v for k, v in session.answers.items() if k in known},
                                       exclude=session.skipped, validated=True)
        if session.status != "open" or session.current is None:
            return Step(session=session, verdict=verdict, note=note)
        signal = self.engine.signals[session.current]
        question = Question(
            signal=signal.id,
            title=signal.title,
            text=signal.question,
            type=signal.type,
            unit=signal.unit,
            choices=list(signal.choices),
            presets=[PresetView(label=p.label, value=p.value) for p in signal.presets],
            how_to_measure=signal.how_to_measure,
            number=len(session.history) + 1,
            can_go_back=bool(session.history),
        )
        return Step(session=session, question=question, leaning=verdict, note=note)
