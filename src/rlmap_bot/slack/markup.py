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


ZWSP = "\u200b"
# A marker between two letters or digits ("snake_case", "pg_loss") can neither open nor close a
# style in Slack's client (an opening marker follows a space, punctuation or the start; a closing
# one precedes them or the end): left as it is, so names stay searchable. Any other is fenced.
_MARKER = re.compile(r"(?<![^\W_])[*_~]|[*_~](?![^\W_])")
# A backtick is written as its look-alike U+02CB: whether a fenced one can still open code in
# Slack's client is not documented, and arXiv's LaTeX ``quotes'' are full of them.
GRAVE = "\u02cb"
_CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def _entities(text: Any) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape(text: Any) -> str:
    """Text from outside (a person, arXiv, a log) as mrkdwn that shows exactly as written.

    ``&``, ``<`` and ``>`` become entities, Slack's only escapes (no <!channel>, <@U..> or
    <url|forged> from user text). Slack has no escape for ``*``, ``_``, ``~`` and the backtick
    (slack-platform.md, "mrkdwn escaping"): each of the first three that could open or close a
    style is fenced by zero-width spaces, which no style marker can sit against, and still shows
    and copies as typed; a backtick becomes U+02CB, which looks the same.
    """
    fenced = _MARKER.sub(lambda m: ZWSP + m.group() + ZWSP, _entities(text))
    return fenced.replace("`", GRAVE)


def prose(text: Any) -> str:
    """A sentence the project wrote (its own words, the catalog's curated text): escaped as
    :func:`escape`, except that its `code` spans stay code (an error's `/rlmap help`, a config key
    in a signal's how-to-measure)."""
    pieces = _CODE_SPAN.split(str(text))
    return "".join(_entities(piece) if i % 2 else escape(piece) for i, piece in enumerate(pieces))


def code(text: Any) -> str:
    """``text`` as a code span: shown as typed, in monospace (a backtick, which would end it, is
    written as the look-alike U+02CB)."""
    return "`" + _entities(text).replace("`", GRAVE) + "`"


def link(url: str, label: Any) -> str:
    """A link with its label; the URL keeps its characters (only Slack's three are entities)."""
    return f"<{_entities(url)}|{escape(label)}>"


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
            out.append(code(p.value))
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
    """Plain ``text`` (the bot's sentence) told as done by ``actor``: their mention, then the text
    escaped (its `code` spans kept)."""
    return f"{mention(actor)} {prose(text)}" if actor else prose(text)


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


def cut_words(text: str, limit: int, more: str = "…") -> str:
    """``text`` shortened to ``limit`` characters after a whole word (a button's label: never
    "Reinforcement Lea…"); a single word longer than the limit is cut as :func:`cut` cuts."""
    if len(text) <= limit:
        return text
    head = text[: limit - len(more) + 1].rsplit(" ", 1)[0].rstrip(" ,;:-")
    return head + more if " " in text[: limit - len(more) + 1] else cut(text, limit, more)


def cut(text: str, limit: int, more: str = "…") -> str:
    """``text`` shortened to ``limit`` characters without breaking an escape sequence."""
    if len(text) <= limit:
        return text
    shortened = text[: limit - len(more)]
    amp = shortened.rfind("&")
    if amp != -1 and ";" not in shortened[amp:]:
        shortened = shortened[:amp]
    return shortened.rstrip() + more
