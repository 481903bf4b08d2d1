"""The diagnose command: a one-shot verdict from signal values, or a guided session."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.registry import Param, Registry
from rlmap_bot.errors import ConfigError, UsageError
from rlmap_bot.runs.names import FORMATS, WINDOW_HELP

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
        Param("run", "a training log file or folder: read the signals from the run's own curves", type="path",
              metavar="PATH", surfaces=TERMINAL),
        Param("format", "the log format, when it cannot be told from the content", metavar="NAME",
              choices=FORMATS, surfaces=TERMINAL),
        Param("run_id", "which run, when the path holds several", metavar="ID", surfaces=TERMINAL),
        Param("window", WINDOW_HELP, metavar="SPEC", surfaces=TERMINAL),
        Param("map", "read SIGNAL (or a quantity) from METRIC, a name the alias table does not know", multiple=True,
              metavar="SIGNAL=METRIC", surfaces=TERMINAL),
        Param("chart", "write a PNG of the curves behind the verdict", type="path", metavar="FILE.png", surfaces=CLI),
        Param("list", "list open diagnoses", kind="flag", surfaces=TERMINAL),
        Param("resume", "continue a paused diagnosis (its id or first characters)", metavar="ID", surfaces=TERMINAL),
        json=True, order=5, strict=True, excludes=(("signals", "simulate", "run", "list", "resume"),),
        examples=("diagnose", "diagnose --run runs/exp42/train.log", "diagnose --signals run.json --json"),
    )(diagnose)


def diagnose(ctx: Invocation, signals: str | None = None, simulate: str | None = None, run: Path | None = None,
             format: str | None = None, run_id: str | None = None, window: str | None = None,
             map: list[str] | None = None, chart: Path | None = None, list: bool = False,
             resume: str | None = None) -> Any:
    from rlmap_bot.commands.results import SessionList, SessionRow

    core = ctx.core
    if run is not None:
        return _from_logs(ctx, Path(run), format, run_id, window, map or [], chart)
    if any(x for x in (format, run_id, window, map, chart)):
        raise UsageError("--format, --run-id, --window, --map and --chart go with --run PATH")
    if signals is not None:
        return core.diagnose(parse_signals(signals))
    if simulate is not None:
        from rlmap_bot.diagnosis.simulate import simulate as play
        from rlmap_bot.results.diagnosis import Simulation

        return Simulation(**play(core.engine, parse_signals(simulate)))
    if list:
        return SessionList(sessions=[
            SessionRow(id=s.id, user=s.user, answers=len(s.answers), updated_at=s.updated_at, next=s.current)
            for s in core.flow.open_sessions(team=ctx.team if ctx.surface == "slack" else None)
        ])
    if ctx.json:  # a guided diagnosis is a conversation, not a document
        raise UsageError("--json needs --signals, --simulate or --run (the guided flow is interactive)")
    if resume:
        prefix = resume.strip()
        matches = [s.id for s in core.flow.open_sessions() if prefix and s.id.startswith(prefix)]
        if len(matches) != 1:
            raise UsageError(f"no single open diagnosis starts with {resume!r}; see `diagnose --list`")
        return core.flow.resume(matches[0])
    thread = ctx.thread_ts
    if ctx.surface == "slack" and thread is None and ctx.io is not None:
        thread = ctx.io.open_thread("started a diagnosis: which stage binds this RL run? Answer in the thread below.",
                                    actor=ctx.user)
        if thread is None:
            return None  # the bot cannot post here; the person was told why
    return core.flow.start(user=ctx.user, team=ctx.team, channel=ctx.channel, thread_ts=thread)


def _from_logs(ctx: Invocation, path: Path, format: str | None, run_id: str | None, window: str | None,
               pairs: list[str], chart: Path | None) -> Any:
    from rlmap_bot.runs.diagnose import diagnose_run, parse_mapping, parse_window

    own = chart is None and ctx.surface == "shell"
    if own:
        # The shell always draws: the picture is half of what `diagnose --run` tells.
        chart = ctx.core.settings.data_dir / "charts" / f"{path.stem or 'run'}.png"
    if chart is not None:
        chart = chart_path(Path(chart), path, create=own)
    try:
        return diagnose_run(ctx.core.engine, ctx.core.knowledge_root, path, format=format, run_id=run_id,
                            window=parse_window(window), mapping=parse_mapping(pairs), chart=chart)
    except OSError as exc:
        if chart is None or exc.filename not in (str(chart), chart):
            raise
        raise ConfigError(f"cannot write the chart {chart}: {exc.strerror or exc}") from None


def chart_path(chart: Path, run: Path, create: bool = False) -> Path:
    """Where the chart goes: an existing folder gets ``<run>.png`` inside it; a file must be a .png in an
    existing, writable folder (a typo in a folder name is refused, not created; ``create`` is for the
    shell's own charts folder).

    Checked before the log is read, so a typo in the path costs one line, not a parse of the log.
    """
    from rlmap_bot.files import ensure_folder

    chart = chart.expanduser()
    if chart.is_dir():
        chart = chart / f"{run.stem or 'run'}.png"
    elif chart.suffix.lower() != ".png":
        raise UsageError(f"--chart writes a PNG: give a file ending in .png or an existing folder, not {chart}")
    parent = chart.parent
    if not create and not parent.exists():
        raise UsageError(f"--chart {chart}: the folder {parent} does not exist; create it first or pick another")
    ensure_folder(parent, "the chart")
    if chart.exists() and not os.access(chart, os.W_OK):
        raise ConfigError(f"cannot write the chart: {chart} is not writable")
    return chart


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
