"""The command core: every command declared once (:mod:`registry`), dispatched by every front-end.

``REGISTRY`` holds the built-in commands. Handlers import what they need when they
run, so building the registry (every CLI start) stays cheap.
"""

from __future__ import annotations

from typing import Any

from rlmap_bot.commands import admin, catalog, curate, diagnose, digest, watch
from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.registry import Command, Param, Parsed, Registry


def build_registry() -> Registry:
    registry = Registry()
    for module in (catalog, diagnose, digest, watch, curate, admin):
        module.register(registry)
    return registry


REGISTRY = build_registry()


def run(parsed: Parsed, ctx: Invocation) -> Any:
    """Call the handler with the parsed arguments; the result is a model for the front-end to render."""
    return parsed.command.handler(ctx, **parsed.args)


__all__ = ["REGISTRY", "Command", "Invocation", "Param", "Parsed", "Registry", "build_registry", "run"]
