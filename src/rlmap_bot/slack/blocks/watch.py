"""Watch posts (alert, resolved note, pause notice),
`watch list`, `watch now` and App Home's watches.

Everything that comes from a log (metric names, values, the path) is escaped; nothing
of the log is shown beyond metric names and values.
"""

from __future__ import annotations

from slack_sdk.models.blocks import Block, HeaderBlock

from rlmap_bot.results.watch import Alert, CheckResult, WatchList, WatchNow, WatchRow
from rlmap_bot.slack.blocks.common import SECTION_LIMIT, context, fit, plain, section
from rlmap_bot.slack.markup import cut, escape
from rlmap_bot.wording.posts import alert_changes, alert_title

HOME_ROWS = 15
ICONS = {
    "alert": ":rotating_light:",
    "resolved": ":white_check_mark:",
    "paused": ":double_vertical_bar:",
}


def _where(alert: Alert) -> str:
    parts = [f"`{escape(alert.path)}`"]
    if alert.steps:
        parts.append(escape(alert.steps))
    parts.append(f"watch `{escape(alert.watch_id[:8])}`")
    return " · ".join(parts)


def alert_text(alert: Alert) -> str:
    """The notification line (plain; the caller escapes it)."""
    return f"{alert_title(alert)} ({alert.path})"


def alert_blocks(alert: Alert) -> list[Block]:
    title, changes = alert_title(alert), alert_changes(alert)
    if alert.kind != "alert":
        changed = "\n".join(escape(c) for c in changes)
        blocks: list[Block] = [
            section(cut(f"{ICONS[alert.kind]} *{escape(title)}*\n{changed}", SECTION_LIMIT))
        ]
        foot = _where(alert)
        if alert.kind == "resolved" and alert.verdict_headline:
            foot += f" · now: {escape(alert.verdict_headline)}"
        if alert.kind == "paused":
            foot += (
                f" · `/rlmap watch {escape(alert.path)}` resumes it, "
                f"`/rlmap unwatch {escape(alert.watch_id[:8])}` removes it"
            )
        blocks.append(context(foot))
        return blocks
    blocks = [HeaderBlock(text=plain(f"Watch: {title}")), context(_where(alert))]
    blocks.append(
        section(
            cut(
                "*What changed*\n" + "\n".join(f"• {escape(c)}" for c in changes),
                SECTION_LIMIT,
            )
        )
    )
    if alert.verdict_headline:
        ranking = ", ".join(f"{escape(t)} {s:g}" for t, s in alert.ranking)
        binding = f"*{escape(alert.binding_title)}*" if alert.binding_title else "No single stage"
        blocks.append(
            section(
                f"{ICONS['alert']} *Binding stage:* {binding}. {escape(alert.verdict_headline)}"
                + (f"\n_Points: {ranking}_" if ranking else "")
            )
        )
    if alert.evidence:
        lines = []
        for ev in alert.evidence:
            seen = ", ".join(f"`{escape(k)}` = *{escape(v)}*" for k, v in ev.signals.items())
            lines.append(
                f"• {seen} ({escape(ev.stage)} {ev.points:+g}): {escape(ev.why)} "
                f"_[{escape(ev.source)}]_"
            )
            lines += [
                f"    ↳ {escape(p)}" for p in ev.provenance
            ]  # plain: metric names are full of underscores
        blocks.append(section(cut("*Evidence, from the logs*\n" + "\n".join(lines), SECTION_LIMIT)))
    if alert.next_checks:
        blocks.append(
            section(
                cut(
                    "*Check next*\n" + "\n".join(f"• {escape(c)}" for c in alert.next_checks),
                    SECTION_LIMIT,
                )
            )
        )
    blocks.append(
        context(
            f"The chart is in the thread. Posted once for this condition. "
            f"`/rlmap unwatch {escape(alert.watch_id[:8])}` stops the watch."
        )
    )
    return fit(blocks)


# -- listings
#  ----------------------------------------------------------------------------------------
def _row(row: WatchRow, with_channel: bool = False) -> str:
    head = (
        f"`{escape(row.id)}` "
        + (f"<#{escape(row.channel)}> " if with_channel else "")
        + f"`{escape(row.path)}`"
    )
    how = f"every {escape(row.every)}" + (", faults only" if row.quiet else "")
    if row.status != "active":
        how += " · *paused*" + (f": {escape(row.paused_reason)}" if row.paused_reason else "")
    checked = (
        f"last check {row.last_check_at:%Y-%m-%d %H:%M} UTC"
        if row.last_check_at
        else "not checked yet"
    )
    verdict = f" · {escape(row.last_verdict)}" if row.last_verdict else ""
    open_ = f" · open: {escape(', '.join(row.open_conditions))}" if row.open_conditions else ""
    return f"{head}\n{how} · {checked}{verdict}{open_}"


def watch_list_blocks(result: WatchList) -> list[Block]:
    if not result.watches:
        text = (
            "This channel watches no run. `/rlmap watch PATH [every DURATION] [quiet]` starts one."
        )
        blocks: list[Block] = [section(text)]
    else:
        blocks = [section(f"*Watches in {escape(result.scope)}*")]
        blocks += [section(cut(_row(r), SECTION_LIMIT)) for r in result.watches]
    if result.note:
        blocks.append(context(escape(result.note)))
    return fit(blocks)


def result_line(result: CheckResult) -> str:
    head = f"`{escape(result.path)}`: "
    if result.status in {"busy", "duplicate"}:
        return head + "a check of it was running already; nothing more was posted."
    if result.status == "paused":
        return head + f"paused ({escape(result.problem or '')})."
    if result.status in {"problem", "waiting"}:
        return head + f"{escape(result.problem or 'cannot read it')}."
    text = head + (f"{result.new_steps} new steps" if result.new_steps else "nothing new")
    if result.verdict:
        text += f"; {escape(result.verdict.headline)}"
    posted = [alert_title(a) for a in result.alerts]
    text += f". Posted: {escape('; '.join(posted))}." if posted else ". Nothing new to post."
    return text


def watch_now_blocks(result: WatchNow) -> list[Block]:
    return fit(
        [
            section(
                cut(
                    "*Checked now*\n" + "\n".join(f"• {result_line(r)}" for r in result.results),
                    SECTION_LIMIT,
                )
            )
        ]
    )


def home_blocks(rows: list[WatchRow], note: str | None) -> list[Block]:
    if note:
        return [section(f"*Watched runs in your channels*\n{escape(note)}")]
    if not rows:
        return [
            section(
                "*Watched runs in your channels*\nNone. `/rlmap watch PATH` in a channel starts "
                "one."
            )
        ]
    blocks: list[Block] = [section("*Watched runs in your channels*")]
    # 15 rows keep App Home (100 blocks) room for the stages, the newest entries and the help.
    blocks += [section(cut(_row(r, with_channel=True), SECTION_LIMIT)) for r in rows[:HOME_ROWS]]
    if len(rows) > HOME_ROWS:
        blocks.append(
            context(
                f"…and {len(rows) - HOME_ROWS} more; `/rlmap watch list` in a channel shows its "
                "watches."
            )
        )
    return blocks
