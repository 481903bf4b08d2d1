"""Watch posts (alert, resolved note, pause notice),
`watch list`, `watch now` and App Home's watches.

Everything that comes from a log (metric names, values, the path) is escaped; nothing
of the log is shown beyond metric names and values.
"""

from __future__ import annotations

from slack_sdk.models.blocks import Block, HeaderBlock, PlainTextObject

from rlmap_bot.results.watch import (
    Alert,
    CheckResult,
    FaultOpened,
    FaultOver,
    Readable,
    StageChanged,
    StageCleared,
    StageStarted,
    StopAdvised,
    Unreadable,
    WatchList,
    WatchNow,
    WatchPaused,
    WatchRow,
)
from rlmap_bot.slack.blocks.common import (
    HEADER_LIMIT,
    SECTION_LIMIT,
    actions,
    button,
    context,
    fit,
    section,
)
from rlmap_bot.slack.blocks.verdicts import DETAILS_ACTION
from rlmap_bot.slack.markup import code, cut, cut_words, escape, prose
from rlmap_bot.wording.posts import alert_changes, alert_opening, alert_title
from rlmap_bot.wording.verdicts import evidence_line

HOME_ROWS = 15
READINGS_SHOWN = 3
# One icon vocabulary for everything a watch posts: an alarm is a fault's alone.
FAULT_ICON = ":rotating_light:"
FALLING_ICON = (
    ":chart_with_downwards_trend:"  # a forecast ceiling that fell: a warning, not a fault
)
ICONS: dict[type, str] = {
    FaultOpened: FAULT_ICON,
    StageStarted: ":large_orange_diamond:",
    StageChanged: ":twisted_rightwards_arrows:",
    StageCleared: ":white_check_mark:",
    FaultOver: ":white_check_mark:",
    WatchPaused: ":double_vertical_bar:",
    Unreadable: ":warning:",
    Readable: ":arrow_forward:",
    StopAdvised: ":checkered_flag:",
}


def icon(alert: Alert) -> str:
    """The post's icon: a fault's if it tells one, else its first change's."""
    kinds = [type(c) for c in alert.changes]
    if FaultOpened in kinds:
        return FAULT_ICON
    falls = [c for c in alert.changes if isinstance(c, StopAdvised) and c.reason == "falling"]
    if falls and not any(k in (StageStarted, StageChanged) for k in kinds):
        return FALLING_ICON
    return next((ICONS[k] for k in kinds if k in ICONS), "")


def _where(alert: Alert) -> str:
    """Where the post comes from, said once: the log, the steps read, the watch."""
    parts = [code(alert.path)]
    if alert.steps:
        parts.append(escape(alert.steps))
    parts.append(f"watch {code(alert.watch_id[:8])}")
    return " · ".join(parts)


def alert_text(alert: Alert) -> str:
    """The notification line (plain; the caller escapes it)."""
    return f"{alert_title(alert)} ({alert.path})"


def alert_blocks(alert: Alert, details: str | None = None) -> list[Block]:
    """A watch post. An alert reads as a verdict card: three lines (what broke or changed, how
    sure, what to do next), at most three readings, where it comes from (once) and the Details
    button carrying ``details``; a resolved note or a pause notice says its change in a line or
    two."""
    advice = any(isinstance(c, StopAdvised) for c in alert.changes)
    if alert.kind != "alert" or not alert.evidence and alert.next_step is None and not advice:
        return _notice(alert)
    first, *rest = alert_opening(alert)
    said = [escape(rest[0])] if rest else []
    if len(rest) > 1:
        head, _, lever = rest[1].partition(": ")
        said.append(f"*{escape(head)}:* {prose(lever)}")
    header = f"{icon(alert)} {first}".strip()
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=cut(header, HEADER_LIMIT), emoji=True))
    ]
    if said:
        blocks.append(section("\n".join(said)))
    readings = [evidence_line(e) for e in alert.evidence[:READINGS_SHOWN]]
    if readings:
        blocks.append(section("\n".join(f"• {prose(cut_words(r, 160))}" for r in readings)))
    chart = " · the chart is in the thread" if alert.chart else ""
    unwatch = code("/rlmap unwatch " + alert.watch_id[:8])
    blocks.append(context(f"{_where(alert)}{chart} · {unwatch} stops it"))
    if details:
        blocks.append(
            actions([button("Details", DETAILS_ACTION, details, style="primary")], "alert")
        )
    return fit(blocks)


def _notice(alert: Alert) -> list[Block]:
    title, changes = alert_title(alert), alert_changes(alert)
    changed = "\n".join(escape(c) for c in changes)
    blocks: list[Block] = [
        section(cut(f"{icon(alert)} *{escape(title)}*\n{changed}", SECTION_LIMIT))
    ]
    foot = _where(alert)
    if alert.kind == "resolved" and alert.verdict_headline:
        foot += f" · now: {escape(alert.verdict_headline)}"
    if alert.kind == "paused":
        foot += (
            f" · {code('/rlmap watch ' + alert.path)} resumes it, "
            f"{code('/rlmap unwatch ' + alert.watch_id[:8])} removes it"
        )
    blocks.append(context(foot))
    return blocks


def alert_details_blocks(alert: Alert) -> list[Block]:
    """What an alert's card leaves out: everything it said changed, the verdict and the stages'
    points, every reading with where in the logs it came from, the checks to make."""
    blocks: list[Block] = [context(_where(alert))]
    blocks.append(
        section(
            cut(
                "*What changed*\n" + "\n".join(f"• {escape(c)}" for c in alert_changes(alert)),
                SECTION_LIMIT,
            )
        )
    )
    if alert.verdict_headline:
        ranking = ", ".join(f"{escape(t)} {s:g}" for t, s in alert.ranking)
        blocks.append(
            section(escape(alert.verdict_headline) + (f"\n_Points: {ranking}_" if ranking else ""))
        )
    if alert.evidence:
        lines = []
        for ev in alert.evidence:
            seen = ", ".join(f"{code(k)} = *{escape(v)}*" for k, v in ev.signals.items())
            lines.append(
                f"• {seen} ({escape(ev.stage)} {ev.points:+g}): {prose(ev.why)} "
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
                    "*Check next*\n" + "\n".join(f"• {prose(c)}" for c in alert.next_checks),
                    SECTION_LIMIT,
                )
            )
        )
    return fit(blocks, 100)


# -- listings
#  ----------------------------------------------------------------------------------------
def _row(row: WatchRow, with_channel: bool = False) -> str:
    head = (
        f"{code(row.id)} " + (f"<#{escape(row.channel)}> " if with_channel else "") + code(row.path)
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
        blocks.append(context(prose(result.note)))
    return fit(blocks)


def result_line(result: CheckResult) -> str:
    head = f"{code(result.path)}: "
    if result.status in {"busy", "duplicate"}:
        return head + "a check of it was running already; nothing more was posted."
    if result.status == "paused":
        return head + f"paused ({prose(result.problem or '')})."
    if result.status in {"problem", "waiting"}:
        return head + f"{prose(result.problem or 'cannot read it')}."
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
        return [section(f"*Watched runs in your channels*\n{prose(note)}")]
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
