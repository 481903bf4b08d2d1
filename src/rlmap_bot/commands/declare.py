"""What a command is: its name, parameters, surfaces and handler, declared once.

Like Errbot's ``@botcmd`` over its backends. These are plain declarations; reading
a line or argv against them is :mod:`rlmap_bot.commands.parser`, finding the
command a chat line names is :mod:`rlmap_bot.commands.registry`.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal

Surface = Literal["cli", "shell", "slack"]
ALL: frozenset[str] = frozenset({"cli", "shell", "slack"})
CHAT: frozenset[str] = frozenset({"shell", "slack"})


@dataclass(frozen=True)
class Said:
    """Words that differ by surface: what Slack says, and what the terminal (the command line and
    the shell) says. Help in Slack names no terminal flag ("--once") and no "here"; the terminal's
    names what only it has."""

    slack: str
    terminal: str

    def on(self, surface: str) -> str:
        return self.slack if surface == "slack" else self.terminal


def said(text: str | Said, surface: str) -> str:
    """``text`` as ``surface`` says it."""
    return text.on(surface) if isinstance(text, Said) else text


@dataclass(frozen=True)
class Param:
    """One parameter. ``kind``: ``arg`` (one word), ``rest``
    (the rest of the line), ``option`` or ``flag``.

    ``word`` is the chat form of an option or flag (``by Schulman``, ``every 15m``,
    ``quiet``); ``--name`` always works too. ``phrase``: in chat, its value runs over the
    following words up to the next chat word, option or word of a question's (``by Google
    Brain``; commands/parser.py: PHRASE_STOPS), as a person
    writes a name. ``surfaces`` limits where it exists
    (``--json`` is for the terminal).
    """

    name: str
    help: str | Said
    kind: Literal["arg", "rest", "option", "flag"] = "option"
    type: Literal["str", "int", "path", "file", "date"] = "str"
    choices: tuple[str, ...] = ()
    default: Any = None
    required: bool = False
    multiple: bool = False
    word: str | None = None
    phrase: bool = False
    short: str | None = None
    metavar: str | None = None
    surfaces: frozenset[str] = ALL
    range: tuple[int | None, int | None] | None = None

    def help_on(self, surface: str) -> str:
        return said(self.help, surface)

    @property
    def flag_name(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def label(self) -> str:
        """How a message names it: ``--by`` for an option, ``PATH`` for an argument."""
        return (
            self.flag_name
            if self.kind in {"option", "flag"}
            else (self.metavar or self.name.upper())
        )

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
    """A command as every front-end sees it.

    ``excludes`` lists groups of parameters of which at most one may be given
    (``diagnose --list --resume ID`` is refused, not half obeyed).
    """

    name: str  # "ask", or "digest subscribe" for a sub-command
    summary: str | Said
    handler: Callable[..., Any]
    params: tuple[Param, ...] = ()
    surfaces: frozenset[str] = ALL
    admin: bool = False  # Slack: only the workspace's admins (slack/admins.py)
    strict: bool = False  # chat: arguments that do not fit are a usage error, not a question
    fits: Callable[[Any, dict[str, Any]], bool] | None = (
        None  # chat: do these arguments make it a command?
    )
    json: bool = False  # the terminal offers --json
    excludes: tuple[tuple[str, ...], ...] = ()
    #: Run only by a button or a form (a chat front-end's ``press``), never read from a typed
    #: line nor listed in help: its arguments (a session id, a suggestion id) are a card's.
    hidden: bool = False
    examples: tuple[str, ...] = ()
    help: str = ""
    order: int = 100
    #: Its result carries a chart, drawn into the folder the front-end lends
    #: (``Invocation.charts``): a chat front-end lends a temporary one for the request and uploads
    #: the chart from it.
    charts: bool = False

    @property
    def returns(self) -> tuple[type, ...]:
        """What the command returns: the types of its handler's return annotation (mypy holds the
        handler to it; every front-end that offers the command renders each of them)."""
        return result_types(self.handler)

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.name.split())

    def summary_on(self, surface: str) -> str:
        return said(self.summary, surface)

    def params_for(self, surface: str) -> list[Param]:
        return [p for p in self.params if surface in p.surfaces]

    def usage(self, surface: str) -> str:
        parts = [self.name, *(p.shown for p in self.params_for(surface))]
        if surface == "cli" and self.json:
            parts.append("[--json]")
        return " ".join(parts)


def surface_prefix(surface: str) -> str:
    """How a command is typed on a surface: `/rlmap ask`,
    `rlmap-bot ask`, or just `ask` in the shell.
    """
    return {"slack": "/rlmap ", "cli": "rlmap-bot "}.get(surface, "")


def where_it_works(typed: str, places: Iterable[str]) -> str:
    """ "it works in Slack (`/rlmap watch`) and from the command line (`rlmap-bot watch`)": where
    ``typed`` (a command, or a command and an option) can be used instead."""
    words = {"slack": "in Slack", "cli": "from the command line", "shell": "in the local shell"}
    shown = [
        f"{words[s]} (`{surface_prefix(s)}{typed}`)"
        for s in ("slack", "cli", "shell")
        if s in set(places)
    ]
    return "it works " + " and ".join(shown)


def command_usage(command: Command, surface: str) -> str:
    return f"Usage: {surface_prefix(surface)}{command.usage(surface)}"


def result_types(handler: Callable[..., Any]) -> tuple[type, ...]:
    """The types a handler's return annotation names (each member of a union; ``None`` as NoneType).

    Handlers name their result types under ``TYPE_CHECKING`` so that building the registry (every
    start, ``--help`` included) loads no model; the annotation is resolved here, on demand, against
    the result models of :mod:`rlmap_bot.results`.
    """
    hints = typing.get_type_hints(handler, globalns={**_result_namespace(), **handler.__globals__})
    found = hints.get("return", Any)
    members = (
        typing.get_args(found)
        if typing.get_origin(found) in (typing.Union, types.UnionType)
        else (found,)
    )
    return tuple(type(None) if m is None else m for m in members)


@functools.cache
def _result_namespace() -> dict[str, Any]:
    """Every class the modules of :mod:`rlmap_bot.results` define or name, by its name."""
    from rlmap_bot import results

    out: dict[str, Any] = {}
    for info in pkgutil.iter_modules(results.__path__):
        module = importlib.import_module(f"{results.__name__}.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, type) and not name.startswith("_"):
                if out.setdefault(name, value) is not value:
                    raise TypeError(f"two result types are called {name}: {out[name]} and {value}")
    return out
