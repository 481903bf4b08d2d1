"""What a signal found by ask points to: a stage its diagnosis rules name, and why, in brief.

A question about a symptom ("my reward keeps going up but eval accuracy is dropping") is best
answered by the signal that measures it, but the signal's summary says what it measures, not
what it means. The diagnosis rules say what it means. A signal has several (the held-out trend
falling beside a rising reward is overoptimization; not improving beside a collapsed entropy is
an optimisation problem), so the one shown is the one the question's own words meet most, and
with no word in common, the strongest the signal's own file holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from rlmap_bot.knowledge.schema import Signal
from rlmap_bot.knowledge.settings import DiagnosisSettings
from rlmap_bot.search.params import MODERATE, STRONG
from rlmap_bot.text import content_tokens

# A rule's first clause ends at a full stop, colon or semicolon followed by a space, but not after
# these abbreviations ("Gao et al.", "Dr. GRPO", "e.g.").
_ABBREVIATIONS = ("al", "dr", "e.g", "i.e", "vs", "cf", "fig", "approx")
_CLAUSE_END = re.compile(r"[.:;](?=\s|$)")


@dataclass(frozen=True)
class Reading:
    stage: str  # the stage's title
    points: float  # the most the rule gives that stage
    clause: str  # its reason, first clause
    stems: frozenset[str]  # the content stems of its whole reason
    own: bool  # defined in the signal's own file
    # Per choice signal the rule's condition names, the choices it holds for: ("proxy_reward_trend",
    # {"rising"}) for "proxy_reward_trend == 'rising'".
    requires: tuple[tuple[str, frozenset[str]], ...] = ()

    def text(self) -> str:
        return f"{self.stage}: {self.clause}"


def _requires(when: str, signals: Iterable[Signal]) -> tuple[tuple[str, frozenset[str]], ...]:
    """Per choice signal a rule's condition compares ("x == 'rising'", "x != 'rising'"), the choices
    it allows."""
    out = []
    for signal in signals:
        if signal.type != "choice":
            continue
        allowed = set(signal.choices)
        for op, value in re.findall(rf"\b{re.escape(signal.id)}\s*(==|!=)\s*'([a-z_]+)'", when):
            allowed = allowed & {value} if op == "==" else allowed - {value}
        if allowed != set(signal.choices):
            out.append((signal.id, frozenset(allowed)))
    return tuple(out)


class ChoicePhrases:
    """How the choices of the catalog's choice signals may be said (DiagnosisSettings.said_as).
    A plain class: making a dataclass costs about 0.5 ms, paid by a cold ask that shows a signal."""

    __slots__ = ("signals", "stating")

    def __init__(
        self, signals: tuple[str, ...], stating: dict[str, tuple[tuple[str, str], ...]]
    ) -> None:
        self.signals = signals  # the choice signals' ids
        # Each phrase, padded with a space each side, with the (signal, choice) pairs it states:
        # many signals share a phrase ("rising", "flat"), so each is looked for once in a question.
        self.stating = stating


def choice_phrases(signals: Iterable[Signal], settings: DiagnosisSettings) -> ChoicePhrases:
    """Per choice signal, how each of its choices may be said: read once for a catalog, since
    reading them again for every question is most of an answer's time."""
    ids: list[str] = []
    stating: dict[str, list[tuple[str, str]]] = {}
    for s in signals:
        if s.type == "choice":
            ids.append(s.id)
            for c in s.choices:
                for w in settings.said_as(c):
                    stating.setdefault(f" {w} ", []).append((s.id, c))
    return ChoicePhrases(tuple(ids), {w: tuple(pairs) for w, pairs in stating.items()})


def said_choices(phrases: ChoicePhrases, normalized: str) -> dict[str, set[str]]:
    """Per choice signal, the choices a question states, in their names or everyday words ("keeps
    going up": rising; knowledge/catalog.yaml's answer_words); ``phrases`` from choice_phrases,
    ``normalized`` the question as text.normalize reads it."""
    said = f" {normalized} "
    out: dict[str, set[str]] = {sid: set() for sid in phrases.signals}
    for padded, pairs in phrases.stating.items():
        if padded in said:
            for sid, choice in pairs:
                out[sid].add(choice)
    return out


def signal_readings(
    signal_id: str, signals: Iterable[Signal], stage_titles: dict[str, str]
) -> list[Reading]:
    """Every rule reading ``signal_id`` (in any signal's file) that points at a stage with moderate
    weight or more. Worked out per signal shown, not for the catalog: a cold ask stems only the
    few reasons it shows (the whole catalog's took 6 ms)."""
    mention = re.compile(
        rf"\b{re.escape(signal_id)}\b"
    )  # read from the text: the store spares re-parsing it
    signals = list(signals)
    out: list[Reading] = []
    for signal in signals:
        for rule in signal.rules:
            stage = max(rule.points, key=lambda s: rule.points[s])
            points = rule.points[stage]
            if points < MODERATE or not mention.search(rule.when):
                continue
            out.append(
                Reading(
                    stage=stage_titles.get(stage, stage),
                    points=points,
                    clause=first_clause(rule.why),
                    stems=frozenset(content_tokens(rule.why)),
                    own=signal.id == signal_id,
                    requires=_requires(rule.when, signals),
                )
            )
    return out


def pick(
    readings: list[Reading], question: Iterable[str], said: dict[str, set[str]] | None = None
) -> Reading | None:
    """The reading of the signal's own file the question's stems meet most, else of another file's
    (its own readings are what it is for: a long wait for rollouts, not a batch-doubling experiment
    that mentions the wait); with no stem in common, its own strongest if strong, else none. Of
    equals, the stronger, then the curator's first.

    ``said``: per choice signal, the choices the
    question's words state ("the reward keeps going up":
    rising). Words cannot be pinned to one signal (rising, flat and falling are every trend's), so a
    reading is left out when, for a signal its condition compares, the question states choices and
    none of them is one the reading holds for: it would contradict the question ("the reward
    curve keeps going up" is not shown the reading of a falling reward).
    """
    said = said or {}
    if any(said.values()):  # else no reading contradicts the question
        readings = [
            r
            for r in readings
            if all(not said.get(sid) or allowed & said[sid] for sid, allowed in r.requires)
        ]
    asked = set(question)
    for group in ([r for r in readings if r.own], [r for r in readings if not r.own]):
        met = [r for r in group if r.stems & asked]
        if met:
            return max(
                met, key=lambda r: (len(r.stems & asked), r.points)
            )  # max keeps the first of equals
    own = [r for r in readings if r.own and r.points >= STRONG]
    return max(own, key=lambda r: r.points) if own else None


def first_clause(text: str) -> str:
    """A rule's reason up to its first full stop, colon or semicolon, ending with a full stop."""
    text = " ".join(text.split())
    for end in _CLAUSE_END.finditer(text):
        before = text[: end.start()].rsplit(" ", 1)[-1].lower()
        if text[end.start()] == "." and before in _ABBREVIATIONS:
            continue
        return text[: end.start()].rstrip(" .") + "."
    return text.rstrip(" .") + "."
