"""Slack's message markup: reading it once on the way in, escaping once on the way out."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from rlmap_bot.parts import Part

_SLACK_MARKUP = re.compile(r"<([@#!][^>|]*)(?:\|([^>]*))?>|<([^>|]+)(?:\|([^>]*))?>")
MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
# "papers by @someone": the person mentioned is who the question is about.
AUTHOR_MENTION = re.compile(r"\b(by|from|of)\s+<@([A-Z0-9]+)(?:\|[^>]*)?>", re.IGNORECASE)


def escape(text: Any) -> str:
    """Neutralise Slack's control characters: no
    <!channel>, <@U..> or <url|forged> from user text.
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mention(user: str | None) -> str:
    """A real Slack mention for a user id, never for anything else."""
    return f"<@{user}>" if user and re.fullmatch(r"[UW][A-Z0-9]+", user) else "someone"


def mrkdwn(parts: Iterable[Part]) -> str:
    """A line of the core's parts (parts.Part) as Slack mrkdwn: words and names escaped, titles in
    bold, ids as code, channels linked, users mentioned
    (only real ids: anything else is "someone")."""
    out = []
    for p in parts:
        if p.kind == "title":
            out.append(f"*{escape(p.value)}*")
        elif p.kind == "code":
            out.append(f"`{escape(p.value)}`")
        elif p.kind == "channel":
            out.append(
                f"<#{p.value}>" if re.fullmatch(r"[CG][A-Z0-9]+", p.value) else escape(p.value)
            )
        elif p.kind == "user":
            out.append(mention(p.value))
        elif p.kind == "emoji":
            out.append(f":{p.value}:" if re.fullmatch(r"[a-z0-9_+-]+", p.value) else "")
        else:
            out.append(escape(p.value))
    return "".join(out)


def by(actor: str | None, text: str) -> str:
    """Plain ``text`` told as done by ``actor``: their mention, then the text escaped."""
    return f"{mention(actor)} {escape(text)}" if actor else escape(text)


def from_slack(text: str) -> str:
    """Plain text from Slack's message markup: mentions
    dropped, links and channels named, &amp; decoded.
    """

    def plain_markup(match: re.Match) -> str:
        special, special_label, url, label = match.groups()
        if special is not None:
            if special.startswith("#"):
                return "#" + (special_label or special[1:])
            return ""  # user and special mentions carry no meaning for the bot
        return label or url

    text = _SLACK_MARKUP.sub(plain_markup, text or "")
    return " ".join(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").split())


def name_authors(text: str, real_name: Callable[[str], str | None]) -> str:
    """ "papers by <@U123>" -> "papers by Danijar Hafner": a person mentioned after "by", "from" or
    "of" is named (``real_name`` looks them up); other mentions are left for from_slack to drop."""

    def named(match: re.Match) -> str:
        name = real_name(match.group(2))
        return f"{match.group(1)} {name}" if name else match.group(0)

    return AUTHOR_MENTION.sub(named, text or "")


def cut(text: str, limit: int, more: str = "…") -> str:
    """``text`` shortened to ``limit`` characters without breaking an escape sequence."""
    if len(text) <= limit:
        return text
    shortened = text[: limit - len(more)]
    amp = shortened.rfind("&")
    if amp != -1 and ";" not in shortened[amp:]:
        shortened = shortened[:amp]
    return shortened.rstrip() + more
