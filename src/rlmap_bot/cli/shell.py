"""The local shell: the bot in a terminal, on the same core and commands as Slack.

Like Hubot's shell adapter or Errbot's text backend, it is where a newcomer tries
everything without a workspace. A line is a command only when its arguments fit
the command's declaration; any other line is a question, except "?" alone, which asks for
help (after a guided diagnosis paused: how to go on with it). Errors are one line;
unexpected ones are logged with their traceback to ``shell.log`` in RLMAP_HOME.
Ctrl-C cancels the line being typed; Ctrl-D or ``quit`` leaves.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import IO

from rlmap_bot.commands import REGISTRY, run
from rlmap_bot.commands.context import Invocation
from rlmap_bot.core import Core
from rlmap_bot.errors import RlmapError

log = logging.getLogger(__name__)

INTRO = """rlmap-bot shell: the RL Scaling Bottleneck Map, locally.
Ask anything (e.g. "why does my reward go up while evals drop?"), or type `help`."""
QUIT = {"quit", "exit", "bye", "q", ":q"}
# A line of question marks alone asks for help: "?" skips a question inside a guided diagnosis, and
# typed on after that diagnosis pauses it asks what now (it was searched as a question).
ASKS_HELP = {"?", "??", "???"}
PROMPT = "rlmap> "


class Shell:
    def __init__(self, core: Core, stdin: IO[str] | None = None, stdout: IO[str] | None = None):
        self.core = core
        self.stdin = stdin
        self.stdout = stdout or sys.stdout
        self.paused: str | None = None  # a guided diagnosis the last line left open
        #: Where the shell draws every run it reads: the shell's own, set when it opens (as its
        #: log file is), so each line's invocation is handed it rather than reading settings again.
        self.charts = core.settings.data_dir / "charts"

    def say(self, text: str) -> None:
        self.stdout.write(text.rstrip() + "\n")
        self.stdout.flush()

    def read(self, prompt: str) -> str | None:
        """One line, or None at end of input. Ctrl-C at an interactive prompt cancels the line."""
        if self.stdin is not None:  # not interactive: lines come from the given stream
            self.stdout.write(prompt)
            line = self.stdin.readline()
            return None if line == "" else line.rstrip("\n")
        while True:
            try:
                return input(prompt)
            except EOFError:
                return None
            except KeyboardInterrupt:
                self.stdout.write("^C\n")

    def loop(self) -> None:
        self.say(INTRO)
        while True:
            line = self.read(PROMPT)
            if line is None:
                break
            if line.strip().lower() in QUIT:
                break
            if not self.handle(line):
                break
        self.say("bye")

    def handle(self, line: str) -> bool:
        """Run one line; False when the shell should end."""
        if not line.strip():
            return True
        try:
            self.dispatch(line)
        except KeyboardInterrupt:
            self.say("(interrupted)")
        except RlmapError as exc:
            self.say(f"error: {exc}")
        except Exception as exc:  # noqa: BLE001 - the shell must survive any bad input
            log.debug("shell line failed: %r", line, exc_info=True)
            self.say(
                f"error: something went wrong ({type(exc).__name__}); details are in "
                f"{log_path(self.core)}"
            )
        return True

    def dispatch(self, line: str) -> None:
        from rlmap_bot.cli.terminal import Terminal
        from rlmap_bot.runs.sources.access import local_access

        ctx = Invocation.of(
            self.core,
            "shell",
            user="shell",
            channel="local",
            admin=True,
            local=True,
            charts=self.charts,
            run_access=local_access,
        )
        show = Terminal(ctx, say=self.say, ask=self.read).show
        if line.strip() in ASKS_HELP:
            self.help(ctx, show)
            return
        self.paused = None
        result = run(REGISTRY.read(line, "shell", self.core), ctx)
        show(result)
        self.paused = self.left_open(result)

    def help(self, ctx: Invocation, show) -> None:
        """ "?": after a diagnosis paused, how to go on with it; then the commands."""
        if self.paused is not None:
            short = self.paused[:8]
            self.say(
                f"Diagnosis {short} is paused. Measure one of the checks above, then `diagnose "
                f"--resume {short}` picks the readings you have from a list; `diagnose --list` "
                f"shows every open diagnosis."
            )
        show(run(REGISTRY.read("help", "shell", self.core), ctx))

    def left_open(self, result) -> str | None:
        """The id of the guided diagnosis ``result`` started or resumed, when its conversation
        ended with it still open (paused, or input ended), else None."""
        from rlmap_bot.results.diagnosis import Step
        from rlmap_bot.results.guided import GuidedRun

        step = result.step if isinstance(result, GuidedRun) else result
        if not isinstance(step, Step):
            return None
        try:
            session = self.core.flow.load(step.session.id)
        except RlmapError:
            return None  # nothing answered, so nothing kept
        return session.id if session.status == "open" else None


def log_path(core: Core) -> Path:
    return core.settings.data_dir / "shell.log"


def _log_to_file(core: Core) -> None:
    """Debug-level details of shell errors go to
    RLMAP_HOME/shell.log (the screen shows one line).
    """
    path = log_path(core)
    logger = logging.getLogger("rlmap_bot")
    if any(getattr(h, "baseFilename", None) == str(path) for h in logger.handlers):
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    except OSError:
        return  # an unwritable home: the one-line errors on screen still say what happened
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    log.setLevel(logging.DEBUG)  # the shell's own details; other modules keep their levels


def run_shell(core: Core, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
    _log_to_file(core)
    Shell(core, stdin=stdin, stdout=stdout).loop()
