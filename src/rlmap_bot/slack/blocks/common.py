"""Block Kit building blocks with Slack's limits built in (``slack_sdk.models.blocks``)."""

from __future__ import annotations

from typing import Iterable

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from rlmap_bot.slack.markup import cut, cut_words, escape

MAX_BLOCKS = 50
MAX_HOME_BLOCKS = 100
SECTION_LIMIT = 3000
HEADER_LIMIT = 150
BUTTON_TEXT_LIMIT = 75
BUTTON_VALUE_LIMIT = 2000
CONTEXT_LIMIT = 2000
FALLBACK_LIMIT = 3000


def plain(text: str, limit: int = HEADER_LIMIT) -> PlainTextObject:
    return PlainTextObject(text=cut(str(text), limit), emoji=False)


def section(mrkdwn: str, accessory: ButtonElement | None = None) -> SectionBlock:
    return SectionBlock(
        text=MarkdownTextObject(text=cut(mrkdwn, SECTION_LIMIT)), accessory=accessory
    )


def context(mrkdwn: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=cut(mrkdwn, CONTEXT_LIMIT))])


def button(text: str, action_id: str, value: str, style: str | None = None) -> ButtonElement:
    return ButtonElement(
        text=PlainTextObject(text=cut_words(str(text), BUTTON_TEXT_LIMIT), emoji=False),
        action_id=action_id,
        value=value[:BUTTON_VALUE_LIMIT],
        style=style,
    )


def actions(buttons: list[ButtonElement], block_id: str | None = None) -> ActionsBlock:
    return ActionsBlock(elements=buttons[:25], block_id=block_id)


def fit(blocks: list[Block], limit: int = MAX_BLOCKS, tail: Block | None = None) -> list[Block]:
    """At most ``limit`` blocks; when some are dropped, ``tail`` (a "show more") ends the list."""
    if len(blocks) <= limit:
        return blocks
    keep = blocks[: limit - (1 if tail is not None else 0)]
    return keep + ([tail] if tail is not None else [])


def to_dicts(blocks: Iterable[Block]) -> list[dict]:
    """Validated dicts (slack_sdk checks every limit it knows on ``to_dict``)."""
    return [b.to_dict() for b in blocks]


def fallback(text: str) -> str:
    """The notification / screen-reader text that goes with blocks."""
    return cut(escape(text), FALLBACK_LIMIT)
