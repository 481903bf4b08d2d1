"""Reading what a person types in a guided diagnosis: the words that stand for "don't know",
"back", "stop" and "help", and a choice said in everyday words."""

from __future__ import annotations

from rlmap_bot.knowledge.settings import DiagnosisSettings
from rlmap_bot.text import normalize

# Words a person types instead of an answer, in the terminal or in a Slack thread.
CONTROL_WORDS = {
    "?": "skip",
    "": "skip",
    "skip": "skip",
    "dk": "skip",
    "don't know": "skip",
    "dont know": "skip",
    "idk": "skip",
    "dunno": "skip",
    "no idea": "skip",
    "not sure": "skip",
    "unsure": "skip",
    "unknown": "skip",
    "n/a": "skip",
    "back": "back",
    "<": "back",
    "undo": "back",
    "stop": "stop",
    "verdict": "stop",
    "quit": "stop",
    "help": "help",
    "how": "help",
    "how?": "help",
    "how to measure": "help",
}


def control_word(text: str) -> str | None:
    """'skip', 'back', 'stop' or 'help' when ``text`` is one of the control words, else None."""
    # Slack and phones type a curly apostrophe ("don’t know"); a closing full stop is not a word.
    return CONTROL_WORDS.get(text.strip().lower().replace("\u2019", "'").rstrip(".!"))


def typed_choice(choices: list[str], text: str, settings: DiagnosisSettings) -> str | None:
    """The choice a reply names, in its own name or everyday words ("going up": rising, from the
    catalog's ``answer_words``); None when it names none, or more than one."""
    said = normalize(text)
    found = [c for c in choices if said in settings.said_as(c)]
    return found[0] if len(found) == 1 else None
