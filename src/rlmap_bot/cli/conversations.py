"""The terminal's conversations: a guided diagnosis at the prompt, a run's readings that go on to
ask only what the logs could not tell, and a run followed until Ctrl-C.

One of the terminal's features (:data:`rlmap_bot.cli.render.FEATURES`): importing it registers
them on ``Terminal.show`` (:mod:`rlmap_bot.cli.terminal`) by result type.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from rlmap_bot.cli import render
from rlmap_bot.cli.diagnose_flow import run_guided
from rlmap_bot.cli.render_diagnosis import run_text
from rlmap_bot.cli.terminal import Terminal
from rlmap_bot.results.diagnosis import Step
from rlmap_bot.results.guided import GuidedRun
from rlmap_bot.results.watch import Following, Said


class Presenter(Protocol):
    """What a conversation needs of the terminal's presenter (``Terminal``)."""

    ctx: Any
    prefix: str

    def say(self, line: str) -> None: ...

    def ask(self, prompt: str) -> str | None: ...

    def show(self, result: Any) -> None: ...


def guided(self: Presenter, result: Step) -> None:
    run_guided(self.ctx.core, ask=self.ask, say=self.say, step=result, prefix=self.prefix)


def readings_then_guided(self: Presenter, result: GuidedRun) -> None:
    self.say(run_text(result.readings, with_verdict=False) + "\n")
    self.show(result.step)


def following(self: Presenter, result: Following) -> None:
    """Follow the run until Ctrl-C: each check's alerts as they come (text, or a JSON line each)."""
    from rlmap_bot.watch.follow import follow
    from rlmap_bot.watch.service import WatchService

    def said(item: Said) -> None:
        if self.ctx.json:
            shown = item.result if item.result is not None else item
            self.say(render.as_json(shown, indent=None))
        elif item.result is not None:
            self.say(render.text(item.result) + "\n")
        else:
            self.say(f"-- {item.line}")

    if self.ctx.json:
        self.say(render.as_json(result, indent=None))
    else:
        self.say(f"Following {result.source}, a check every {result.seconds:g} s; Ctrl-C stops.")
    try:
        access = self.ctx.run_access()
        service = WatchService(self.ctx.core, access=lambda _team: access)
        follow(service, result.source, access, said, time.sleep, result.seconds)
    except KeyboardInterrupt:
        if not self.ctx.json:
            self.say("Stopped following.")


def register(show: Any) -> None:
    """Add the conversations to a ``singledispatchmethod`` presenter, by their result types."""
    show.register(Step, guided)
    show.register(GuidedRun, readings_then_guided)
    show.register(Following, following)


register(Terminal.__dict__["show"])
