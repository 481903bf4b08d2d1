"""The guided diagnosis in a terminal: numbered options, one question at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import click

from rlmap_bot.cli import render

if TYPE_CHECKING:
    from rlmap_bot.core import Core
    from rlmap_bot.results.diagnosis import Step

Ask = Callable[[str], "str | None"]
Say = Callable[[str], None]


def terminal_prompt(prompt: str) -> str | None:
    click.echo(prompt, nl=False)
    try:
        return input()
    except EOFError:
        return None


class Interrupted(click.exceptions.Exit):
    """Ctrl-C during a guided diagnosis: the resume hint is
    printed, the command exits 130 (not click's "Aborted!").
    """

    def __init__(self) -> None:
        super().__init__(130)


def run_guided(core: Core, ask: Ask, say: Say, step: Step, prefix: str = "") -> Step:
    """Run a started (or resumed) diagnosis until a
    verdict, or until input ends (it stays resumable).

    Ctrl-D (end of input) pauses it; Ctrl-C pauses it too and then ends the command with exit 130.
    """
    from rlmap_bot.cli import render_diagnosis as shown
    from rlmap_bot.diagnosis.flow import FlowError

    flow = core.flow
    say(
        f"Diagnosis {step.session.id[:8]}: answer what you know; '?' skips a question, 'help' "
        f"explains it."
    )
    while step.question is not None:
        question = step.question
        try:
            reply = ask(shown.question_text(question) + "\n> ")
        except KeyboardInterrupt:
            _pause(core, step, say, prefix)
            raise Interrupted() from None
        if reply is None:
            _pause(core, step, say, prefix)
            return step
        try:
            step = flow.reply(step.session.id, reply)
        except FlowError as exc:
            say(f"  {exc}")
            continue
        if step.help:
            say(shown.how_to_measure(question))
        if step.paused:
            say(shown.paused_text(step))
            say(
                f"(paused: measure one of these, or resume with `{prefix}diagnose --resume "
                f"{step.session.id[:8]}` to pick the readings you already have from a list)"
            )
            return step
    say("")
    say(render.text(step.verdict))
    return step


def _pause(core: Core, step: Step, say: Say, prefix: str) -> None:
    if not step.session.history:
        core.flow.discard(step.session.id)  # nothing answered: nothing worth resuming
        say("\n(no answers; nothing saved)")
    else:
        say(f"\n(paused; resume with `{prefix}diagnose --resume {step.session.id[:8]}`)")
