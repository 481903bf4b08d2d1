"""The local shell: the bot in a terminal, on the same core as Slack.

Like Hubot's shell adapter or Errbot's text backend, it is where a newcomer
tries everything without a workspace.  Any line that is not a command is a
question.  Errors are printed as one line; the shell never shows a traceback.
"""

from __future__ import annotations

import cmd
import logging
import sys
from typing import IO

from rlmap_bot.cli import render
from rlmap_bot.core import Core

log = logging.getLogger(__name__)

INTRO = """rlmap-bot shell: the RL Scaling Bottleneck Map, locally.
Ask anything (e.g. "why does my reward go up while evals drop?"), or type `help`.
Commands: ask, show ID, stages, papers, diagnose, help, quit."""


class Shell(cmd.Cmd):
    prompt = "rlmap> "
    intro = INTRO

    def __init__(self, core: Core, stdin: IO[str] | None = None, stdout: IO[str] | None = None):
        super().__init__(stdin=stdin, stdout=stdout)
        if stdin is not None:
            self.use_rawinput = False
        self.core = core

    # -- plumbing ---------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.stdout.write(text.rstrip() + "\n")

    def onecmd(self, line: str) -> bool:
        try:
            return super().onecmd(line)
        except KeyboardInterrupt:
            self.say("(interrupted)")
            return False
        except Exception as exc:  # noqa: BLE001 - the shell must survive any bad input
            log.debug("shell command failed", exc_info=True)
            self.say(f"error: {exc}")
            return False

    def emptyline(self) -> bool:
        return False

    def default(self, line: str) -> bool:
        if line.strip() in {"EOF"}:
            return self.do_quit("")
        return self.do_ask(line)

    # -- commands ---------------------------------------------------------------------------
    def do_ask(self, arg: str) -> bool:
        """ask QUESTION: search the map (any plain line does the same)."""
        if not arg.strip():
            self.say("usage: ask QUESTION   (for example: ask reward hacking)")
            return False
        self.say(render.answer_text(self.core.ask(arg)))
        return False

    def do_show(self, arg: str) -> bool:
        """show ID: the whole entry with its links."""
        entry_id = arg.strip()
        if not entry_id:
            self.say("usage: show ID   (ids appear in answers, e.g. show reward)")
            return False
        card = self.core.card(entry_id)
        if card is None:
            close = self.core.suggest_ids(entry_id)
            self.say(f"no entry {entry_id!r}" + (f"; did you mean: {', '.join(close)}?" if close else ""))
            return False
        self.say(render.card_text(card))
        return False

    def do_stages(self, arg: str) -> bool:
        """stages: the five stages of the map."""
        self.say(render.stages_text(self.core.stages()))
        return False

    def do_papers(self, arg: str) -> bool:
        """papers: every paper in the catalog."""
        self.say(render.papers_text(self.core.papers()))
        return False

    def do_diagnose(self, arg: str) -> bool:
        """diagnose: a guided diagnosis of your run, one question at a time."""
        from rlmap_bot.cli.diagnose_flow import run_guided

        run_guided(self.core, ask=self._prompt, say=self.say, user="shell", where="local")
        return False

    def _prompt(self, text: str) -> str | None:
        self.stdout.write(text)
        self.stdout.flush()
        line = self.stdin.readline() if not self.use_rawinput else _input()
        if line is None or line == "":
            return None
        return line.rstrip("\n")

    def do_help(self, arg: str) -> bool:
        """help: this list."""
        if arg.strip():
            return super().do_help(arg)
        self.say(
            "Commands:\n"
            "  ask QUESTION   search the map (or just type the question)\n"
            "  show ID        a whole entry with its links\n"
            "  stages         the five stages\n"
            "  papers         the papers in the catalog\n"
            "  diagnose       find the stage that binds your RL run\n"
            "  help           this list\n"
            "  quit           leave (also exit, Ctrl-D)"
        )
        return False

    def do_quit(self, arg: str) -> bool:
        """quit: leave the shell."""
        self.say("bye")
        return True

    do_exit = do_quit
    do_EOF = do_quit

    def parseline(self, line: str):
        # Let "show: x" or "Show X" work; keep the rest of cmd's parsing.
        stripped = line.strip()
        if stripped and stripped.split()[0].lower().rstrip(":") in self._commands():
            head, _, rest = stripped.partition(" ")
            line = head.lower().rstrip(":") + (" " + rest if rest else "")
        return super().parseline(line)

    def _commands(self) -> set[str]:
        return {name[3:] for name in self.get_names() if name.startswith("do_")}


def _input() -> str | None:
    try:
        return input() + "\n"
    except EOFError:
        return None


def run_shell(core: Core, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
    shell = Shell(core, stdin=stdin, stdout=stdout)
    try:
        shell.cmdloop()
    except KeyboardInterrupt:
        (stdout or sys.stdout).write("\nbye\n")


