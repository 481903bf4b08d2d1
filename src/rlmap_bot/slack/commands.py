"""Parsing `/rlmap ...` text into a command, with a usage message for anything malformed.

Kept apart from Bolt so it is tested as plain text in, command out.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz, process

SUBCOMMANDS = {
    "ask": "ask QUESTION",
    "diagnose": "diagnose",
    "stages": "stages",
    "show": "show ID",
    "help": "help",
    "digest": "digest subscribe|unsubscribe|list|preview|now",
    "reload": "reload (admins)",
}
USAGE = "Usage: /rlmap " + " | ".join(SUBCOMMANDS.values()) + " (any other text is a question)"


class CommandError(ValueError):
    """The text is a malformed command; the message is the usage hint."""


@dataclass(frozen=True)
class Command:
    name: str
    arg: str = ""


def parse_command(text: str) -> Command:
    text = " ".join((text or "").split())
    if not text:
        return Command("help")
    head, _, rest = text.partition(" ")
    word = head.lower()
    if word in SUBCOMMANDS:
        if word == "digest" and not rest:
            raise CommandError("`/rlmap digest` needs one of subscribe, unsubscribe, list, preview, now. " + USAGE)
        if word == "ask" and not rest:
            raise CommandError("`/rlmap ask` needs a question, e.g. `/rlmap ask why is my reward going up but evals down?`. " + USAGE)
        if word == "show":
            if not rest:
                raise CommandError("`/rlmap show` takes one entry id, e.g. `/rlmap show reward`. " + USAGE)
            if len(rest.split()) == 1:
                return Command("show", rest.lower())
            return Command("ask", text)  # "show me the PPO paper" is a question
        if word in {"diagnose", "stages", "help", "reload"} and rest:
            return Command("ask", text)  # "help me with reward hacking", "stages of rollout?"
        return Command(word, rest)
    near = process.extractOne(word, list(SUBCOMMANDS), scorer=fuzz.ratio, score_cutoff=75)
    if near and not rest:
        raise CommandError(f"Unknown command `{head}`; did you mean `/rlmap {near[0]}`? " + USAGE)
    return Command("ask", text)
