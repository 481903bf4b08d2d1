"""Command results as Block Kit, one module per feature; :func:`render` picks by the result's type.

Everything here is pure: core models in, blocks out. All text from users or the
catalog is escaped for mrkdwn (nobody can make the bot ping @channel or forge a
link) and every message stays inside Slack's limits.
"""

from __future__ import annotations

import logging
from functools import singledispatch
from typing import Any

from slack_sdk.models.blocks import Block

from rlmap_bot.results.ask import Answer
from rlmap_bot.results.cards import Card
from rlmap_bot.results.curation import AdditionList, Candidate
from rlmap_bot.results.diagnosis import DiagnosisOpened, Verdict
from rlmap_bot.results.digest import Digest, Subscribed, SubscriptionSet
from rlmap_bot.results.general import (
    Help,
    KbStats,
    Notice,
    PaperList,
    SessionList,
    StageList,
    SubscriptionList,
)
from rlmap_bot.results.runs import RunDiagnosis
from rlmap_bot.results.watch import (
    CheckResult,
    Following,
    Unwatched,
    Watching,
    WatchList,
    WatchNow,
    WatchSet,
)
from rlmap_bot.slack.blocks import ask, curate, diagnosis, digest, entries, help, runs
from rlmap_bot.slack.blocks import watch as watch_blocks
from rlmap_bot.slack.blocks.common import context, section, to_dicts
from rlmap_bot.slack.markup import by, code, escape, mrkdwn, prose
from rlmap_bot.wording import watch_interval, watching

log = logging.getLogger(__name__)

Rendered = tuple[list[Block], str]  # the blocks, and the notification text (already safe mrkdwn)


@singledispatch
def render(result: Any) -> Rendered:
    """Blocks and the fallback text for a command result: the renderer registered for its type (or a
    base of it). A type with none is a programming error (``tests/test_renderers.py`` holds every
    declared result to a renderer), said in one line rather than raised at the person."""
    log.error("no Block Kit renderer for %s", type(result).__name__)
    text = escape(str(result))
    return [section(text)], text


@render.register
def _(result: Answer) -> Rendered:
    return ask.answer_blocks(result, shareable=bool(result.results)), escape(
        ask.answer_text(result)
    )


@render.register
def _(result: Card) -> Rendered:
    return entries.card_blocks(result), escape(result.title)


@render.register
def _(result: StageList) -> Rendered:
    return entries.stages_blocks(result), "The five stages"


@render.register
def _(result: PaperList) -> Rendered:
    return help.papers_blocks(result), f"{len(result.papers)} papers"


@render.register
def _(result: Verdict) -> Rendered:
    return diagnosis.verdict_blocks(result), escape(diagnosis.verdict_text(result))


@render.register
def _(result: RunDiagnosis) -> Rendered:
    return runs.run_blocks(result, result.run.run_id or result.run.path)


@render.register
def _(result: Candidate) -> Rendered:
    return curate.candidate_blocks(result), escape(curate.card_text(result))


@render.register
def _(result: CheckResult) -> Rendered:
    text = watch_blocks.result_line(result)
    return [section(text)], text


@render.register
def _(result: Following) -> Rendered:
    text = (
        f"Following {code(result.source)} here means a terminal that stays open: in Slack, "
        "`/rlmap watch` posts its alerts to the channel instead."
    )
    return [section(text)], text


@render.register
def _(result: DiagnosisOpened) -> Rendered:
    said = "started a diagnosis: which stage binds this RL run? Answer in the thread below."
    return [section(":stethoscope: " + by(result.by, said))], "Diagnosis started"


@render.register
def _(result: WatchSet) -> Rendered:
    verb = {
        "started": "is watching",
        "resumed": "resumed watching",
        "changed": "changed the watch of",
    }[result.change]
    what = (
        "NaN/inf or diverging loss"
        if result.quiet
        else "a stage starting to bind, a change of binding stage, or a NaN/inf or diverging loss"
    )
    text = by(
        result.by,
        f"{verb} `{result.path}` here, {watch_interval(result.every, result.quiet)}. "
        f"I'll post {what}, once each. `/rlmap unwatch {result.short_id}` stops it.",
    )
    return [section(text)], text


@render.register
def _(result: Watching) -> Rendered:
    text = prose(watching(result))
    return [section(text)], text


@render.register
def _(result: Unwatched) -> Rendered:
    text = by(result.by, f"stopped watching `{result.path}` here.")
    return [section(text)], text


@render.register
def _(result: SubscriptionSet) -> Rendered:
    filters = f", only {', '.join(result.filters)}" if result.filters else ""
    text = by(
        result.by,
        f"subscribed this channel to the RL Map digest, {result.when}{filters}. "
        f"Next: {result.next_run.strftime('%a %d %b %H:%M %Z')}.",
    )
    return [section(text)], text


@render.register
def _(result: Subscribed) -> Rendered:
    when = result.subscription.next_run.strftime("%a %d %b %H:%M %Z")
    text = escape(f"Subscribed. Next digest: {when}.")
    return [section(text)], text


@render.register
def _(result: Digest) -> Rendered:
    return digest.digest_blocks(result, preview=True), escape(digest.digest_text(result))


@render.register
def _(result: Help) -> Rendered:
    return help.help_blocks(result), prose(result.problem or "How to use rlmap")


@render.register
def _(result: SessionList) -> Rendered:
    return help.sessions_blocks(result), f"{len(result.sessions)} open diagnoses"


@render.register
def _(result: KbStats) -> Rendered:
    return help.kb_stats_blocks(result), f"{result.total} entries"


@render.register
def _(result: Notice) -> Rendered:
    text = mrkdwn(result.parts) if result.parts else by(result.actor, result.text)
    return [section(text)], text


@render.register
def _(result: SubscriptionList) -> Rendered:
    lines = [
        f"• <#{escape(s.channel)}>: {escape(s.when)}"
        + (f", {escape(', '.join(s.filters))}" if s.filters else "")
        + f"; next {s.next_run.strftime('%a %d %b %H:%M %Z')}"
        for s in result.subscriptions
    ]
    text = "Digest subscriptions:\n" + "\n".join(lines)
    return [section(text)], text


@render.register
def _(result: AdditionList) -> Rendered:
    return curate.additions_blocks(result), f"{len(result.additions)} papers approved from Slack"


@render.register
def _(result: WatchList) -> Rendered:
    return watch_blocks.watch_list_blocks(result), f"{len(result.watches)} watches"


@render.register
def _(result: WatchNow) -> Rendered:
    return watch_blocks.watch_now_blocks(result), f"Checked {len(result.results)} watches"


__all__ = [
    "render",
    "to_dicts",
    "context",
    "section",
    "ask",
    "diagnosis",
    "digest",
    "entries",
    "help",
]
