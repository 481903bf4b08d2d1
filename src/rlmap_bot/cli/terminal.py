"""Command results in a terminal (the CLI and the shell): one presenter, picked by the result's type.

Most results are text (:mod:`render`) or JSON; the few that are a conversation
or a stream are presented here, not special-cased by each front-end: a guided
diagnosis asks its questions at the prompt, a run's logs in an interactive
terminal go on to ask the person only what the logs could not tell, and
``ask -`` prints each answer as its question arrives.
"""

from __future__ import annotations

from functools import singledispatchmethod
from typing import Any

from rlmap_bot.cli import render
from rlmap_bot.cli.diagnose_flow import Ask, Say, run_guided
from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.results import AnswerStream
from rlmap_bot.diagnosis.flow import Step
from rlmap_bot.runs.diagnose import RunDiagnosis


class Terminal:
    """Where results go: ``say`` a line, ``ask`` for one. ``guided_after_logs``: an interactive terminal."""

    def __init__(self, ctx: Invocation, say: Say, ask: Ask, guided_after_logs: bool = False, prefix: str = ""):
        self.ctx, self.say, self.ask = ctx, say, ask
        self.guided_after_logs = guided_after_logs and not ctx.json
        self.prefix = prefix  # how a command is typed here, for hints (`rlmap-bot diagnose --resume ID`)

    @singledispatchmethod
    def show(self, result: Any) -> None:
        if result is not None:
            self.say(render.as_json(result) if self.ctx.json else render.text(result))

    @show.register
    def _(self, result: Step) -> None:
        run_guided(self.ctx.core, ask=self.ask, say=self.say, step=result, prefix=self.prefix)

    @show.register
    def _(self, result: RunDiagnosis) -> None:
        if not self.guided_after_logs:
            self.say(render.as_json(result) if self.ctx.json else render.text(result))
            return
        # In a terminal, the logs answer what they can and the person is asked only the rest.
        self.say(render.run_text(result, with_verdict=False) + "\n")
        step = self.ctx.core.flow.start(user=self.ctx.user, channel=self.ctx.channel, known=result.signals)
        self.show(step)

    @show.register
    def _(self, result: AnswerStream) -> None:
        for answer in result.answers:
            self.say(render.as_json(answer, indent=None) if self.ctx.json else render.text(answer) + "\n")

