"""The terminal's conversations: a guided diagnosis at the prompt, a run's readings that go on to
ask only what the logs could not tell, and a run followed until Ctrl-C.

One of the terminal's features (:data:`rlmap_bot.cli.render.FEATURES`): importing it registers
them on ``Terminal.show`` (:mod:`rlmap_bot.cli.terminal`) by result type.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
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
        with _stops_between_checks() as sleep:
            follow(service, result.source, access, said, sleep, result.seconds)
    except KeyboardInterrupt:
        if not self.ctx.json:
            self.say("Stopped following.")


@contextlib.contextmanager
def _stops_between_checks() -> Iterator[Callable[[float], None]]:
    """A sleep that Ctrl-C (or SIGTERM) ends, raising KeyboardInterrupt there, between checks.

    Python raises KeyboardInterrupt wherever the signal lands; landing inside a finaliser or a
    library's cleanup it is printed as ignored and the loop follows on, so the process outlives
    the Ctrl-C meant to stop it. The first signal only marks the stop and the check under way
    finishes; a second one stops at once.
    """
    stop = threading.Event()

    def sleep(seconds: float) -> None:
        if stop.wait(seconds):
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield sleep  # signal handlers belong to the main thread; elsewhere Ctrl-C is not ours
        return

    def mark(*_: object) -> None:
        if stop.is_set():  # a second Ctrl-C does not wait: a tracker slow to answer is left
            raise KeyboardInterrupt
        stop.set()

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, mark)
    try:
        yield sleep
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def register(show: Any) -> None:
    """Add the conversations to a ``singledispatchmethod`` presenter, by their result types."""
    show.register(Step, guided)
    show.register(GuidedRun, readings_then_guided)
    show.register(Following, following)


register(Terminal.__dict__["show"])
