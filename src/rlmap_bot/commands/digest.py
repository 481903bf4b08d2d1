"""Digest commands: subscribe a channel, see what the next digest says, post one now."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING

from rlmap_bot.commands.context import Channel, Invocation
from rlmap_bot.commands.declare import Said
from rlmap_bot.commands.registry import Param, Registry
from rlmap_bot.errors import UsageError

SLACK = frozenset({"slack"})
SCHEDULE = "[weekly|daily] [DAY] [HH:MM] [TIMEZONE] [stage:ID] [topic:ID] [note-empty]"


if TYPE_CHECKING:
    from rlmap_bot.results.digest import Digest, Subscribed
    from rlmap_bot.results.general import Notice, SubscriptionList


def register(registry: Registry) -> None:
    registry.command(
        "digest subscribe",
        "post new catalog entries to this channel on a schedule (default: Mondays 09:00, your "
        "timezone)",
        Param("schedule", "when and what: " + SCHEDULE, kind="rest", metavar=SCHEDULE),
        surfaces=SLACK,
        strict=True,
        order=20,
    )(subscribe)
    registry.command(
        "digest unsubscribe", "stop this channel's digest", surfaces=SLACK, strict=True, order=21
    )(unsubscribe)
    registry.command(
        "digest list",
        "every digest subscription in the workspace",
        surfaces=SLACK,
        strict=True,
        order=22,
    )(list_subscriptions)
    registry.command(
        "digest preview",
        Said(
            slack="what this channel's next digest says",
            terminal="what a digest of the entries added since DATE says",
        ),
        Param(
            "since",
            "entries added on or after this day (default: 7 days ago)",
            type="date",
            metavar="DATE",
            surfaces=frozenset({"cli"}),
        ),
        json=True,
        strict=True,
        order=23,
        surfaces=frozenset({"cli", "slack"}),
    )(preview)
    registry.command(
        "digest now", "post this channel's digest now", surfaces=SLACK, strict=True, order=24
    )(now)


def _need_channel(ctx: Invocation) -> Channel:
    if ctx.io is None:
        raise UsageError("digests are posted to Slack channels; use this command there")
    return ctx.io


def subscribe(ctx: Invocation, schedule: str = "") -> Subscribed | None:
    from rlmap_bot.digest.schedule import next_run
    from rlmap_bot.digest.subscribe import parse_subscription
    from rlmap_bot.results.digest import Subscribed, SubscriptionSet

    channel = _need_channel(ctx)
    core = ctx.core
    sub = parse_subscription(
        schedule.split(),
        ctx.team,
        ctx.channel,
        ctx.user,
        channel.user_timezone(),
        core.store.catalog,
    )
    previous = core.state.subscriptions.get(ctx.team, ctx.channel)
    if previous is not None:  # re-subscribing changes the schedule, not what counts as new
        sub = sub.model_copy(
            update={"created_at": previous.created_at, "last_run_at": previous.last_run_at}
        )
    news = SubscriptionSet(
        when=sub.when,
        filters=list(sub.filters),
        next_run=next_run(sub, dt.datetime.now(dt.UTC)),
        by=ctx.user,
    )
    # The announcement doubles as proof that the bot can post here.
    if not channel.announce(news):
        return None
    core.state.subscriptions.save(sub)
    core.subscriptions_changed()
    return Subscribed(subscription=news)


def unsubscribe(ctx: Invocation) -> Notice:
    from rlmap_bot.results.general import Notice

    _need_channel(ctx)
    if ctx.core.state.subscriptions.delete(ctx.team, ctx.channel):
        ctx.core.subscriptions_changed()
        return Notice(
            text="unsubscribed this channel from the RL Map digest.", public=True, actor=ctx.user
        )
    return Notice(text="This channel has no digest subscription.")


def list_subscriptions(ctx: Invocation) -> Notice | SubscriptionList:
    from rlmap_bot.digest.schedule import next_run
    from rlmap_bot.results.general import Notice, SubscriptionList, SubscriptionRow

    subs = ctx.core.state.subscriptions.list(team=ctx.team)
    if not subs:
        return Notice(text="No channel in this workspace subscribes to the digest.")
    now_ = dt.datetime.now(dt.UTC)
    return SubscriptionList(
        subscriptions=[
            SubscriptionRow(
                channel=s.channel, when=s.when, filters=list(s.filters), next_run=next_run(s, now_)
            )
            for s in subs
        ]
    )


def preview(ctx: Invocation, since: dt.date | None = None) -> Digest:
    from rlmap_bot.digest.content import capped_digest, select_items
    from rlmap_bot.digest.service import DigestService

    core = ctx.core
    if ctx.io is not None:  # in a channel: the preview of its own subscription
        sub = core.state.subscriptions.get(ctx.team, ctx.channel)
        if sub is None:
            raise UsageError("This channel has no digest subscription. " + _usage())
        return DigestService(core).preview(sub)
    today = dt.date.today()
    start = since or today - dt.timedelta(days=7)
    if start > today:
        raise UsageError(f"--since {start.isoformat()} is in the future")
    moment = dt.datetime.combine(start, dt.time.min, tzinfo=dt.UTC)
    return capped_digest(select_items(core.store, set(), since=moment), start, today)


def now(ctx: Invocation) -> Notice:
    from rlmap_bot.digest.service import DigestService
    from rlmap_bot.results.general import Notice

    channel = _need_channel(ctx)
    sub = ctx.core.state.subscriptions.get(ctx.team, ctx.channel)
    if sub is None:
        raise UsageError("This channel has no digest subscription. " + _usage())
    result = DigestService(ctx.core).run(sub, f"now:{uuid.uuid4().hex}", channel.digest_poster())
    text = {
        "posted": f"Posted a digest of {result.entries} "
        f"{'entry' if result.entries == 1 else 'entries'}.",
        "noted": "Nothing new since the last digest (a note was posted).",
        "duplicate": "Another digest for this channel is being posted right now; nothing more was "
        "posted.",
    }.get(result.status, "Nothing new since the last digest; nothing was posted.")
    return Notice(text=text)


def _usage() -> str:
    from rlmap_bot.digest.subscribe import USAGE

    return f"Usage: {USAGE}"
