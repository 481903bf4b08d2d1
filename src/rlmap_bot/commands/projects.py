"""A tracker's project, group or experiment named where runs are: the runs ``compare`` reads of
it (the most recent, at most :data:`~rlmap_bot.runs.sources.MAX_RUNS`, and a note of those left
out), and ``forecast``'s refusal, which names them (forecast fits one run).

The runs are listed through :func:`rlmap_bot.runs.sources.list_runs` with the invocation's access
(a workspace's allow-lists and sealed credentials), and each is then read as one run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmap_bot.commands.context import Invocation
from rlmap_bot.errors import UsageError

if TYPE_CHECKING:
    from rlmap_bot.runs.sources import RunList
    from rlmap_bot.runs.sources.access import Access


def run_access(ctx: Invocation) -> Access:
    """What this invocation may read: a workspace's allow-lists and sealed credentials in chat,
    the person's own environment in a terminal."""
    from rlmap_bot.runs.sources.access import local_access

    return ctx.run_access() if ctx.run_access is not None else local_access()


def collection(source: str) -> bool:
    """Whether ``source`` names several tracker runs (a project, a group, an experiment)."""
    from rlmap_bot.runs.sources import is_tracker, parse_source

    return is_tracker(source) and parse_source(source).collection is not None


def _runs_of(ctx: Invocation, source: str) -> RunList:
    """The most recent runs of the project, group or experiment ``source`` names (a RunReadError,
    one line, when they cannot be listed)."""
    from rlmap_bot.runs.sources import list_runs, parse_source

    return list_runs(parse_source(source), run_access(ctx))


def _counted(listed: RunList) -> str:
    """How many runs ``listed`` holds, in words: "3 finished or running runs", "no run"."""
    which = f"{listed.which} " if listed.which else ""
    if listed.total == 0:
        return f"no {which}run"
    if listed.total == 1:
        return f"one {which}run"
    return f"{listed.total:,} {which}runs"


def runs_to_compare(
    ctx: Invocation, source: str, alone: bool
) -> tuple[list[tuple[str, str | None]], str | None]:
    """The runs to compare of ``source`` (each as a one-run source and its tracker's name; a
    source of one run as it is) and what to say of those left out; one line when a source given
    alone holds fewer than two runs."""
    if not collection(source):
        return [(source, None)], None
    listed = _runs_of(ctx, source)
    if alone and len(listed.runs) < 2:
        named = f" ({listed.runs[0].name}: {listed.runs[0].source})" if listed.runs else ""
        raise UsageError(
            f"{source}: {listed.what} holds {_counted(listed)}{named}; compare takes two runs or "
            f"more"
        )
    note = None
    if listed.total > len(listed.runs):
        note = (
            f"{listed.what} holds {_counted(listed)}; these are the {len(listed.runs)} most "
            f"recent. Name others one by one to compare them ({listed.runs[0].source}, ...)."
        )
    return [(run.source, run.name) for run in listed.runs], note


def unique(runs: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """Each run with a label of its own: a tracker's name, with the run's id when two share it."""
    names = [name for _, name in runs if name]
    return [
        (source, f"{name} ({source.rsplit('/', 1)[-1].split(':')[-1]})")
        if name and names.count(name) > 1
        else (source, name)
        for source, name in runs
    ]


def one_run(ctx: Invocation, source: str) -> None:
    """forecast fits one run: a project, group or experiment is refused in one line that names its
    most recent runs as sources to forecast, and says compare reads them all."""
    if not collection(source):
        return
    listed = _runs_of(ctx, source)
    if not listed.runs:
        raise UsageError(f"{source}: {listed.what} holds {_counted(listed)}; nothing to forecast")
    shown = ", ".join(f"{run.name} ({run.source})" for run in listed.runs[:3])
    more = f" and {listed.total - 3:,} more" if listed.total > 3 else ""
    raise UsageError(
        f"forecast fits one run, and {source} names {listed.what}, which holds "
        f"{_counted(listed)}: {shown}{more}. Forecast one of them, or compare them all: compare "
        f"{source}"
    )
