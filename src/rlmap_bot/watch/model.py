"""A watch's interval: how it is written and read, and its bounds.

A :class:`Watch` (what a person asked for) and its :class:`Tracking` (what checking has
learnt so far) are records of the state store (:mod:`rlmap_bot.state.models`, below this
layer), named here too; what a check returns is in :mod:`rlmap_bot.results.watch`.
"""

from __future__ import annotations

# The records the state store keeps live with it (the
# state layer is below watching); named here too.
from rlmap_bot.state.models import ConditionState, Tracking, VerdictSummary, Watch

__all__ = [
    "ConditionState",
    "DEFAULT_INTERVAL",
    "MAX_INTERVAL",
    "MIN_INTERVAL",
    "Tracking",
    "VerdictSummary",
    "Watch",
    "format_interval",
    "parse_interval",
]


def format_interval(minutes: int) -> str:
    hours, mins = divmod(int(minutes), 60)
    if hours and mins:
        return f"{hours}h{mins:02d}m"
    if hours:
        return f"{hours} hour{'s' if hours != 1 else ''}"
    return f"{mins} minute{'s' if mins != 1 else ''}"


#: The shortest interval.  RL steps take seconds to minutes and the verdict judges windows of
#: many steps, so checking more often than every 5 minutes reads a handful of new steps and can
#: only repeat the last verdict, while every check still derives every signal.
MIN_INTERVAL = 5
#: The longest: a run checked less than daily is better served by `diagnose --run` by hand.
MAX_INTERVAL = 24 * 60
DEFAULT_INTERVAL = 15

_UNITS = {
    "m": 1,
    "min": 1,
    "mins": 1,
    "minute": 1,
    "minutes": 1,
    "h": 60,
    "hr": 60,
    "hrs": 60,
    "hour": 60,
    "hours": 60,
    "d": 1440,
    "day": 1440,
    "days": 1440,
}


def parse_interval(text: str) -> int:
    """'15m', '1h', '2h30m', '90' (minutes) -> minutes;
    UsageError for anything else or out of bounds.
    """
    import re

    from rlmap_bot.errors import UsageError

    raw = str(text).strip().lower()
    parts = re.findall(r"(\d+)\s*([a-z]*)", raw)
    if not parts or re.sub(r"(\d+)\s*([a-z]*)", "", raw).strip():
        raise UsageError(f"`every` takes a duration such as 15m, 1h or 2h30m, not {text!r}")
    minutes = 0
    for number, unit in parts:
        factor = _UNITS.get(unit or "m")
        if factor is None:
            raise UsageError(f"`every` takes a duration such as 15m, 1h or 2h30m, not {text!r}")
        minutes += int(number) * factor
    if not MIN_INTERVAL <= minutes <= MAX_INTERVAL:
        raise UsageError(
            f"`every` must be from {MIN_INTERVAL} minutes to {MAX_INTERVAL // 60} hours, not "
            f"{format_interval(minutes)}"
        )
    return minutes
