"""The guided diagnosis as a state machine over stored sessions.

Every front-end (terminal, Slack thread) drives the same calls: start, answer,
skip, back, stop, help (or :meth:`Flow.reply` with whatever the person typed).
Each returns a :class:`Step`: the next question, or the verdict.  Sessions are
saved after every move, so a restart loses nothing and any process that shares
the state store can continue a diagnosis.

A diagnosis opens with what the team sees (the complaints in
``knowledge/catalog.yaml``, several may apply), then asks the signals those
complaints list, then whatever else is most informative; which question comes
next is decided by :mod:`rlmap_bot.diagnosis.guide`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable, Mapping, Protocol

from rlmap_bot.diagnosis.engine import DiagnosisInputError, Engine
from rlmap_bot.diagnosis.guide import COMPLAINT, PICKS, READINGS, Guide, answer_hint
from rlmap_bot.diagnosis.picks import complaint_question, parse_picks, readings_question
from rlmap_bot.diagnosis.replies import control_word, typed_choice
from rlmap_bot.diagnosis.rules import OneOf
from rlmap_bot.diagnosis.said import narrowed_question, taken, told
from rlmap_bot.errors import UsageError
from rlmap_bot.results.diagnosis import (
    PauseCheck,
    PresetView,
    Question,
    Session,
    Step,
    Verdict,
    format_value,
)
from rlmap_bot.state.models import ConflictError, utcnow

EngineSource = Callable[[], Engine]

Margins = Mapping[str, float | None]  # per signal read from logs, how far past its noise band


class SessionRepo(Protocol):
    """What the flow uses of a sessions repository: the state store's, or the in-memory one."""

    def create(self, session: Session) -> Session: ...
    def save(self, session: Session) -> Session: ...
    def get(self, session_id: str) -> Session | None: ...
    def delete(self, session_id: str) -> bool: ...
    def expire(self, older_than: dt.datetime) -> int: ...
    def list(
        self, team: str | None = None, user: str | None = None, status: str | None = "open"
    ) -> list[Session]: ...


class SessionStore(Protocol):
    """Where the flow keeps sessions: the state store, or :class:`.memory.MemoryState`."""

    @property
    def sessions(self) -> SessionRepo: ...


DEFAULT_TTL = dt.timedelta(hours=72)


class FlowError(UsageError):
    """A move that does not apply (finished session, stale button, bad answer)."""


class SupersededError(FlowError):
    """A reply that reached the bot after a later one had been applied: the wrong question."""


def _retrying(move, attempts: int = 3):
    """Re-run a move that lost a race (two clicks, a reply while the card was attached).

    Each attempt re-reads the session, so a move that no longer applies fails
    with a FlowError ("already answered") instead of overwriting the other one.
    """
    from tenacity import (
        Retrying,
        retry_if_exception_type,
        stop_after_attempt,
    )  # ~60 ms: only when a move runs

    retrying = Retrying(
        retry=retry_if_exception_type(ConflictError),
        stop=stop_after_attempt(attempts),
        reraise=True,
    )
    return retrying(move)


# How many move keys a session remembers: a replay
# comes within minutes of the move (a takeover after
# a crash), by which time a person has typed a few replies at most.
MOVES_KEPT = 20


def _refuse_if_stale(session: Session, stale: Callable[[list[str]], bool] | None) -> None:
    if stale is not None and stale(session.moves):
        raise SupersededError("a later reply was applied first")


def _moves(session: Session, key: str | None) -> list[str]:
    """The session's move keys with ``key`` added (saved with the move itself, in one write)."""
    return session.moves if key is None else [*session.moves, key][-MOVES_KEPT:]


class Flow:
    """Drives sessions through the engine; the state store keeps them."""

    def __init__(
        self, engine: Engine | EngineSource, store: SessionStore, ttl: dt.timedelta = DEFAULT_TTL
    ):
        # A provider, not an engine: after a catalog reload
        # every move uses the new engine (and its guide).
        self._engine = (
            engine if callable(engine) and not isinstance(engine, Engine) else (lambda: engine)
        )
        self._guide: Guide | None = None
        self.store = store
        self.ttl = ttl

    @property
    def engine(self) -> Engine:
        return self._engine()

    @property
    def guide(self) -> Guide:
        """The question picker for the current engine, rebuilt when a reload brings a new one."""
        engine = self.engine
        if self._guide is None or self._guide.engine is not engine:
            self._guide = Guide(engine)
        return self._guide

    # -- moves ------------------------------------------------------------------------------
    def start(
        self,
        user: str,
        team: str = "local",
        channel: str = "local",
        thread_ts: str | None = None,
        known: dict[str, Any] | None = None,
        margins: Margins | None = None,
    ) -> Step:
        """A new session; ``known`` signal values (read from a run's logs, ``margins`` as
        :meth:`absorb`'s) are answers already given, so the flow asks only what they leave open
        and skips the opening complaint."""
        session = Session(user=user, team=team, channel=channel, thread_ts=thread_ts)
        if known:
            read = {s: (margins or {}).get(s) for s in known}
            session = session.model_copy(update={"answers": self.engine.validate(known)})
            session.from_logs = read
            session = session.model_copy(update={"current": self.guide.next(session)})
        else:
            session = session.model_copy(update={"current": self.guide.first()})
        self.store.sessions.create(session)
        return self._step(session)

    def absorb(
        self, session_id: str, known: dict[str, Any], margins: Margins | None = None
    ) -> Step:
        """Add values read from a run's logs to an open session (answers already typed are kept),
        each weighed by its ``margins`` as ``diagnose --run`` does: one reading, one wording."""

        def move() -> Step:
            session = self._open(session_id)
            answers = {**self.engine.validate(known), **session.answers}
            read = {s: (margins or {}).get(s) for s in known if s not in session.answers}
            moved = session.model_copy(update={"answers": answers})
            moved.from_logs = {**session.from_logs, **read}
            nxt = self.guide.next(moved)
            saved = self.store.sessions.save(
                moved.model_copy(update={"current": nxt, "status": "open" if nxt else "done"})
            )
            return self._step(saved, note=f"read {len(known)} signals from the run's logs")

        return _retrying(move)

    def load(self, session_id: str) -> Session:
        session = self.store.sessions.get(session_id)
        if session is None:
            raise FlowError("that diagnosis no longer exists")
        if session.status == "open" and utcnow() - session.updated_at > self.ttl:
            session = self.store.sessions.save(session.model_copy(update={"status": "expired"}))
        return session

    def resume(self, session_id: str) -> Step:
        return self._step(self.load(session_id))

    def answer(self, session_id: str, signal_id: str, raw: Any, key: str | None = None) -> Step:
        return _retrying(lambda: self._answer(session_id, signal_id, raw, key))

    def _answer(self, session_id: str, signal_id: str, raw: Any, key: str | None = None) -> Step:
        session = self._open(session_id)
        if signal_id != session.current:
            raise FlowError("that question was already answered; answer the latest one")
        if signal_id in PICKS:
            try:
                value: Any = parse_picks(self._options(session), raw)
            except ValueError as exc:
                raise FlowError(str(exc)) from None
            if not value:
                return self._advance(
                    session,
                    answers=session.answers,
                    skipped=[*session.skipped, signal_id],
                    note="no complaint chosen" if signal_id == COMPLAINT else "none of these",
                    key=key,
                )
            note = (
                self._seen(value)
                if signal_id == COMPLAINT
                else "you can read: " + "; ".join(self._title(c) for c in value)
            )
        else:
            try:
                value = self.engine.validate({signal_id: raw})[signal_id]
            except (DiagnosisInputError, KeyError) as exc:
                # The question is shown by its title: the signal's
                # id means nothing to the person answering.
                said = str(exc) or f"{signal_id} needs a value"
                if said.startswith(f"{signal_id} "):
                    said = self._title(signal_id) + said[len(signal_id) :]
                raise FlowError(said) from None
            note = f"{self._title(signal_id)}: {format_value(value)}"
        answers = {**session.answers, signal_id: value}
        return self._advance(session, answers=answers, skipped=session.skipped, note=note, key=key)

    def pick(self, session_id: str, signal_id: str, index: int, key: str | None = None) -> Step:
        """Answer with the ``index``-th preset the question offers (a card's button): the
        question's own presets, those a complaint's narrowing left."""
        presets = self.guide.presets(self._open(session_id), signal_id)
        if not 0 <= index < len(presets):
            raise FlowError("that answer is not one of the question's")
        return self.answer(session_id, signal_id, presets[index].value, key=key)

    def skip(self, session_id: str, signal_id: str | None = None, key: str | None = None) -> Step:
        """'Don't know': move on without an answer; the signal stays out of next checks."""
        return _retrying(lambda: self._skip(session_id, signal_id, key))

    def _skip(self, session_id: str, signal_id: str | None, key: str | None = None) -> Step:
        session = self._open(session_id)
        if signal_id is not None and signal_id != session.current:
            raise FlowError("that question was already answered; answer the latest one")
        if session.current is None:
            return self._step(session)
        step = self._advance(
            session,
            answers=session.answers,
            skipped=[*session.skipped, session.current],
            note=f"skipped: {self._title(session.current)}",
            key=key,
        )
        if step.question is None:
            return step
        signals = self.engine.signals
        checks = [
            PauseCheck(
                signal=c.signal,
                title=c.title,
                how_to_measure=signals[c.signal].how_to_measure,
                cost=c.cost,
            )
            for c in self.guide.pause(step.session)
        ]
        return step.model_copy(update={"paused": checks}) if checks else step

    def back(self, session_id: str, key: str | None = None) -> Step:
        return _retrying(lambda: self._back(session_id, key))

    def _back(self, session_id: str, key: str | None = None) -> Step:
        session = self._open(session_id)
        if not session.history:
            raise FlowError("this is the first question; there is nothing to go back to")
        last = session.history[-1]
        answers = {k: v for k, v in session.answers.items() if k != last}
        skipped = [s for s in session.skipped if s != last]
        session = self.store.sessions.save(
            session.model_copy(
                update={
                    "answers": answers,
                    "skipped": skipped,
                    "history": session.history[:-1],
                    "current": last,
                    "moves": _moves(session, key),
                }
            )
        )
        return self._step(session, note=f"back to: {self._title(last)}")

    def stop(self, session_id: str, key: str | None = None) -> Step:
        return _retrying(lambda: self._stop(session_id, key))

    def _stop(self, session_id: str, key: str | None = None) -> Step:
        session = self._open(session_id)
        session = self.store.sessions.save(
            session.model_copy(
                update={"status": "stopped", "current": None, "moves": _moves(session, key)}
            )
        )
        return self._step(session, note="stopped early")

    def help(self, session_id: str) -> Step:
        """The current question again, with how to measure it; nothing changes."""
        session = self._open(session_id)
        step = self._step(session, note="how to measure it")
        if step.question is not None:
            step.help = step.question.how_to_measure
        return step

    def reply(
        self,
        session_id: str,
        text: str,
        key: str | None = None,
        stale: Callable[[list[str]], bool] | None = None,
    ) -> Step:
        """Whatever a person typed for the current question:
        a control word, a preset letter or an answer.

        Control words (see :data:`CONTROL_WORDS`): '?' or 'skip' for don't know, 'back', 'stop',
        and 'help' for how to measure the question.  A single letter picks a preset (for yes/no
        questions 'y' and 'n' mean yes and no); for the opening question several letters,
        numbers or complaint ids may be given at once ('a c', '1,3').

        ``key`` names this reply (a Slack message): a reply whose key the session has applied
        already (handled again after a crash) changes nothing and returns the current step with
        ``replayed`` set.  ``stale`` says, from the keys applied so far, whether a later reply
        has overtaken this one; it is asked of the same read of the session that the answer is
        checked against when saved, so a reply overtaken in between cannot slip through.
        """
        if key is not None:
            session = self.load(session_id)
            if key in session.moves:
                return self._step(session).model_copy(update={"replayed": True})
            _refuse_if_stale(session, stale)
        word = control_word(text)
        if word == "help":
            return self.help(session_id)
        if word == "back":
            return self.back(session_id, key=key)
        if word == "stop":
            return self.stop(session_id, key=key)
        session = self._open(session_id)
        _refuse_if_stale(session, stale)
        current = session.current
        if word == "skip" or current is None:
            return self.skip(session_id, current, key=key)
        if current in PICKS:
            return self.answer(session_id, current, text, key=key)
        signal = self.engine.signals.get(current)
        reply = text.strip()
        yes_no = signal is not None and signal.type == "bool" and reply.lower() in {"y", "n"}
        presets = self.guide.presets(session, current)
        if signal is not None and not yes_no and len(reply) == 1 and reply.isalpha() and presets:
            index = ord(reply.lower()) - ord("a")
            if not 0 <= index < len(presets):
                raise FlowError(f"no option {reply!r}; pick a-{chr(ord('a') + len(presets) - 1)}")
            return self.answer(session_id, current, presets[index].value, key=key)
        if signal is not None and signal.type == "choice":
            reply = typed_choice(signal.choices, reply, self.engine.settings) or reply
        return self.answer(session_id, current, reply, key=key)

    def attach(
        self, session_id: str, message_ts: str | None = None, thread_ts: str | None = None
    ) -> Session:
        """Remember where a front-end shows this session (its card, its thread)."""
        update: dict[str, Any] = {}
        if message_ts is not None:
            update["message_ts"] = message_ts
        if thread_ts is not None:
            update["thread_ts"] = thread_ts
        return _retrying(
            lambda: self.store.sessions.save(self.load(session_id).model_copy(update=update))
        )

    def discard(self, session_id: str) -> None:
        """Forget a session nobody answered (a terminal whose input ended at once)."""
        session = self.store.sessions.get(session_id)
        if session is not None and not session.history and not session.answers:
            self.store.sessions.delete(session_id)

    # -- internals --------------------------------------------------------------------------
    def _title(self, signal_id: str) -> str:
        """How a note names a question: its title, as the card shows it (ids are for curators)."""
        if signal_id == COMPLAINT:
            return "what you see"
        if signal_id == READINGS:
            return "the readings you have"
        signal = self.engine.signals.get(signal_id)
        return signal.title if signal is not None else signal_id

    def _options(self, session: Session) -> list[tuple[str, str]]:
        """What the current pick-several question offers, as (id, label)."""
        if session.current == COMPLAINT:
            return [(c.id, c.label) for c in self.engine.complaints.values()]
        return [(c.signal, c.title) for c in self.guide.readings(session)]

    def _open(self, session_id: str) -> Session:
        session = self.load(session_id)
        if session.status != "open":
            raise FlowError(f"that diagnosis is {session.status}; start a new one")
        return session

    def _advance(
        self,
        session: Session,
        answers: dict[str, Any],
        skipped: list[str],
        note: str,
        key: str | None = None,
    ) -> Step:
        history = [*session.history, session.current] if session.current else list(session.history)
        moved = session.model_copy(
            update={
                "answers": answers,
                "skipped": skipped,
                "history": history,
                "moves": _moves(session, key),
            }
        )
        nxt = self.guide.next(moved)
        status = "open" if nxt else "done"
        saved = self.store.sessions.save(
            moved.model_copy(update={"current": nxt, "status": status})
        )
        return self._step(saved, note=note)

    def open_sessions(self, team: str | None = None, user: str | None = None) -> list[Session]:
        """Open diagnoses, after expiring the stale ones (so lists never show the dead)."""
        self.store.sessions.expire(utcnow() - self.ttl)
        return self.store.sessions.list(team=team, user=user, status="open")

    def _step(self, session: Session, note: str | None = None) -> Step:
        known = self.engine.signals
        current = session.current
        if current is not None and current not in PICKS and current not in known:
            # The catalog was reloaded without this question's signal: ask the next one instead.
            cleaned = session.model_copy(update={"answers": self.guide.known_answers(session)})
            session = self.store.sessions.save(
                cleaned.model_copy(update={"current": self.guide.next(cleaned)})
            )
        answers = self.guide.signal_answers(session)
        # Read from logs: a verdict on a run (calibrated, leads), a person's answers in full.
        logs = {s: m for s, m in session.from_logs.items() if s in answers}
        verdict = self.engine.diagnose(
            answers, exclude=session.skipped, validated=True, margins=logs if logs else None
        )
        if session.status != "open" or session.current is None:
            return Step(session=session, verdict=self._with_complaints(session, verdict), note=note)
        return Step(session=session, question=self._question(session), leaning=verdict, note=note)

    def _with_complaints(self, session: Session, verdict: Verdict) -> Verdict:
        """The verdict, saying what the team told by its complaints (:func:`told`)."""
        given = {k: v for k, v in self.guide.said(session).items() if k not in session.answers}
        return told(verdict, self.guide.complaints(session), given, self._title)

    def _seen(self, picked: list[str]) -> str:
        """The note after the opening question: what the team sees, and what that answers."""
        note = "you see: " + "; ".join(self.engine.complaints[c].label for c in picked)
        said = self.guide.said(Session(user="-", answers={COMPLAINT: picked}))
        return f"{note} (taken as {taken(said, self._title)})" if said else note

    def _question(self, session: Session) -> Question:
        assert session.current is not None, "_step asks only while a question is open"
        number = len(session.history) + 1
        total = self.guide.max_questions(session)
        common = dict(
            number=number,
            max_questions=total,
            progress=f"question {number} of at most {total}",
            can_go_back=bool(session.history),
        )
        if session.current == COMPLAINT:
            return complaint_question(list(self.engine.complaints.values()), common)
        if session.current == READINGS:
            return readings_question(self.guide.readings(session), common)
        signal = self.engine.signals[session.current]
        text, choices, hint = signal.question, list(signal.choices), answer_hint(signal)
        offered = self.guide.presets(session, signal.id)
        narrowed = self.guide.signal_answers(session).get(signal.id)
        if isinstance(narrowed, OneOf):  # the complaint chosen already ruled some answers out
            text, choices, hint = narrowed_question(signal, narrowed)
        return Question(
            signal=signal.id,
            title=signal.title,
            text=text,
            type=signal.type,
            unit=signal.unit,
            choices=choices,
            presets=[PresetView(label=p.label, value=p.value) for p in offered],
            how_to_measure=signal.how_to_measure,
            answer_hint=hint,
            cost=signal.cost,
            **common,
        )
