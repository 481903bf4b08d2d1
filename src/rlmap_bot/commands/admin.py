"""Help and reload: commands about the bot itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.declare import surface_prefix
from rlmap_bot.commands.registry import CHAT, Param, Registry, examples_for
from rlmap_bot.errors import UsageError

if TYPE_CHECKING:
    from rlmap_bot.results.general import Help, Notice


def register(registry: Registry) -> None:
    def help_(ctx: Invocation, command: str | None = None) -> Help:
        return help_for(registry, ctx.surface, command)

    def names_a_command(_core: object, args: dict) -> bool:
        """`help diagnose` and `help nosuch` are commands (one
        word); `help me with reward hacking` is a question.
        """
        wanted = " ".join(str(args.get("command", "")).lower().split())
        return len(wanted.split()) <= 1 or any(
            wanted in {c.name, c.words[0]} for c in registry.all()
        )

    registry.command(
        "help",
        "this list (or `help COMMAND` for one command)",
        Param("command", "a command name", kind="rest", metavar="COMMAND"),
        surfaces=CHAT | {"cli"},
        order=90,
        fits=names_a_command,
    )(help_)
    registry.command(
        "reload",
        "rebuild the catalog from the knowledge files (admins)",
        surfaces=CHAT,
        admin=True,
        order=91,
    )(reload)


def reload(ctx: Invocation) -> Notice:
    from rlmap_bot.results.general import Notice

    if not ctx.admin:
        raise UsageError(
            "Only the admins of this workspace (its Slack admins and owners, and anyone "
            "RLMAP_ADMINS names for it) can reload the catalog."
        )
    counts = ctx.core.reload()
    return Notice(
        text="Reloaded: " + ", ".join(f"{n} {k}{'' if n == 1 else 's'}" for k, n in counts.items())
    )


def help_for(
    registry: Registry, surface: str, command: str | None = None, problem: str | None = None
) -> Help:
    """Help generated from the declarations, for one surface: the commands the registry offers
    there, written as they are typed there. Each surface's renderer adds its own words around
    them (how to ask a question, how to leave the shell)."""
    from rlmap_bot.results.general import Help, HelpEntry

    prefix = surface_prefix(surface)
    if command:
        wanted = " ".join(command.lower().split())
        found = [c for c in registry.all(surface) if c.name == wanted or c.words[0] == wanted]
        if not found:
            near = registry.near_miss(wanted, surface)
            hint = f"did you mean `{prefix}{near}`? " if near else ""
            raise UsageError(
                registry.elsewhere(wanted.split(), surface)
                or f"no command {command!r}; {hint}`{prefix}help` lists them"
            )
        entries = []
        for c in found:
            entries.append(
                HelpEntry(usage=prefix + c.usage(surface), summary=c.summary_on(surface))
            )
            entries += [
                HelpEntry(usage=p.shown, summary=p.help_on(surface), kind="option")
                for p in c.params_for(surface)
            ]
            entries += [
                HelpEntry(usage=prefix + e, summary="", kind="example")
                for e in examples_for(c, surface)
            ]
        return Help(surface=surface, command=wanted, commands=entries, problem=problem)
    entries = [
        HelpEntry(usage=prefix + c.usage(surface), summary=c.summary_on(surface))
        for c in registry.all(surface)
    ]
    return Help(surface=surface, commands=entries, problem=problem)
