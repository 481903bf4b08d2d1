"""A digest post, made to be read on a phone: papers that came out in the period apart from older
ones the catalog took in, each with its year, its title as its link, one line on it, grouped by
stage in a few sections rather than a block per entry; "and N more" last.
"""

from __future__ import annotations

from slack_sdk.models.blocks import Block, HeaderBlock

from rlmap_bot.results.digest import Digest, DigestItem
from rlmap_bot.slack.blocks.common import MAX_BLOCKS, SECTION_LIMIT, context, plain, section
from rlmap_bot.slack.markup import cut_words, escape, link, mention, prose

# One line on each entry, cut after a word: about two lines of a phone's width. A judgement: the
# first sentence of a summary runs to 240 characters, and eighteen of them made a week's digest
# 6,459 characters long (docs/measurements.md, "Cards").
ONE_LINE = 130


def _item(item: DigestItem) -> str:
    """Its title as its link (a digest introduces papers: the full title says what each is
    about, where a short name like "DPO" may not), its year and first author, then one line."""
    name = f"*{link(item.url, item.title)}*" if item.url else f"*{escape(item.title)}*"
    facts = [str(item.year)] if item.year else []
    if item.kind != "paper":
        facts.append(escape(item.kind))
    if item.byline:
        facts.append(escape(item.byline))
    line = f"• {name}" + (f" ({', '.join(facts)})" if facts else "")
    if item.suggested_by and item.approved_by:
        who = "the weekly scan" if item.suggested_by == "scout" else mention(item.suggested_by)
        line += f" _suggested by {who}, approved by {mention(item.approved_by)}_"
    return line + f"\n{prose(cut_words(item.one_line, ONE_LINE))}"


def _sections(heading: str, items: list[DigestItem]) -> list[Block]:
    """``heading`` and its items by stage (or subtopic), in as few sections as Slack allows."""
    lines = [heading]
    group = None
    for item in items:
        if item.group != group:
            group = item.group
            lines.append(f"_{escape(group)}_")
        lines.append(_item(item))
    out: list[str] = []
    for line in lines:
        if out and len(out[-1]) + len(line) + 1 <= SECTION_LIMIT:
            out[-1] += "\n" + line
        else:
            out.append(line)
    return [section(text) for text in out]


def digest_blocks(digest: Digest, preview: bool = False) -> list[Block]:
    head = ("Preview: " if preview else "") + digest.title
    filters = f" · only {escape(', '.join(digest.filters))}" if digest.filters else ""
    blocks: list[Block] = [HeaderBlock(text=plain(head))]
    if digest.empty:
        blocks.append(context(f"{escape(digest.period())}{filters}"))
        blocks.append(section("Nothing new since the last digest."))
        return blocks
    recent, added, updated = digest.recent, digest.added, digest.updated
    said = escape(digest.period()) + filters
    if added and not recent:
        said += " · none of these papers came out in this period: the year says when each did"
    blocks.append(context(said))

    def by_group(items: list[DigestItem]) -> list[DigestItem]:
        return sorted(items, key=lambda i: i.group)

    if recent:
        blocks += _sections("*New papers, out in this period*", by_group(recent))
    if added:
        blocks += _sections("*Added to the catalog*", by_group(added))
    if updated:
        blocks += _sections("*Updated in the catalog*", by_group(updated))
    blocks = blocks[: MAX_BLOCKS - 1]
    if digest.more:
        blocks.append(
            context(
                f"…and {digest.more} more, in the next digest; `/rlmap digest preview` shows them "
                "now."
            )
        )
    return blocks


def digest_text(digest: Digest) -> str:
    return f"{digest.title} ({digest.period()})"
