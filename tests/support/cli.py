"""Running `rlmap-bot` as a user would: in-process
through click's CliRunner, or as the installed script.

Most command-line tests go through :func:`invoke` (the real command tree, parsing, exit codes and
output, without a process start); :func:`run_cli` starts the installed script for the few tests
where the process itself is the point (the bare command, stdin bytes, a real terminal).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def invoke(args: list[str], env: dict[str, str], stdin: str | bytes | None = None) -> Ran:
    """The CLI in this process, with ``env`` as the
    environment (as run_cli would give the process).
    """
    from rlmap_bot.cli.main import cli

    result = CliRunner().invoke(cli, args, input=stdin, env=env, catch_exceptions=False)
    return Ran(result.exit_code, result.stdout, result.stderr)


def shell(core, *lines: str) -> str:
    """The local shell on ``core``, each of ``lines`` typed in turn, then the end of input (which
    quits as `quit` does): everything it printed."""
    import io

    from rlmap_bot.cli.shell import run_shell

    out = io.StringIO()
    run_shell(core, stdin=io.StringIO("\n".join(lines) + "\n"), stdout=out)
    return out.getvalue()


def run_cli(
    args: list[str], env: dict[str, str], stdin: str | bytes | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("rlmap-bot")
    text = not isinstance(stdin, bytes)
    return subprocess.run(
        [str(exe), *args], input=stdin, capture_output=True, text=text, env=env, timeout=timeout
    )
