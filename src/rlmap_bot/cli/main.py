"""The ``rlmap-bot`` command line: click commands generated from the command registry.

Every command is declared once in :mod:`rlmap_bot.commands`; the click command for
each comes from :mod:`rlmap_bot.commands.parser` (the parser chat lines use too).
This module adds the group, the terminal-only commands (serve, shell, key) and a
callback that runs the command and hands the result to the terminal presenter
(text, or JSON with ``--json``). Problems are one line on standard error with the error's
exit code (2 for bad input or usage), never a traceback; with ``--json``, also a JSON object
(``error``, ``exit_code``) on standard output, so what reads the JSON is told too.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rlmap_bot.commands import REGISTRY, run
from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.parser import arguments, click_command
from rlmap_bot.commands.registry import Command, Parsed
from rlmap_bot.errors import RlmapError

if TYPE_CHECKING:
    from rlmap_bot.core import Core
    from rlmap_bot.settings import Settings


class TerminalFrontEnd:
    """What every CLI command shares: the paths, and the core, opened on first use."""

    def __init__(self, knowledge: Path | None, db: Path | None):
        from rlmap_bot.paths import Paths

        self.paths = Paths.from_env()
        self.knowledge = knowledge or self.paths.knowledge_dir
        self.db = db or self.paths.knowledge_db
        self._core: Core | None = None
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        """Every setting, validated on first use (a plain ask never needs them: rlmap_bot.paths)."""
        if self._settings is None:
            from rlmap_bot.settings import load_settings

            self._settings = load_settings()
        return self._settings

    def core(self) -> Core:
        if self._core is None:
            from rlmap_bot.core import Core

            # The settings already validated, if a command needed them; else the core reads its own.
            self._core = Core(self.knowledge, self.db, settings=self._settings)
            if self._core.warning:
                click.echo(f"warning: {self._core.warning}", err=True)
        return self._core

    def invocation(self, json_output: bool = False) -> Invocation:
        from rlmap_bot.runs.sources.access import local_access

        return Invocation(
            open_core=self.core,
            surface="cli",
            knowledge_root=Path(self.knowledge),
            db_path=Path(self.db),
            user=os.environ.get("USER", "local"),
            channel="terminal",
            json=json_output,
            lines=stdin_lines,
            local=True,
            conversation=sys.stdin.isatty() and not json_output,
            run_access=local_access,
        )


def fail(message: str, code: int = 1) -> None:
    """Each problem on its own `error:` line (a catalog
    with several mistakes names them all), then exit.
    """
    for line in str(message).splitlines() or [""]:
        click.echo(f"error: {line}", err=True)
    sys.exit(code)


def stdin_lines():
    """Standard input as text lines, undecodable bytes replaced (never a decoding traceback)."""
    for raw in sys.stdin.buffer:
        yield raw.decode("utf-8", "replace").rstrip("\r\n")


# -- the registry's commands as click commands ---------------------------------------------------
def _make(command: Command, name: str) -> click.Command:
    """The declaration's click command
    (:mod:`rlmap_bot.commands.parser`) with the terminal's callback.
    """

    def callback(**values: Any) -> None:
        front_end = click.get_current_context().find_object(TerminalFrontEnd)
        assert front_end is not None, (
            "the rlmap-bot group sets its TerminalFrontEnd before any command runs"
        )
        ctx = front_end.invocation(json_output=bool(values.pop("json_output", False)))
        try:
            result = run(Parsed(command, arguments(command, "cli", values)), ctx)
            from rlmap_bot.cli.diagnose_flow import terminal_prompt
            from rlmap_bot.cli.terminal import Terminal

            Terminal(ctx, say=click.echo, ask=terminal_prompt, prefix="rlmap-bot ").show(result)
        except RlmapError as exc:
            if ctx.json:  # what reads the JSON gets the error as JSON too (and the exit code)
                click.echo(json.dumps({"error": str(exc), "exit_code": exc.exit_code}))
            fail(str(exc), exc.exit_code)

    return click_command(command, "cli", name=name, callback=callback)


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--knowledge",
    type=click.Path(path_type=Path),
    help="Knowledge folder (default: $RLMAP_KNOWLEDGE or the bundled one).",
)
@click.option(
    "--db", type=click.Path(path_type=Path), help="Knowledge store file (default: $RLMAP_DB)."
)
@click.version_option(package_name="rlmap-bot")
@click.pass_context
def cli(ctx: click.Context, knowledge: Path | None, db: Path | None) -> None:
    """rlmap-bot: the RL Scaling Bottleneck Map in your terminal and your Slack.

    With no command: serves Slack when Slack credentials are set (SLACK_BOT_TOKEN, or
    SLACK_CLIENT_ID for many workspaces), else starts the local shell.
    """
    ctx.obj = TerminalFrontEnd(knowledge, db)
    if ctx.invoked_subcommand is None:
        if ctx.obj.settings.slack_wanted:
            from rlmap_bot.slack.serve import serve_from_env

            serve_from_env(ctx.obj, http=not ctx.obj.settings.slack_app_token)
        else:
            from rlmap_bot.cli.shell import run_shell

            run_shell(ctx.obj.core())


@cli.command()
@click.option("--http", is_flag=True, help="Serve the Events API over HTTP instead of Socket Mode.")
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="HTTP address to bind (with --http)."
)
@click.option(
    "--port",
    default=3000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="HTTP port (with --http).",
)
@click.pass_obj
def serve(front_end: TerminalFrontEnd, http: bool, host: str, port: int) -> None:
    """Run the Slack app: Socket Mode with SLACK_APP_TOKEN, or --http at /slack/events."""
    from rlmap_bot.slack.serve import serve_from_env

    serve_from_env(front_end, http=http, host=host, port=port)


@cli.command()
@click.pass_obj
def shell(front_end: TerminalFrontEnd) -> None:
    """Start the local shell (any line that is not a command is a question)."""
    from rlmap_bot.cli.shell import run_shell

    run_shell(front_end.core())


@cli.group()
def key() -> None:
    """Encryption keys for Slack tokens at rest (RLMAP_ENCRYPTION_KEY)."""


@key.command("new")
def key_new() -> None:
    """Print a new Fernet key (to put first in
    RLMAP_ENCRYPTION_KEY; keep the old one after it to rotate).
    """
    from rlmap_bot.crypto import new_key

    click.echo(new_key())


def _attach_registry(group: click.Group) -> None:
    groups: dict[str, click.Group] = {}
    for command in REGISTRY.all("cli"):
        words = command.words
        if len(words) == 1:
            group.add_command(_make(command, words[0]))
            continue
        sub = groups.get(words[0])
        if sub is None:
            sub = groups[words[0]] = click.Group(words[0], help=_GROUP_HELP.get(words[0], ""))
            group.add_command(sub)
        sub.add_command(_make(command, words[1]))


_GROUP_HELP = {
    "kb": "Build, check and inspect the knowledge store.",
    "digest": "Digests of new catalog entries (subscriptions live in Slack: /rlmap digest).",
}
_attach_registry(cli)


def main() -> None:
    try:
        cli(standalone_mode=True)
    except RlmapError as exc:
        fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
