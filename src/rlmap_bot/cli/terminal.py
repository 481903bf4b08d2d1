"""Command results in a terminal (the CLI and the shell): one presenter, picked by the result's type.

Most results are text (:mod:`render`) or JSON; the few that are a conversation
or a stream are presented here, not special-cased by each front-end: a guided
diagnosis asks its questions at the prompt, a run's logs in an interactive
terminal go on to ask the person only what the logs could not tell, and
``ask -`` prints each answer as its question arrives. As in :mod:`render`, the
presenter goes by class name, so a plain ``ask`` imports no diagnosis code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmap_bot.cli import render
from rlmap_bot.cli.diagnose_flow import Ask, Say, run_guided

if TYPE_CHECKING:
    from rlmap_bot.commands.context import Invocation
    from rlmap_bot.commands.results import AnswerStream
    from rlmap_bot.diagnosis.flow import Step
    from rlmap_bot.runs.diagnose import RunDiagnosis
    from rlmap_bot.watch.follow import Following, Said

class Terminal:
    """Where results go: ``say`` a line, ``ask`` for one. ``guided_after_logs``: an interactive terminal."""

    def __init__(self, ctx: Invocation, say: Say, ask: Ask, guided_after_logs: bool = False, prefix: str = ""):
        self.ctx, self.say, self.ask = ctx, say, ask
        self.guided_after_logs = guided_after_logs and not ctx.json
        self.prefix = prefix  # how a command is typed here, for hints (`rlmap-bot diagnose --resume ID`)

    def show(self, result: Any) -> None:
        for cls in type(result).__mro__:
            present = getattr(self, f"_show_{cls.__name__}", None)
            if present is not None:
                present(result)
                return
        if result is not None:
            self._document(result)

    def _document(self, result: Any) -> None:
        self.say(render.as_json(result) if self.ctx.json else render.text(result))

    def _show_Step(self, result: Step) -> None:  # noqa: N802 - named after the class it presents
        run_guided(self.ctx.core, ask=self.ask, say=self.say, step=result, prefix=self.prefix)

    def _show_RunDiagnosis(self, result: RunDiagnosis) -> None:  # noqa: N802
        if not self.guided_after_logs:
            self._document(result)
            return
        # In a terminal, the logs answer what they can and the person is asked only the rest.
        self.say(render.run_text(result, with_verdict=False) + "\n")
        self.show(self.ctx.core.flow.start(user=self.ctx.user, channel=self.ctx.channel, known=result.signals))

    def _show_AnswerStream(self, result: AnswerStream) -> None:  # noqa: N802
        from rlmap_bot.commands.results import Unanswered

        for answer in result.answers:
            if self.ctx.json:
                self.say(render.as_json(answer, indent=None))
            elif isinstance(answer, Unanswered):  # text: each answer under its question, a blank line said so
                self.say("> (an empty line: no question)\n")
            else:
                self.say(f"> {answer.query}\n" + render.text(answer) + "\n")

    def _show_Following(self, result: Following) -> None:  # noqa: N802
        """Follow the run until Ctrl-C: each check's alerts as they come (text, or a JSON line each)."""
        import time

        from rlmap_bot.watch.follow import follow
        from rlmap_bot.watch.service import WatchService

        def said(item: Said) -> None:
            if self.ctx.json:
                self.say(render.as_json(item.result if item.result is not None else item, indent=None))
            else:
                self.say(render.text(item.result) + "\n" if item.result is not None else f"-- {item.line}")

        self.say(f"Following {result.source}, a check every {result.seconds:g} s; Ctrl-C stops."
                 if not self.ctx.json else render.as_json(result, indent=None))
        try:
            follow(WatchService(self.ctx.core), result.source, said, time.sleep, result.seconds)
        except KeyboardInterrupt:
            if not self.ctx.json:
                self.say("Stopped following.")
