"""Play a guided diagnosis against a run's true signal values.

``simulate(engine, truth)`` starts the real :class:`~rlmap_bot.diagnosis.flow.Flow`
on an in-memory session store and answers every question truthfully from
``truth``: the value when the signal is there, "don't know" when it is not, and
the opening complaint from ``truth["complaint"]`` (a list of complaint ids) or
"don't know". When the flow pauses and offers the checks that would tell most, the team
goes on only if it has a number the flow has not asked for yet (as a person who has more
to tell resumes), picking from the readings offered those it has; otherwise it stops there
with what the answers so far support.  So it measures exactly what a team with those
numbers would get from the guided flow, question picker and stopping rule included.
"""

from __future__ import annotations

from typing import Any, Mapping

from rlmap_bot.diagnosis.engine import DiagnosisInputError, Engine
from rlmap_bot.diagnosis.flow import Flow
from rlmap_bot.diagnosis.guide import COMPLAINT, READINGS
from rlmap_bot.diagnosis.memory import MemoryState
from rlmap_bot.diagnosis.rules import known


def check_truth(engine: Engine, truth: Any) -> tuple[dict[str, Any], list[str] | None]:
    """The validated signal values and complaint list;
    DiagnosisInputError (one line) if malformed.
    """
    if not isinstance(truth, Mapping):
        raise DiagnosisInputError("a simulation needs a JSON object of signal id -> true value")
    complaint = truth.get(COMPLAINT)
    if complaint is not None:
        if not isinstance(complaint, list) or not all(isinstance(c, str) for c in complaint):
            raise DiagnosisInputError(
                'complaint must be a list of complaint ids, e.g. ["stalled", "slow"]'
            )
        unknown = [c for c in complaint if c not in engine.complaints]
        if unknown:
            raise DiagnosisInputError(
                f"unknown complaint '{unknown[0]}'; known: {', '.join(engine.complaints)}"
            )
    values = engine.validate({k: v for k, v in truth.items() if k != COMPLAINT})
    return values, complaint


def simulate(engine: Engine, truth: Any) -> dict[str, Any]:
    """``{"asked": [signal ids in the order asked],
    **verdict}`` for a run whose signals are ``truth``.

    "asked" lists every signal question put to the simulated team, answered or not; the
    opening complaint question is not in it (``complaint_asked`` says whether it was offered),
    nor the readings offered at a pause; ``questions`` counts every question put, those included.
    """
    values, complaint = check_truth(engine, truth)
    flow = Flow(engine, MemoryState())
    step = flow.start(user="simulation")
    asked: list[str] = []
    offered = False
    questions = 0
    while step.question is not None:
        if step.paused and not _has_more(values, step.session, flow.guide.said(step.session)):
            break  # the team has no number the flow has not asked for: it stops at the pause
        sid = step.question.signal
        questions += 1
        if sid == READINGS:
            have = [p.value for p in step.question.presets if p.value in values]
            step = (
                flow.answer(step.session.id, sid, have) if have else flow.skip(step.session.id, sid)
            )
            continue
        if sid == COMPLAINT:
            offered = True
            step = (
                flow.answer(step.session.id, sid, complaint)
                if complaint
                else flow.skip(step.session.id, sid)
            )
            continue
        asked.append(sid)
        step = (
            flow.answer(step.session.id, sid, values[sid])
            if sid in values
            else flow.skip(step.session.id, sid)
        )
    verdict = step.verdict if step.verdict is not None else step.leaning
    assert verdict is not None
    return {
        "asked": asked,
        "complaint_asked": offered,
        "questions": questions,
        **verdict.model_dump(mode="json"),
    }


def _has_more(values: Mapping[str, Any], session: Any, said: Mapping[str, Any]) -> bool:
    """Whether the team holds a reading it has not given yet (asked or not; a value its complaint
    stated is given, a narrowed one is not)."""
    given = {sid for sid, v in said.items() if known(said, sid)}
    return any(
        sid not in session.answers and sid not in session.history and sid not in given
        for sid in values
    )
