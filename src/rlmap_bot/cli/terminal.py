"""Command results in a terminal (the CLI and the
shell): one presenter, picked by the result's type.

Most results are text (:mod:`render`) or JSON; ``ask -`` prints each answer as its question
arrives. The conversations (a guided diagnosis at the prompt, a run's readings that go on to
ask what the logs could not tell, a run followed until Ctrl-C) are in :mod:`conversations`, one
of the terminal's features (:func:`render.load_features`): loaded, with the renderers, the first
time a result no loaded presenter takes comes, so a plain ``ask`` loads none of their models.
"""

from __future__ import annotations

from functools import singledispatchmethod
from typing import TYPE_CHECKING, Any

from rlmap_bot.cli import render
from rlmap_bot.results.ask import AnswerStream, Unanswered

if TYPE_CHECKING:
    from rlmap_bot.cli.diagnose_flow import Ask, Say
    from rlmap_bot.commands.context import Invocation


class Terminal:
    """Where results go: ``say`` a line, ``ask`` for one."""

    def __init__(self, ctx: Invocation, say: Say, ask: Ask, prefix: str = ""):
        self.ctx, self.say, self.ask = ctx, say, ask
        # How a command is typed here, for hints (`rlmap-bot diagnose --resume ID`).
        self.prefix = prefix

    @singledispatchmethod
    def show(self, result: Any) -> None:
        """A document: text, or JSON with ``--json`` (after the features are loaded, in case this
        result is one of their conversations)."""
        if not _document(type(result)) and render.load_features():
            return self.show(result)
        self.say(render.as_json(result) if self.ctx.json else render.text(result))

    @show.register
    def _(self, result: None) -> None:
        """Nothing to show (the command told the person already)."""

    @show.register
    def _(self, result: AnswerStream) -> None:
        for answer in result.answers:
            if self.ctx.json:
                self.say(render.as_json(answer, indent=None))
            elif isinstance(
                answer, Unanswered
            ):  # each answer under its question; a blank line said so
                self.say("> (an empty line: no question)\n")
            else:
                self.say(f"> {answer.query}\n" + render.text(answer) + "\n")


def _document(kind: type) -> bool:
    """Whether a loaded text renderer takes ``kind``."""
    return render.text.dispatch(kind) is not render.text.dispatch(object)
