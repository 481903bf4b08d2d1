"""Parsing `digest subscribe [weekly|daily] [DAY] [HH:MM]
[TIMEZONE] [stage:ID] [topic:ID] [note-empty]`.

Front-end neutral: words in, a validated :class:`Subscription` out, or a
:class:`SubscribeError` that says which word was wrong and what would be right.
"""

from __future__ import annotations

import re

from rapidfuzz import process

from rlmap_bot.digest.schedule import zone
from rlmap_bot.errors import UsageError
from rlmap_bot.knowledge.loader import Catalog
from rlmap_bot.state.models import Subscription

DAYS = {
    "mon": "mon",
    "monday": "mon",
    "tue": "tue",
    "tues": "tue",
    "tuesday": "tue",
    "wed": "wed",
    "wednesday": "wed",
    "thu": "thu",
    "thur": "thu",
    "thurs": "thu",
    "thursday": "thu",
    "fri": "fri",
    "friday": "fri",
    "sat": "sat",
    "saturday": "sat",
    "sun": "sun",
    "sunday": "sun",
}
USAGE = (
    "/rlmap digest subscribe [weekly|daily] [DAY] [HH:MM] [TIMEZONE] [stage:ID] [topic:ID] "
    "[note-empty]; /rlmap digest unsubscribe | list | preview | now"
)


class SubscribeError(UsageError):
    """A word the subscribe command cannot use; the message names it."""


def parse_subscription(
    words: list[str], team: str, channel: str, user: str, default_tz: str, catalog: Catalog
) -> Subscription:
    values: dict = {"team": team, "channel": channel, "created_by": user, "timezone": default_tz}
    filters: list[str] = []
    day_given = False
    for raw in words:
        word = raw.strip()
        low = word.lower()
        if low in {"weekly", "daily"}:
            values["frequency"] = low
        elif low in DAYS:
            values["day"] = DAYS[low]
            day_given = True
        elif re.fullmatch(r"\d{1,2}:\d{2}", low):
            hour, minute = (int(x) for x in low.split(":"))
            if hour > 23 or minute > 59:
                raise SubscribeError(
                    f"'{word}' is not a time of day; use HH:MM from 00:00 to 23:59"
                )
            values["time"] = f"{hour:02d}:{minute:02d}"
        elif low in {"note-empty", "notify-empty", "note"}:
            values["on_empty"] = "note"
        elif low in {"skip-empty", "quiet"}:
            values["on_empty"] = "skip"
        elif ":" in low and low.split(":", 1)[0] in {"stage", "topic", "subtopic"}:
            kind, _, value = low.partition(":")
            kind = "topic" if kind == "subtopic" else kind
            known = [e.id for e in catalog.of_kind(kind)]
            if value not in known:
                near = process.extractOne(value, known, score_cutoff=50)
                hint = (
                    f"; did you mean {kind}:{near[0]}?" if near else f"; one of {', '.join(known)}"
                )
                raise SubscribeError(f"unknown {kind} '{value}'{hint}")
            filters.append(f"{kind}:{value}")
        elif "/" in word or low in {"utc", "gmt"}:
            name = "UTC" if low in {"utc", "gmt"} else word
            try:
                zone(name)
            except ValueError as exc:
                raise SubscribeError(str(exc)) from None
            values["timezone"] = name
        else:
            raise SubscribeError(
                f"'{word}' is not a frequency, day, HH:MM time, timezone or stage:/topic: filter"
            )
    if values.get("frequency") == "daily" and day_given:
        raise SubscribeError("a daily digest takes no day; drop the day or say weekly")
    values["filters"] = filters
    return Subscription(**values)
