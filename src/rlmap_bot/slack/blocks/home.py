"""App Home: the map at a glance, newest entries, the user's open diagnoses, how to use the bot."""

from __future__ import annotations

from slack_sdk.models.blocks import Block, DividerBlock, HeaderBlock
from slack_sdk.models.views import View

from rlmap_bot.slack.blocks.ask import DIAGNOSE
from rlmap_bot.slack.blocks.common import MAX_HOME_BLOCKS, button, fit, plain, section
from rlmap_bot.slack.blocks.help import help_blocks
from rlmap_bot.slack.markup import code, escape, prose


def home_view(
    stages,
    newest,
    sessions,
    help_result,
    watches: list[Block] | None = None,
    credentials: list[Block] | None = None,
) -> View:
    """The person's own first (their open diagnoses, the runs watched in their channels), then what
    the bot can do, then the map and what is new in it. ``credentials``: the tracker credentials
    section, for an admin only."""
    blocks: list[Block] = [HeaderBlock(text=plain("The RL Scaling Bottleneck Map"))]
    blocks += _sessions(sessions)
    if watches:
        blocks += watches
    if credentials:
        blocks += credentials
    blocks.append(DividerBlock())
    blocks += help_blocks(help_result)
    blocks.append(DividerBlock())
    blocks.append(section("Locate the *binding constraint* of an RL system across five stages."))
    for stage in stages:
        blocks.append(
            section(
                f"*{stage.order}. {escape(stage.title)}*  {prose(stage.one_line)}",
                accessory=button("Open", f"entry_show_{stage.order}", stage.id),
            )
        )
    blocks.append(DividerBlock())
    blocks.append(section("*Newest in the catalog*"))
    for i, (entry, when) in enumerate(newest[:8]):
        blocks.append(
            section(
                f"*{escape(entry.title)}*  _{escape(entry.kind)}, added "
                f"{escape(when)}_\n{prose(entry.one_line)}",
                accessory=button("Open", f"entry_show_{20 + i}", entry.id),
            )
        )
    return View(type="home", blocks=fit(blocks, MAX_HOME_BLOCKS))


def _sessions(sessions) -> list[Block]:
    if not sessions:
        return [section(f"*Your open diagnoses*\nNone. Start one with `{DIAGNOSE}` in a channel.")]
    lines = []
    for session in sessions[:10]:
        where = (
            f"<#{escape(session.channel)}>" if session.channel.startswith(("C", "G")) else "a DM"
        )
        lines.append(
            f"• In {where}: {len(session.answers)} answered, next {code(session.current or '-')}, "
            f"updated {session.updated_at:%Y-%m-%d %H:%M} UTC"
        )
    return [section("*Your open diagnoses*\n" + "\n".join(lines))]
