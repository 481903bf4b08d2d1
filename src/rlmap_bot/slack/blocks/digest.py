"""A digest post: header with the period, entries
grouped by stage or subtopic, "and N more" last.
"""

from __future__ import annotations

from slack_sdk.models.blocks import Block, HeaderBlock

from rlmap_bot.results.digest import Digest
from rlmap_bot.slack.blocks.common import MAX_BLOCKS, button, context, plain, section
from rlmap_bot.slack.markup import escape, mention


def digest_blocks(digest: Digest, preview: bool = False) -> list[Block]:
    head = ("Preview: " if preview else "") + digest.title
    filters = f" · filters: {escape(', '.join(digest.filters))}" if digest.filters else ""
    blocks: list[Block] = [
        HeaderBlock(text=plain(head)),
        context(f"Covering {escape(digest.period())}{filters}"),
    ]
    if digest.empty:
        blocks.append(section("Nothing new since the last digest."))
        return blocks
    tail_more = digest.more
    body: list[Block] = []
    for group in digest.groups:
        body.append(section(f"*{escape(group.title)}*"))
        for item in group.items:
            line = f"{'*New*' if item.status == 'new' else '*Updated*'} · *{escape(item.title)}*"
            if item.byline:
                line += f"\n{escape(item.byline)}"
            line += f"\n{escape(item.one_line)}"
            if item.suggested_by and item.approved_by:
                who = (
                    "the weekly scan"
                    if item.suggested_by == "scout"
                    else mention(item.suggested_by)
                )
                line += f"\n_suggested by {who}, approved by {mention(item.approved_by)}_"
            if item.url:
                line += f"\n<{escape(item.url)}|{escape(item.url)}>"
            body.append(section(line, accessory=button("Open", f"entry_show_{len(body)}", item.id)))
    room = MAX_BLOCKS - len(blocks) - 1
    if len(body) > room:
        dropped = [b for b in body[room:] if getattr(b, "accessory", None) is not None]
        tail_more += len(dropped)
        body = body[:room]
    blocks += body
    if tail_more:
        blocks.append(
            context(
                f"…and {tail_more} more, in the next digest; `/rlmap digest preview` shows them "
                f"now."
            )
        )
    return blocks


def digest_text(digest: Digest) -> str:
    return f"{digest.title} ({digest.period()})"
