"""Command results in a terminal (the CLI and the
shell): one presenter, picked by the result's type.

Most results are text (:mod:`render`) or JSON; the few that are a conversation
or a stream are presented here, not special-cased by each front-end: a guided
diagnosis asks its questions at the prompt, a run's logs read at a prompt
(:class:`GuidedRun`) go on to ask the person only what the logs could not tell,
and ``ask -`` prints each answer as its question arrives.
"""

from __future__ import annotations

from functools import singledispatchmethod
from typing import TYPE_CHECKING, Any

from rlmap_bot.cli import render
from rlmap_bot.cli.diagnose_flow import Ask, Say, run_guided
from rlmap_bot.results.ask import AnswerStream, Unanswered
from rlmap_bot.results.diagnosis import Step
from rlmap_bot.results.guided import GuidedRun
from rlmap_bot.results.watch import Following, Said

if TYPE_CHECKING:
    from rlmap_bot.commands.context import Invocation


class Terminal:
    """Where results go: ``say`` a line, ``ask`` for one."""

    def __init__(self, ctx: Invocation, say: Say, ask: Ask, prefix: str = ""):
        self.ctx, self.say, self.ask = ctx, say, ask
        self.prefix = (
            prefix  # how a command is typed here, for hints (`rlmap-bot diagnose --resume ID`)
        )

    @singledispatchmethod
    def show(self, result: Any) -> None:
        """A document: text, or JSON with ``--json``."""
        self.say(render.as_json(result) if self.ctx.json else render.text(result))

    @show.register
    def _(self, result: None) -> None:
        """Nothing to show (the command told the person already)."""

    @show.register
    def _(self, result: Step) -> None:
        run_guided(self.ctx.core, ask=self.ask, say=self.say, step=result, prefix=self.prefix)

    @show.register
    def _(self, result: GuidedRun) -> None:
        self.say(render.run_text(result.readings, with_verdict=False) + "\n")
        self.show(result.step)

    @show.register
    def _(self, result: AnswerStream) -> None:
        for answer in result.answers:
            if self.ctx.json:
                self.say(render.as_json(answer, indent=None))
            elif isinstance(
                answer, Unanswered
            ):  # text: each answer under its question, a blank line said so
                self.say("> (an empty line: no question)\n")
            else:
                self.say(f"> {answer.query}\n" + render.text(answer) + "\n")

    @show.register
    def _(self, result: Following) -> None:
        """Follow the run until Ctrl-C: each check's alerts
        as they come (text, or a JSON line each).
        """
        import time

        from rlmap_bot.watch.follow import follow
        from rlmap_bot.watch.service import WatchService

        def said(item: Said) -> None:
            if self.ctx.json:
                self.say(
                    render.as_json(item.result if item.result is not None else item, indent=None)
                )
            else:
                self.say(
                    render.text(item.result) + "\n"
                    if item.result is not None
                    else f"-- {item.line}"
                )

        self.say(
            f"Following {result.source}, a check every {result.seconds:g} s; Ctrl-C stops."
            if not self.ctx.json
            else render.as_json(result, indent=None)
        )
        try:
            follow(WatchService(self.ctx.core), result.source, said, time.sleep, result.seconds)
        except KeyboardInterrupt:
            if not self.ctx.json:
                self.say("Stopped following.")
