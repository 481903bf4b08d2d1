"""The command registry: every command is declared once, every front-end dispatches into it.

Like Errbot's ``@botcmd`` over its backends: a command has a name, parameters,
the surfaces it is offered on (``cli``, ``shell``, ``slack``), who may run it, a
one-line summary and a handler that returns a model. The click CLI is generated
from the declarations; the shell, ``/rlmap`` and mentions go through
:meth:`Registry.parse`; help on every surface is generated from the same
declarations, so a new command is one place.

A chat line (shell, Slack) is a command only when its arguments fit the
declaration; otherwise it is a question for ``ask``.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal

from rlmap_bot.errors import UsageError

Surface = Literal["cli", "shell", "slack"]
ALL: frozenset[str] = frozenset({"cli", "shell", "slack"})
CHAT: frozenset[str] = frozenset({"shell", "slack"})


@dataclass(frozen=True)
class Param:
    """One parameter. ``kind``: ``arg`` (one word), ``rest`` (the rest of the line), ``option`` or ``flag``.

    ``word`` is the chat form of an option or flag (``by Schulman``, ``every 15m``,
    ``quiet``); ``--name`` always works too. ``surfaces`` limits where it exists
    (``--json`` is for the terminal).
    """

    name: str
    help: str
    kind: Literal["arg", "rest", "option", "flag"] = "option"
    type: Literal["str", "int", "path", "file", "date"] = "str"
    choices: tuple[str, ...] = ()
    default: Any = None
    required: bool = False
    multiple: bool = False
    word: str | None = None
    short: str | None = None
    metavar: str | None = None
    surfaces: frozenset[str] = ALL
    range: tuple[int | None, int | None] | None = None

    @property
    def flag_name(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def shown(self) -> str:
        """How the parameter appears in a usage line."""
        meta = self.metavar or self.name.upper()
        if meta.startswith("["):
            return meta  # the metavar spells out its own optional parts
        if self.kind == "arg":
            return meta if self.required else f"[{meta}]"
        if self.kind == "rest":
            return f"{meta}..." if self.required else f"[{meta}...]"
        if self.kind == "flag":
            return f"[{self.word or self.flag_name}]"
        form = f"{self.word} {meta}" if self.word else f"{self.flag_name} {meta}"
        return f"[{form}]"


@dataclass(frozen=True)
class Command:
    """A command as every front-end sees it."""

    name: str  # "ask", or "digest subscribe" for a sub-command
    summary: str
    handler: Callable[..., Any]
    params: tuple[Param, ...] = ()
    surfaces: frozenset[str] = ALL
    admin: bool = False  # Slack: only users in RLMAP_ADMINS
    strict: bool = False  # chat: arguments that do not fit are a usage error, not a question
    fits: Callable[[Any, dict[str, Any]], bool] | None = None  # chat: do these arguments make it a command?
    json: bool = False  # the terminal offers --json
    examples: tuple[str, ...] = ()
    help: str = ""
    order: int = 100

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.name.split())

    def params_for(self, surface: str) -> list[Param]:
        return [p for p in self.params if surface in p.surfaces]

    def examples_for(self, surface: str) -> list[str]:
        """The examples that are valid on ``surface``: each is bound as that surface would bind it."""
        fitting = []
        for example in self.examples:
            words = shlex.split(example)[len(self.words):]
            if surface == "cli" and self.json:
                words = [w for w in words if w != "--json"]
            try:
                bind(self, words, surface, suggest=False)
            except UsageError:
                continue
            fitting.append(example)
        return fitting

    def usage(self, surface: str) -> str:
        parts = [self.name, *(p.shown for p in self.params_for(surface))]
        if surface == "cli" and self.json:
            parts.append("[--json]")
        return " ".join(parts)


class StrayWords(UsageError):
    """Words a command does not take: in chat the line is then a question rather than this command."""


@dataclass
class Parsed:
    command: Command
    args: dict[str, Any] = field(default_factory=dict)


class Registry:
    """All commands, in declaration order; one per name."""

    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}

    def add(self, command: Command) -> Command:
        if command.name in self._commands:
            raise ValueError(f"command {command.name!r} declared twice")
        self._commands[command.name] = command
        return command

    def command(self, name: str, summary: str, *params: Param, **options: Any) -> Callable[[Callable], Callable]:
        """Decorator: declare the function as the handler of command ``name``."""

        def register(handler: Callable) -> Callable:
            self.add(Command(name=name, summary=summary, handler=handler, params=tuple(params), **options))
            return handler

        return register

    def get(self, name: str) -> Command | None:
        return self._commands.get(name)

    def all(self, surface: str | None = None) -> list[Command]:
        found = [c for c in self._commands.values() if surface is None or surface in c.surfaces]
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
            sub = self.get(f"{head} {words[1].lower()}")
            if sub is not None and surface in sub.surfaces:
                command, rest = sub, words[2:]
        if command is None and len(words) <= 2:
            other = self.elsewhere(words, surface)
            if other is not None and (len(words) == 1 or self.get(" ".join(w.lower() for w in words))):
                raise UsageError(other)
        if command is None:
            single = self.get(head)
            if single is not None and surface in single.surfaces:
                command = single
            elif head in by_group:
                subs = ", ".join(c.words[1] for c in by_group[head])
                prefix = surface_prefix(surface)
                raise UsageError(f"`{prefix}{head}` needs one of {subs}. " + self.usage_line(surface, head))
        if command is None:
            near = self.near_miss(head, surface)
            if near and len(words) == 1:
                prefix = surface_prefix(surface)
                raise UsageError(f"unknown command `{words[0]}`; did you mean `{prefix}{near}`?")
            return None
        try:
            args = bind(command, rest, surface)
        except StrayWords:
            if command.strict:
                raise
            return None  # "stages of rollout?": the words do not fit, so it is a question
        if command.fits is not None and not command.fits(context, args):
            return None
        return Parsed(command, args)

    def elsewhere(self, words: list[str], surface: str) -> str | None:
        """Where a command not offered on ``surface`` can be used ("in Slack: `/rlmap watch`"), else None.

        Asked for ``help NAME`` and for a line that is only a command's name (``digest``) or its
        name and sub-command (``digest subscribe``); a longer line may be a question that starts
        with the word, so it is left to the search.
        """
        head = " ".join(w.lower() for w in words[:2])
        found = [c for c in self.all() if c.name == head or c.words[0] == head]
        if not found and words:
            found = [c for c in self.all() if c.words[0] == words[0].lower()]
        if not found or any(surface in c.surfaces for c in found):
            return None
        name = found[0].words[0] if len(found) > 1 or found[0].name != head else found[0].name
        places = sorted({s for c in found for s in c.surfaces} - {surface}, key=["slack", "cli", "shell"].index)
        where = {"slack": f"in Slack (`/rlmap {name}`)", "cli": f"from the command line (`rlmap-bot {name}`)",
                 "shell": f"in the local shell (`{name}`)"}
        return f"`{name}` is not a command here; it works " + " and ".join(where[w] for w in places)

    def near_miss(self, word: str, surface: str) -> str | None:
        """A command name one or two edits from ``word`` (a typo of a command, not a question)."""
        from rapidfuzz import fuzz, process

        if len(word) < 3 or not word.isalpha():
            return None
        found = process.extractOne(word, sorted(self.names(surface)), scorer=fuzz.ratio, score_cutoff=75)
        return found[0] if found and found[0] != word else None

    def usage_line(self, surface: str, group: str | None = None) -> str:
        prefix = surface_prefix(surface)
        commands = [c for c in self.all(surface) if group is None or c.words[0] == group]
        return "Usage: " + " | ".join(prefix + c.usage(surface) for c in commands)


def surface_prefix(surface: str) -> str:
    """How a command is typed on a surface: `/rlmap ask`, `rlmap-bot ask`, or just `ask` in the shell."""
    return {"slack": "/rlmap ", "cli": "rlmap-bot "}.get(surface, "")


def split_words(text: str) -> list[str]:
    """Shell-like words ("show \"reward hacking\"" -> ["show", "reward hacking"]); unbalanced quotes fall back to spaces."""
    text = (text or "").strip()
    if not text:
        return []
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def convert(param: Param, raw: str) -> Any:
    """A chat word as the parameter's type; UsageError names the parameter."""
    if not raw.strip():
        raise UsageError(f"{param.flag_name} needs a value, not an empty one")
    if param.choices and raw.lower() not in param.choices:
        raise UsageError(f"{param.flag_name} takes one of {', '.join(param.choices)}, not {raw!r}")
    if param.type == "int":
        try:
            value = int(raw)
        except ValueError:
            raise UsageError(f"{param.flag_name} takes a whole number, not {raw!r}") from None
        low, high = param.range or (None, None)
        if (low is not None and value < low) or (high is not None and value > high):
            raise UsageError(f"{param.flag_name} must be from {low} to {high}, not {value}")
        return value
    if param.choices:
        return raw.lower()
    return raw


def bind(command: Command, words: Iterable[str], surface: str, suggest: bool = True) -> dict[str, Any]:
    """Match words to the command's parameters; UsageError when they do not fit.

    ``suggest`` adds an example to a missing-value message (off when checking the examples themselves).
    """
    params = command.params_for(surface)
    by_flag = {p.flag_name: p for p in params if p.kind in {"option", "flag"}}
    by_word = {p.word: p for p in params if p.word}
    positional = [p for p in params if p.kind in {"arg", "rest"}]
    args: dict[str, Any] = {}
    loose: list[str] = []
    items = list(words)
    i = 0
    while i < len(items):
        word = items[i]
        low = word.lower()
        param = by_flag.get(low) or (by_word.get(low) if low not in by_flag else None)
        if param is None and low.startswith("--"):
            raise UsageError(f"unknown option {word}. {command_usage(command, surface)}")
        if param is None:
            loose.append(word)
            i += 1
            continue
        if param.kind == "flag":
            args[param.name] = True
            i += 1
            continue
        if i + 1 >= len(items):
            raise UsageError(f"{word} needs a value. {command_usage(command, surface)}")
        value = convert(param, items[i + 1])
        if param.multiple:
            args.setdefault(param.name, []).append(value)
        else:
            args[param.name] = value
        i += 2
    for param in positional:
        if param.kind == "rest":
            if loose:
                args[param.name] = " ".join(loose)
                loose = []
        elif loose:
            args[param.name] = convert(param, loose.pop(0))
    if loose:
        raise StrayWords(f"unexpected words: {' '.join(loose)}. {command_usage(command, surface)}")
    for param in params:
        if param.required and param.name not in args:
            prefix = surface_prefix(surface)
            examples = command.examples_for(surface) if suggest else []
            example = f", e.g. `{prefix}{examples[0]}`" if examples else ""
            raise UsageError(f"`{prefix}{command.name}` needs {param.metavar or param.name.upper()} "
                             f"({param.help}){example}. {command_usage(command, surface)}")
    return args


def command_usage(command: Command, surface: str) -> str:
    prefix = surface_prefix(surface)
    return f"Usage: {prefix}{command.usage(surface)}"
