"""Lines that name things mid-sentence, written once in the core and shown by each surface its way.

Its own module, apart from ``wording``: pydantic is not imported by ``--help`` and plain asks.
"""

from __future__ import annotations

from typing import Iterable, Literal

from pydantic import BaseModel


class Part(BaseModel):
    """A piece of a line the core writes for people:
    plain words, or a name that each surface shows its
    own way (Slack: a bold title, a channel link, a mention; the terminal: the plain name).

    The curation flow tells people what happened mid-sentence ("rejected by <curator> on 3 Dec"):
    its lines are lists of parts, so the core never writes Slack markup and Slack escapes every
    piece of people's and arXiv's text it did not write itself (slack.markup.mrkdwn).
    """

    kind: Literal["text", "title", "code", "channel", "user", "emoji"] = "text"
    value: str


def line(*pieces: str | Part) -> list[Part]:
    """A line from plain strings (words) and parts (names)."""
    return [
        p if isinstance(p, Part) else Part(value=p) for p in pieces if not isinstance(p, str) or p
    ]


def title(value: str) -> Part:
    return Part(kind="title", value=value)


def code(value: str) -> Part:
    return Part(kind="code", value=value)


def channel(value: str) -> Part:
    return Part(kind="channel", value=value)


def user(value: str | None) -> Part:
    return Part(kind="user", value=value or "")


def emoji(value: str) -> Part:
    return Part(kind="emoji", value=value)


def plain(parts: Iterable[Part]) -> str:
    """A line as plain text (the terminal, notification fallbacks, logs)."""
    out = []
    for p in parts:
        if p.kind == "user":
            out.append(f"@{p.value}" if p.value else "someone")
        elif p.kind == "channel":
            out.append(f"#{p.value}")
        elif p.kind != "emoji":
            out.append(p.value)
    return "".join(out).strip()
