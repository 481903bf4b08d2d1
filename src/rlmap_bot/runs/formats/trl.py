"""TRL / transformers ``trainer_state.json``: a ``log_history`` list of step-keyed dicts."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import Collector, to_float

STATE_FILE = "trainer_state.json"
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def newest_state(folder: Path) -> Path | None:
    """The trainer_state.json of ``folder`` itself,
    else of its highest-numbered ``checkpoint-*``.
    """
    numbered = []
    for child in folder.iterdir() if folder.is_dir() else ():
        m = _CHECKPOINT.match(child.name)
        if m and (child / STATE_FILE).is_file():
            numbered.append((int(m.group(1)), child / STATE_FILE))
    if numbered:
        own = folder / STATE_FILE
        newest = max(numbered)[1]
        # The output folder's own state is written at the end of training; a checkpoint
        # written after it (a resumed run) is newer.  Compare what each has logged.
        if own.is_file() and own.stat().st_mtime >= newest.stat().st_mtime:
            return own
        return newest
    own = folder / STATE_FILE
    return own if own.is_file() else None


def read_trl_state(path: Path, c: Collector) -> int:
    """Feed every numeric entry of ``log_history``; returns bytes read."""
    try:
        raw = path.read_bytes()
        state = json.loads(raw)
    except OSError as exc:
        raise RunReadError(f"{path}: cannot open: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RunReadError(f"{path}: not valid JSON ({exc}); is the file cut short?") from None
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise RunReadError(f"{path}: no log_history list; not a transformers trainer_state.json")
    for entry in history:
        if not isinstance(entry, dict):
            continue
        step = to_float(entry.get("step"))
        if step is None or not math.isfinite(step):
            continue
        c.records += 1
        for name, value in entry.items():
            if name == "step":
                continue
            if c.wants(name):
                number = to_float(value)
                if number is not None:
                    c.add(name, int(step), number)
    return len(raw)
