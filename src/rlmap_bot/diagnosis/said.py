"""What a picked complaint says, taken as the team's answers, and how the flow shows it.

A complaint's ``states`` (``knowledge/catalog.yaml``) is what its words say outright: "training
reward rises, the eval does not" answers the reward's trend (rising) and narrows the held-out
score's (flat or falling). :func:`stated` turns the complaints picked into signal values (a value,
or a :class:`~rlmap_bot.diagnosis.rules.OneOf`), which the guide adds to the answers given; the
rest says it in words and offers a narrowed question with the choices left.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rlmap_bot.diagnosis.rules import OneOf, plain
from rlmap_bot.knowledge.schema import Preset, Signal
from rlmap_bot.knowledge.settings import Complaint
from rlmap_bot.results.diagnosis import Verdict, format_value


def stated(complaints: Iterable[Complaint], signals: Mapping[str, Signal]) -> dict[str, Any]:
    """What the complaints state, as answers: a value, or a OneOf for a signal they narrow.

    Two complaints that speak of one signal leave what both allow; if that is nothing (one says
    the reward rises, the other that it has stalled) neither is taken. A signal the catalog no
    longer has is left out.
    """
    allowed: dict[str, list[Any]] = {}
    for complaint in complaints:
        for sid, value in complaint.states.items():
            signal = signals.get(sid)
            if signal is None:
                continue
            these = [signal.coerce(v) for v in (value if isinstance(value, list) else [value])]
            allowed[sid] = [v for v in allowed.get(sid, these) if v in these]
    return {
        sid: these[0] if len(these) == 1 else OneOf(these)
        for sid, these in allowed.items()
        if these
    }


def offered(signal: Signal, value: Any) -> list[Preset]:
    """The presets a signal's question offers: those a narrowing (``value``) leaves."""
    if not isinstance(value, OneOf):
        return list(signal.presets)
    return [p for p in signal.presets if signal.coerce(p.value) in value]


def narrowed_question(signal: Signal, value: OneOf) -> tuple[str, list[str], str]:
    """A narrowed signal's question, choices and answer hint: the choices left, and why."""
    choices = [c for c in signal.choices if c in value]
    text = f"{signal.question} From what you said, it is {format_value(list(value.order))}: which?"
    return text, choices, "one of: " + ", ".join(choices)


def taken(said: Mapping[str, Any], title: Callable[[str], str]) -> str:
    """What the complaints picked answered, in words: 'Training reward trend: rising; Held-out
    score trend: flat or falling' (a list is what a narrowed value may still be)."""
    return "; ".join(f"{title(sid)}: {format_value(plain(v))}" for sid, v in said.items())


def told(
    verdict: Verdict, chosen: list[Complaint], said: Mapping[str, Any], title: Callable[[str], str]
) -> Verdict:
    """A verdict that says what it took from the complaints rather than asked ("From what you
    said: ...", and in ``said``), and, when it names no stage, what the team reported seeing:
    "Nothing you reported points at a binding stage" once read as if the complaint had not been
    heard."""
    summary = verdict.summary
    if said:
        summary = f"{summary} From what you said: {taken(said, title)}."
    if chosen and not (verdict.binding_stage or verdict.tied):
        seen = "; ".join(f"“{c.label}”" for c in chosen)
        summary = f"You see: {seen}. {summary}"
    plain_said = {sid: plain(v) for sid, v in said.items()}
    return verdict.model_copy(update={"summary": summary, "said": plain_said})
