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
        raise UsageError("Only the admins in RLMAP_ADMINS can reload the catalog.")
    counts = ctx.core.reload()
    return Notice(
        text="Reloaded: " + ", ".join(f"{n} {k}{'' if n == 1 else 's'}" for k, n in counts.items())
    )


INTRO = {
    "shell": "Ask anything (any line that is not a command is a question), or use a command:",
    "slack": (
        "*Ask* me about the five stages of an RL system, the Scaling Laws topic and the papers on "
        "them: "
        "mention me in a channel (I answer in a thread), send me a DM, or use `/rlmap ask "
        "QUESTION` for a "
        "private answer with a button to share it. *Diagnose* a run with `/rlmap diagnose`: answer "
        "in the "
        "thread with the buttons or by typing values. *Watch* a run's log with `/rlmap watch "
        "PATH`: I post "
        "here when a stage starts to bind or the loss goes NaN. Commands:"
    ),
    "cli": "Commands:",
}
OUTRO = {
    "shell": "Leave with quit (also exit, Ctrl-D).",
    "slack": "Anything else after `/rlmap` is a question.",
    "cli": "Also `rlmap-bot serve` (the Slack app), `rlmap-bot shell` and `rlmap-bot key`: "
    "`rlmap-bot --help` lists "
    "every command.",
}


def help_for(
    registry: Registry, surface: str, command: str | None = None, problem: str | None = None
) -> Help:
    """Help generated from the declarations, for one surface."""
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
            entries.append(HelpEntry(usage=prefix + c.usage(surface), summary=c.summary))
            entries += [
                HelpEntry(usage=p.shown, summary=p.help, kind="option")
                for p in c.params_for(surface)
            ]
            entries += [
                HelpEntry(usage=prefix + e, summary="", kind="example")
                for e in examples_for(c, surface)
            ]
        return Help(intro="", commands=entries, problem=problem)
    entries = [
        HelpEntry(usage=prefix + c.usage(surface), summary=c.summary) for c in registry.all(surface)
    ]
    if surface == "shell":
        entries.append(HelpEntry(usage="quit", summary="leave the shell"))
    return Help(
        intro=INTRO.get(surface, ""),
        commands=entries,
        outro=OUTRO.get(surface, ""),
        problem=problem,
    )
