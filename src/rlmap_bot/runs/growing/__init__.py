"""A run read as it grows: what its points say when they arrive a check at a time.

``kept``   the bounded series kept between reads (a uniform sample plus a full-resolution tail)
``scan``   NaN/inf, divergence, spikes and a run that stops learning, at full resolution, and
           when each is over (the deriver's rules, applied to the points as they arrive)
``judge``  the kept run derived and judged, with the scan's readings

Finding faults in a run's points and judging it is this package's concern however the points
arrive; a watcher (:mod:`rlmap_bot.watch`) decides when to read, keeps the state between reads
and says what changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmap_bot.runs.growing import scan
from rlmap_bot.runs.growing.kept import KeptRun
from rlmap_bot.runs.growing.scan import FaultState

if TYPE_CHECKING:
    from rlmap_bot.runs.aliases import AliasTable
    from rlmap_bot.runs.model import RunData


def take(
    kept: KeptRun, faults: FaultState, chunk: RunData, aliases: AliasTable
) -> tuple[FaultState, set[str], int]:
    """A new chunk of the run, scanned at full resolution against the kept tails (before they
    move on), then kept: the fault state after it, the faults it opened and its new points."""
    points = kept.points + max((len(s) for s in chunk.series.values()), default=0)
    faults, opened = scan.scan(faults, kept.tails_run(), chunk, aliases, points, kept.empty)
    return faults, opened, kept.absorb(chunk)
