"""The diagnose command: a one-shot verdict from signal values, or a guided session."""

from __future__ import annotations

import json
from typing import Any

from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.registry import Param, Registry
from rlmap_bot.commands.results import SessionList, SessionRow
from rlmap_bot.errors import UsageError

CLI = frozenset({"cli"})
TERMINAL = frozenset({"cli", "shell"})

_JSON_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "true/false",
               type(None): "null"}


def register(registry: Registry) -> None:
    registry.command(
        "diagnose", "find the stage that binds your RL run: guided questions, or a one-shot verdict",
        Param("signals", "JSON object of signal values ('-' for stdin); no questions asked", type="file",
              metavar="FILE", surfaces=CLI),
        Param("simulate", "JSON object of a run's true signal values (and optionally \"complaint\": [ids]); "
              "play the guided flow answering truthfully ('-' for stdin)", type="file", metavar="FILE", surfaces=CLI),
        Param("list", "list open diagnoses", kind="flag", surfaces=TERMINAL),
        Param("resume", "continue a paused diagnosis (its id or first characters)", metavar="ID", surfaces=TERMINAL),
        json=True, order=5, strict=True,
        examples=("diagnose", "diagnose --signals run.json --json"),
    )(diagnose)


def diagnose(ctx: Invocation, signals: str | None = None, simulate: str | None = None, list: bool = False,
             resume: str | None = None, json_output: bool = False) -> Any:
    core = ctx.core
    if signals is not None and simulate is not None:
        raise UsageError("give --signals or --simulate, not both")
    if signals is not None:
        return core.diagnose(parse_signals(signals))
    if simulate is not None:
        from rlmap_bot.diagnosis.simulate import Simulation, simulate as play

        return Simulation(**play(core.engine, parse_signals(simulate)))
    if json_output:
        raise UsageError("--json needs --signals FILE (the guided flow is interactive)")
    if list:
        return SessionList(sessions=[
            SessionRow(id=s.id, user=s.user, answers=len(s.answers), updated_at=s.updated_at, next=s.current)
            for s in core.flow.open_sessions(team=ctx.team if ctx.surface == "slack" else None)
        ])
    if resume:
        prefix = resume.strip()
        matches = [s.id for s in core.flow.open_sessions() if prefix and s.id.startswith(prefix)]
        if len(matches) != 1:
            raise UsageError(f"no single open diagnosis starts with {resume!r}; see `diagnose --list`")
        return core.flow.resume(matches[0])
    thread = ctx.thread_ts
    if ctx.surface == "slack" and thread is None and ctx.io is not None:
        from rlmap_bot import wording

        thread = ctx.io.open_thread(wording.diagnosis_started(ctx.user))
        if thread is None:
            return None  # the bot cannot post here; the person was told why
    return core.flow.start(user=ctx.user, team=ctx.team, channel=ctx.channel, thread_ts=thread)


def parse_signals(text: str) -> dict[str, Any]:
    """A JSON object of signal values, or one line saying what is wrong with it."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"signals file is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(raw, dict):
        kind = _JSON_KINDS.get(type(raw), type(raw).__name__)
        raise UsageError(f"signals must be a JSON object of signal id -> value, not {kind}")
    return raw
