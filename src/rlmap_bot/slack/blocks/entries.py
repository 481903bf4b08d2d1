"""Whole entries, their links, and the five stages."""

from __future__ import annotations

from slack_sdk.models.blocks import Block, HeaderBlock

from rlmap_bot.results.cards import Card
from rlmap_bot.results.general import StageList
from rlmap_bot.slack.blocks.common import (
    MAX_BLOCKS,
    SECTION_LIMIT,
    actions,
    button,
    context,
    fit,
    plain,
    section,
)
from rlmap_bot.slack.markup import code, cut, escape, link, prose


def card_blocks(card: Card, full: bool = False) -> list[Block]:
    """A whole entry; long sections are cut unless ``full``, with a button for the rest."""
    limit = SECTION_LIMIT if full else 900
    blocks: list[Block] = [HeaderBlock(text=plain(card.title))]
    sub = f"_{escape(card.kind)}_ · {code(card.id)}"
    if card.subtitle:
        sub += f" · {escape(card.subtitle)}"
    if card.url:
        sub += f" · {link(card.url, 'link')}"
    blocks.append(context(sub))
    blocks.append(section(cut(prose(card.summary), limit)))
    truncated = False
    for sec in card.sections:
        body = f"*{escape(sec.heading)}*\n"
        if sec.text:
            body += prose(sec.text) + "\n"
        body += "\n".join(f"• {prose(item)}" for item in sec.items)
        if len(body) > limit:
            truncated = True
        blocks.append(section(cut(body, limit)))
    if card.links:
        names = ", ".join(f"{escape(link.title)} ({code(link.id)})" for link in card.links[:15])
        more = f" and {len(card.links) - 15} more" if len(card.links) > 15 else ""
        blocks.append(context(f"Linked: {names}{more}"))
    buttons = [button("Related", "entry_related_0", card.id)]
    if truncated and not full:
        buttons.insert(0, button("Show more", "entry_more", card.id))
    more_tail = actions([button("Show more", "entry_more", card.id)])
    return fit(blocks, MAX_BLOCKS - 1, tail=more_tail) + [actions(buttons)]


def related_blocks(title: str, links) -> list[Block]:
    if not links:
        return [section(f"Nothing is linked to *{escape(title)}* yet.")]
    blocks: list[Block] = [section(f"Entries linked to *{escape(title)}*:")]
    for start in range(0, min(len(links), 40), 5):
        chunk = links[start : start + 5]
        blocks.append(
            actions(
                [
                    button(
                        f"{link.short or link.title} ({link.kind})",
                        f"entry_show_{start + i}",
                        link.id,
                    )
                    for i, link in enumerate(chunk)
                ]
            )
        )
    return fit(blocks)


def stages_blocks(result: StageList) -> list[Block]:
    blocks: list[Block] = [HeaderBlock(text=plain("The RL Scaling Bottleneck Map: five stages"))]
    for stage in result.stages:
        blocks.append(
            section(
                f"*{stage.order}. {escape(stage.title)}*\n{prose(stage.one_line)}",
                accessory=button("Open", f"entry_show_{stage.order}", stage.id),
            )
        )
    return blocks
