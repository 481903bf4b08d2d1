"""The guided flow's two questions answered by picking several of a list.

The opening one asks what the team sees (the catalog's complaints); the one at a pause asks which
of the readings still unasked the team can read, so a team that has said "don't know" three times
is not walked through the rest one by one. Both are answered the same way: letters, numbers, ids
or labels, several at once, or nothing ("none of these").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rlmap_bot.diagnosis.guide import COMPLAINT, READINGS, answer_hint
from rlmap_bot.knowledge.settings import Complaint
from rlmap_bot.results.diagnosis import NextCheck, PresetView, Question

COMPLAINT_HELP = (
    "Pick the symptoms the team has noticed; the diagnosis then asks first about the signals that "
    "tell their causes apart. Several may apply, and none is fine too."
)
READINGS_HELP = (
    "Pick every reading you can give now, from your dashboards, logs or notes; the diagnosis then "
    "asks only those, best first. If you have none of them, the answers so far give the verdict; "
    "the checks above say what to measure."
)


def complaint_question(complaints: Sequence[Complaint], common: dict[str, Any]) -> Question:
    """The opening question: what the team sees (several may apply)."""
    return Question(
        kind="complaint",
        signal=COMPLAINT,
        title="What do you see?",
        text="What is the team seeing in this run? Pick any that apply, or skip if none fits.",
        type="complaint",
        choices=[c.id for c in complaints],
        presets=[PresetView(label=c.label, value=c.id) for c in complaints],
        multiple=True,
        how_to_measure=COMPLAINT_HELP,
        answer_hint=answer_hint(None),
        **common,
    )


def readings_question(offered: Sequence[NextCheck], common: dict[str, Any]) -> Question:
    """The question at a pause: which of the readings still unasked the team can give."""
    return Question(
        kind="readings",
        signal=READINGS,
        title="Which of these can you read?",
        text="Rather than ask each in turn: which of these readings can you give now? Pick any you "
        "have, or none.",
        type="readings",
        choices=[c.signal for c in offered],
        presets=[PresetView(label=c.title, value=c.signal) for c in offered],
        multiple=True,
        how_to_measure=READINGS_HELP,
        answer_hint="pick any you have: letters like 'a c', numbers like '1,3', or ids",
        **common,
    )


def parse_picks(options: Sequence[tuple[str, str]], raw: Any) -> list[str]:
    """Ids picked from ``options`` (id, label) by a button value, a list, or typed text
    ('a c', '1,3', 'stalled slow').

    An empty answer or 'none' picks nothing.  Raises ValueError naming the options when a part
    matches none of them.
    """
    ids = [i for i, _ in options]
    if isinstance(raw, (list, tuple)):
        parts = [str(p) for p in raw]
    else:
        text = str(raw or "").strip()
        whole = text.lower()
        for option, label in options:
            if whole in {option, label.lower()}:
                return [option]
        parts = [p for p in re.split(r"[,;/\s]+|\band\b", text) if p]
    chosen: list[str] = []
    for part in parts:
        word = part.strip().lower()
        if word in {"none", "nothing", "no"}:
            continue
        found = None
        if len(word) == 1 and word.isalpha():
            index = ord(word) - ord("a")
            found = ids[index] if 0 <= index < len(ids) else None
        elif word.isdigit():
            index = int(word) - 1
            found = ids[index] if 0 <= index < len(ids) else None
        elif word in ids:
            found = word
        if found is None:
            letters = f"a-{chr(ord('a') + len(ids) - 1)}" if ids else "none"
            raise ValueError(
                f"{part!r} is not one of the options: pick letters {letters}, numbers "
                f"1-{len(ids)}, or ids ({', '.join(ids)})"
            )
        if found not in chosen:
            chosen.append(found)
    return chosen
