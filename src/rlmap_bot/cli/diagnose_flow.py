"""The guided diagnosis in a terminal: numbered options, one question at a time."""

from __future__ import annotations

from typing import Callable

import click

from rlmap_bot.cli import render
from rlmap_bot.core import Core
from rlmap_bot.diagnosis.flow import FlowError, Step

Ask = Callable[[str], "str | None"]
Say = Callable[[str], None]


def terminal_prompt(prompt: str) -> str | None:
    click.echo(prompt, nl=False)
    try:
        return input()
    except EOFError:
        return None


def run_guided(core: Core, ask: Ask, say: Say, step: Step) -> Step:
    """Run a started (or resumed) diagnosis until a verdict, or until input ends (it stays resumable)."""
    flow = core.flow
    say(f"Diagnosis {step.session.id[:8]}: answer what you know; '?' skips a question, 'help' explains it.")
    while step.question is not None:
        question = step.question
        reply = ask(render.question_text(question) + "\n> ")
        if reply is None:
            if not step.session.history:
                flow.discard(step.session.id)  # nothing answered: nothing worth resuming
                say("\n(no answers; nothing saved)")
            else:
                say(f"\n(paused; resume with `diagnose --resume {step.session.id[:8]}`)")
            return step
        try:
            step = flow.reply(step.session.id, reply)
        except FlowError as exc:
            say(f"  {exc}")
            continue
        if step.help:
            say(render.how_to_measure(question))
    say("")
    say(render.text(step.verdict))
    return step
