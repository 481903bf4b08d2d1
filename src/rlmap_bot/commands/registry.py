"""The command registry: every command declared once, found by name from any front-end.

Like Errbot's ``@botcmd`` over its backends: a command (:mod:`declare`) has a name,
parameters, the surfaces it is offered on (``cli``, ``shell``, ``slack``), who may
run it, a one-line summary and a handler that returns a model. The click CLI is
generated from the declarations; the shell, ``/rlmap`` and mentions go through
:meth:`Registry.read`, which finds the command a line names and hands the rest to
the same click parser (:mod:`parser`); help on every surface is generated from
the same declarations, so a new command is one place.

A chat line (shell, Slack) is a command only when its arguments fit the
declaration; otherwise it is a question for ``ask``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable

from rlmap_bot.commands.declare import (
    ALL,
    CHAT,
    Command,
    Param,
    Said,
    Surface,
    command_usage,
    surface_prefix,
    where_it_works,
)
from rlmap_bot.commands.parser import StrayWords, examples_for, parse_words
from rlmap_bot.errors import UsageError

__all__ = [
    "ALL",
    "CHAT",
    "Command",
    "Param",
    "Parsed",
    "Registry",
    "StrayWords",
    "Surface",
    "command_usage",
    "examples_for",
    "split_words",
    "surface_prefix",
]


@dataclass
class Parsed:
    """One invocation, whichever surface it came from: the command and its handler's arguments."""

    command: Command
    args: dict[str, Any] = field(default_factory=dict)


class Registry:
    """All commands, in declaration order; one per name."""

    def __init__(self, question: str = "ask", empty: str = "help") -> None:
        self._commands: dict[str, Command] = {}
        self.question, self.empty = question, empty  # what a chat line that names no command runs
        # Commands the terminal adds by hand (serve, shell,
        # key): never run from chat, but named there.
        self.terminal_only: set[str] = set()

    def add(self, command: Command) -> Command:
        if command.name in self._commands:
            raise ValueError(f"command {command.name!r} declared twice")
        self._commands[command.name] = command
        return command

    def command(
        self, name: str, summary: str | Said, *params: Param, **options: Any
    ) -> Callable[[Callable], Callable]:
        """Decorator: declare the function as the handler of command ``name``."""

        def register(handler: Callable) -> Callable:
            self.add(
                Command(
                    name=name, summary=summary, handler=handler, params=tuple(params), **options
                )
            )
            return handler

        return register

    def get(self, name: str) -> Command | None:
        """The command called ``name``, hidden ones included (a button names its command)."""
        return self._commands.get(name)

    def typed(self, name: str, surface: str) -> Command | None:
        """The command ``name`` as a line typed on ``surface`` may name it: offered there, not
        hidden."""
        found = self._commands.get(name)
        return (
            found if found is not None and surface in found.surfaces and not found.hidden else None
        )

    def all(self, surface: str | None = None, *, hidden: bool = False) -> list[Command]:
        """The commands offered on ``surface`` (every surface when None), in help's order;
        ``hidden``: with the commands only a button or a form runs."""
        found = [
            c
            for c in self._commands.values()
            if (surface is None or surface in c.surfaces) and (hidden or not c.hidden)
        ]
        return sorted(found, key=lambda c: (c.order, list(self._commands).index(c.name)))

    def groups(self, surface: str | None = None) -> dict[str, list[Command]]:
        """Sub-commands by their group word (``digest``, ``kb``)."""
        out: dict[str, list[Command]] = {}
        for command in self.all(surface):
            if len(command.words) > 1:
                out.setdefault(command.words[0], []).append(command)
        return out

    def names(self, surface: str) -> set[str]:
        return {c.words[0] for c in self.all(surface)}

    # -- chat parsing -------------------------------------------------------------------------
    def read(self, text: str, surface: str, context: Any = None) -> Parsed:
        """Any chat line as an invocation: the command it
        names, else a question (an empty line: help).
        """
        parsed = self.parse(text, surface, context)
        if parsed is not None:
            return parsed
        if not text.strip():
            return Parsed(self._commands[self.empty], {})
        return Parsed(self._commands[self.question], {"question": text})

    def parse(self, text: str, surface: str, context: Any = None) -> Parsed | None:
        """The command a chat line names, with its arguments; None when the line is a question.

        Raises :class:`UsageError` (with the usage line) when the line clearly names a
        command but its arguments are wrong, or when its first word is a near miss of a
        command and nothing else follows (``stagse``).
        """
        words = split_words(text)
        if not words:
            return None
        head = words[0].lower().rstrip(":")
        by_group = self.groups(surface)
        command = None
        rest = words[1:]
        if head in by_group and len(words) > 1:
            sub = self.typed(f"{head} {words[1].lower()}", surface)
            if sub is not None:
                command, rest = sub, words[2:]
        if command is None:
            other = self.elsewhere(words, surface)
            named = len(words) == 1 or (
                len(words) == 2
                and " ".join(w.lower() for w in words) in {c.name for c in self.all()}
            )
            if other is not None and (
                named or any(w.startswith("--") or _argument_like(w) for w in rest)
            ):
                raise UsageError(
                    other
                )  # `watch x --once`, `watch runs/x.log` in the shell: a command, just not here
        if command is None:
            single = self.typed(head, surface)
            if single is not None:
                command = single
            elif head in by_group:
                subs = ", ".join(c.words[1] for c in by_group[head])
                prefix = surface_prefix(surface)
                raise UsageError(
                    f"`{prefix}{head}` needs one of {subs}. " + self.usage_line(surface, head)
                )
        if command is None:
            near = self.near_miss(head, surface)
            # "stagse", or "shwo reward": a near miss of a
            # command that is no word is a typo, not a question.
            if near and (len(words) == 1 or not _is_a_word(context, head, near)):
                prefix = surface_prefix(surface)
                raise UsageError(f"unknown command `{words[0]}`; did you mean `{prefix}{near}`?")
            return None
        try:
            args = parse_words(command, rest, surface)
        except StrayWords:
            if command.strict:
                raise
            return None  # "stages of rollout?": the words do not fit, so it is a question
        if command.fits is not None and not command.fits(context, args):
            return None
        return Parsed(command, args)

    def elsewhere(self, words: list[str], surface: str) -> str | None:
        """Where a command not offered on ``surface`` can
        be used ("in Slack: `/rlmap watch`"), else None.

        Asked for ``help NAME``, for a line that is only a command's name (``digest``) or its
        name and sub-command (``digest subscribe``), and for a line with an ``--option``; any
        other longer line may be a question that starts with the word, so it is left to the search.
        """
        head = " ".join(w.lower() for w in words[:2])
        if words and words[0].lower() in self.terminal_only and surface != "cli":
            name = words[0].lower()
            return f"`{name}` is not a command here; " + where_it_works(name, ["cli"])
        found = [c for c in self.all() if c.name == head or c.words[0] == head]
        if not found and words:
            found = [c for c in self.all() if c.words[0] == words[0].lower()]
        if not found or any(surface in c.surfaces for c in found):
            return None
        name = found[0].words[0] if len(found) > 1 or found[0].name != head else found[0].name
        places = {s for c in found for s in c.surfaces} - {surface}
        return f"`{name}` is not a command here; " + where_it_works(name, places)

    def near_miss(self, word: str, surface: str) -> str | None:
        """A command name one or two edits from ``word`` (a typo of a command, not a question)."""
        from rapidfuzz import process
        from rapidfuzz.distance import OSA

        if len(word) < 3 or not word.isalpha():
            return None
        # Optimal string alignment: a swap of two letters
        # ("aks", "stagse") is one edit, as people type.
        edits = 1 if len(word) <= 6 else 2  # "rewrad" is two edits from "reload", one from "reward"
        found = process.extractOne(
            word, sorted(self.names(surface)), scorer=OSA.distance, score_cutoff=edits
        )
        return found[0] if found and found[0] != word else None

    def usage_line(self, surface: str, group: str | None = None) -> str:
        prefix = surface_prefix(surface)
        commands = [c for c in self.all(surface) if group is None or c.words[0] == group]
        return "Usage: " + " | ".join(prefix + c.usage(surface) for c in commands)


_ARGUMENT = re.compile(
    r"\d{4}\.\d{4,5}(v\d+)?|\S+\.(log|jsonl?|csv|txt|gz|db|ya?ml|png|tfevents\S*)", re.IGNORECASE
)


def _argument_like(word: str) -> bool:
    """A file name, a folder written as one (``runs/``, ``./out``, ``~/x``) or an arXiv id: what
    follows a command word, never a question's word. A bare "a/b" is not one: metric names
    ("actor/entropy") and "kl/entropy" are a question's words."""
    return (
        word.startswith(("/", "./", "../", "~/"))
        or word.endswith("/")
        or _ARGUMENT.fullmatch(word) is not None
    )


def _is_a_word(context: Any, word: str, command: str) -> bool:
    """Whether ``word`` is a word, so a question may start with it, as the search reads it: the
    catalog's, any word the store's English table lists ("outages", "reloaded"), or a typo closer
    to the catalog word it is corrected to than to ``command`` ("rewrad"; not "aks", which the table
    does not list). Without a core, assume so."""
    lexicon = getattr(getattr(context, "searcher", None), "lexicon", None)
    if lexicon is None:
        return True
    from rapidfuzz.distance import OSA

    from rlmap_bot.search.query import parse

    read = parse(word, lexicon).words
    if not read:
        return True  # a stopword
    first = read[0]
    if first.kind in ("known", "foreign") or first.zipf > 0:
        return True
    return first.fixed is not None and OSA.distance(word.lower(), first.fixed) < OSA.distance(
        word.lower(), command
    )


def split_words(text: str) -> list[str]:
    """Shell-like words ("show \"reward hacking\"" -> ["show",
    "reward hacking"]); unbalanced quotes fall back to spaces.
    """
    text = (text or "").strip()
    if not text:
        return []
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()
