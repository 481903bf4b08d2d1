"""The command core: every command declared once
(:mod:`registry`), run the same way from every front-end.

Every surface turns its input into a :class:`Parsed` invocation (the terminal through
the click command generated from the declaration, chat lines through
:meth:`Registry.read`, which drives the same click parser), calls :func:`run` and
renders the typed result it gets back. ``REGISTRY`` holds the built-in commands.
Handlers import what they need when they run, so building the registry (every
CLI start) stays cheap.
"""

from __future__ import annotations

from typing import Any

from rlmap_bot.commands import (
    admin,
    catalog,
    credentials,
    curate,
    details,
    diagnose,
    digest,
    scale,
    watch,
)
from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.registry import Command, Param, Parsed, Registry

#: The terminal's own commands (rlmap_bot.cli.main adds them to click by hand): chat lines that
#: name them are told where they work, not searched.
TERMINAL_ONLY = frozenset({"serve", "shell", "key"})


def build_registry() -> Registry:
    registry = Registry()
    for module in (catalog, diagnose, scale, digest, watch, curate, admin, credentials, details):
        module.register(registry)
    registry.terminal_only |= TERMINAL_ONLY
    return registry


REGISTRY = build_registry()


def run(parsed: Parsed, ctx: Invocation) -> Any:
    """The one way a command runs: its handler with the
    parsed arguments; the result is a model to render.
    """
    return parsed.command.handler(ctx, **parsed.args)


__all__ = [
    "REGISTRY",
    "TERMINAL_ONLY",
    "Command",
    "Invocation",
    "Param",
    "Parsed",
    "Registry",
    "build_registry",
    "run",
]
