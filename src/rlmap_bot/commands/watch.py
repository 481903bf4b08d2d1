"""Watch commands: keep an eye on a run's log and post to the channel when something changes."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from rlmap_bot.commands.context import Channel, Invocation
from rlmap_bot.commands.declare import Said
from rlmap_bot.commands.registry import Param, Registry
from rlmap_bot.errors import UsageError

SLACK = frozenset({"slack"})
CLI = frozenset({"cli"})

if TYPE_CHECKING:
    from rlmap_bot.results.watch import (
        CheckResult,
        Following,
        Unwatched,
        Watching,
        WatchList,
        WatchNow,
    )
    from rlmap_bot.watch.service import WatchService


def register(registry: Registry) -> None:
    registry.command(
        "watch",
        Said(
            slack="check a training log every 15 minutes; post here when a stage starts to bind, "
            "the binding stage changes, or the loss goes NaN or diverges",
            terminal="follow a training log until Ctrl-C, printing each alert, or check it once "
            "(--once) and print what a watch in Slack would post",
        ),
        Param(
            "path",
            "a training log or run folder under RLMAP_RUN_ROOTS",
            kind="arg",
            required=True,
            metavar="PATH",
        ),
        Param(
            "every",
            "how often to check: 15m, 1h, 2h30m (default 15 minutes)",
            word="every",
            metavar="DURATION",
            surfaces=SLACK,
        ),
        Param(
            "quiet",
            "post only faults (NaN/inf loss, divergence), not stage changes",
            kind="flag",
            word="quiet",
            surfaces=SLACK,
        ),
        Param(
            "once",
            "check now, once, and print what a check would post (nothing is stored)",
            kind="flag",
            surfaces=CLI,
        ),
        Param(
            "follow",
            "follow the run until Ctrl-C, printing each alert (the default when the output is a "
            "terminal)",
            kind="flag",
            surfaces=CLI,
        ),
        surfaces=CLI | SLACK,
        json=True,
        strict=True,
        order=30,
        help=(
            "Follow a run (a log, a W&B run folder, wandb:, mlflow: or trackio:) and print each "
            "alert until Ctrl-C (--follow when the output is piped), or check it once and print "
            "what a watch's check would post (--once). Paths must lie under RLMAP_RUN_ROOTS; "
            "nothing is stored. Watching in a channel runs in Slack: /rlmap watch SOURCE [every "
            "DURATION] [quiet]."
        ),
        examples=(
            "watch runs/exp42/train.log every 30m",
            "watch runs/exp42 quiet",
            "watch runs/exp42/train.log --once",
        ),
    )(watch)
    registry.command(
        "watch list",
        "this channel's watches: path, interval, last check, last verdict",
        surfaces=SLACK,
        strict=True,
        order=31,
    )(list_watches)
    registry.command(
        "watch now",
        "check this channel's watches at once, posting what a scheduled check would",
        surfaces=SLACK,
        strict=True,
        order=32,
    )(now)
    registry.command(
        "unwatch",
        "stop watching a run in this channel",
        Param(
            "target",
            "the watch id (or its first characters) or the watched path",
            kind="arg",
            required=True,
            metavar="ID|PATH",
        ),
        surfaces=SLACK,
        strict=True,
        order=33,
        examples=("unwatch 3fa9c2e1",),
    )(unwatch)


def _service(ctx: Invocation) -> WatchService:
    """The front-end's watch service, or one over the core that reads with this invocation's
    access."""
    from rlmap_bot.watch.service import WatchService

    if ctx.watch_service is not None:
        return ctx.watch_service
    return WatchService(ctx.core, access=lambda _team: ctx.run_access())


def _need_channel(ctx: Invocation) -> Channel:
    if ctx.io is None:
        raise UsageError(
            "watches post to Slack channels; use `/rlmap watch PATH` there (in the terminal, "
            "`rlmap-bot watch PATH --once`)"
        )
    return ctx.io


def _need_roots(service: WatchService, path: str | None = None) -> None:
    """Watching is on; in the terminal (``path`` given),
    the refusal shows the line that turns it on.
    """
    import shlex
    from pathlib import Path

    from rlmap_bot.runs.sources.access import WATCHING_OFF, PathRefused

    if not service.roots:
        if path is None:
            raise PathRefused(WATCHING_OFF)
        target = (
            Path(path).expanduser().resolve()
        )  # a watch's path is read under a root, not from here
        folder = target if target.is_dir() else target.parent
        raise PathRefused(
            f"{WATCHING_OFF}; for example: RLMAP_RUN_ROOTS={shlex.quote(str(folder))} rlmap-bot "
            f"watch {shlex.quote(str(target))} --once"
        )


def watch(
    ctx: Invocation,
    path: str,
    every: str | None = None,
    quiet: bool = False,
    once: bool = False,
    follow: bool = False,
    json_output: bool = False,
) -> CheckResult | Watching | Following | None:
    from rlmap_bot.results.watch import Following
    from rlmap_bot.runs.sources import is_tracker

    service = _service(ctx)
    if (
        ctx.io is None
    ):  # no channel to post in: follow the run here, or check once and tell what would be posted
        if not is_tracker(path):
            _need_roots(service, path)
        if not once:
            if not (follow or ctx.conversation):
                raise UsageError(
                    "with its output piped, `rlmap-bot watch SOURCE` needs --once (check once and "
                    "print what would be posted) or --follow (follow the run until Ctrl-C)"
                )
            return Following(
                source=str(service.resolve(path, ctx.run_access())),
                seconds=service.settings.rlmap_watch_follow_seconds,
            )
        return service.preview(path, ctx.run_access())
    channel = _need_channel(ctx)
    return service.set_watch(
        ctx.team,
        ctx.channel,
        ctx.user,
        path,
        every,
        quiet,
        announce=channel.announce,
        poster=channel.watch_poster,
    )


def list_watches(ctx: Invocation) -> WatchList:
    from rlmap_bot.results.watch import WatchList
    from rlmap_bot.runs.sources.access import WATCHING_OFF

    _need_channel(ctx)
    service = _service(ctx)
    rows = service.rows(service.repo.list(team=ctx.team, channel=ctx.channel))
    return WatchList(watches=rows, note=None if service.roots else WATCHING_OFF + ".")


def now(ctx: Invocation) -> WatchNow:
    from rlmap_bot.results.watch import WatchNow

    channel = _need_channel(ctx)
    service = _service(ctx)
    _need_roots(service)
    watches = service.repo.list(team=ctx.team, channel=ctx.channel)
    if not watches:
        raise UsageError(
            "This channel watches no run. Usage: `/rlmap watch PATH [every DURATION] [quiet]`"
        )
    poster = channel.watch_poster()
    results = []
    for w in watches:
        result = service.run(w.id, f"now:{uuid.uuid4().hex}", poster)
        if result is not None:
            results.append(result)
    return WatchNow(results=results)


def unwatch(ctx: Invocation, target: str) -> Unwatched:
    from rlmap_bot.results.watch import Unwatched

    _need_channel(ctx)
    found = _service(ctx).unwatch(ctx.team, ctx.channel, target)
    if found is None:
        raise UsageError(f"No watch of this channel is {target!r}; `/rlmap watch list` shows them")
    return Unwatched(path=found.path, by=ctx.user)
