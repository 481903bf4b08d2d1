"""What a reader returns: metric series as numpy arrays, plus what was seen on the way.

Only series that some signal can use are kept (bounded memory on multi-GB logs);
every metric name seen is still listed, so a person can map one that the alias
table does not know.  Restarts (a step written again) keep the last value
written, since a restarted run overwrites what it logged before.
"""

from __future__ import annotations

import math
from array import array
from typing import Callable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

#: At most this many restart events and non-finite steps per metric are listed;
#: the counts stay exact.  Judgement: enough to point at, bounded on a pathological log.
MAX_LISTED = 200


class Series(BaseModel):
    """One metric over steps; steps ascending and unique."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    name: str
    steps: np.ndarray = Field(description="int64, ascending, unique")
    values: np.ndarray = Field(description="float64; NaN and inf kept as logged")

    def __len__(self) -> int:
        return int(self.steps.size)


class Restart(BaseModel):
    """A step below one already written: the run was restarted (or resumed from a checkpoint)."""

    step: int = Field(description="the step written again")
    after_step: int = Field(description="the highest step written before it")
    metric: str | None = None


class RunData(BaseModel):
    """One run's logged scalars, or the part appended since the last incremental read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: str
    format: str
    run_id: str | None = None
    runs: list[str] = Field(default_factory=list, description="every run found at the path")
    metrics: list[str] = Field(default_factory=list, description="every metric name seen, sorted")
    series: dict[str, Series] = Field(
        default_factory=dict, description="kept series by metric name"
    )
    restarts: list[Restart] = Field(default_factory=list)
    restart_count: int = 0
    nonfinite: dict[str, list[int]] = Field(
        default_factory=dict, description="kept metric -> steps with NaN/inf"
    )
    records: int = Field(0, description="metric records (lines, log entries, events) read")
    skipped: int = Field(0, description="lines that held no metrics (other console output, junk)")
    bytes_read: int = Field(0, description="bytes read from disk for this result")
    reset: bool = Field(
        False, description="incremental read only: the file was replaced, start over"
    )
    warnings: list[str] = Field(default_factory=list)

    @property
    def first_step(self) -> int | None:
        firsts = [int(s.steps[0]) for s in self.series.values() if len(s)]
        return min(firsts) if firsts else None

    @property
    def last_step(self) -> int | None:
        lasts = [int(s.steps[-1]) for s in self.series.values() if len(s)]
        return max(lasts) if lasts else None

    @property
    def step_count(self) -> int:
        """Distinct steps over all kept series."""
        if not self.series:
            return 0
        return int(np.unique(np.concatenate([s.steps for s in self.series.values()])).size)


class Collector:
    """Accumulates (metric, step, value) triples from any reader, keeping only wanted metrics.

    Values go into compact ``array`` buffers (8 bytes a value) and become numpy
    arrays at :meth:`finish`.  Restarts are seen per metric: a step at or below
    the last one written for that metric (a repeat of the last step is only a
    duplicate; either way the value written last wins).  Detecting them per metric, not per
    record, is deliberate: TRL writes training and eval entries as separate
    records at the same step, which is no restart.
    """

    def __init__(self, keep: Callable[[str], bool]):
        self._keep_fn = keep
        self._keep: dict[str, bool] = {}
        self.names: set[str] = set()
        self._steps: dict[str, array] = {}
        self._values: dict[str, array] = {}
        self._last: dict[str, int] = {}
        self._disordered: set[str] = set()
        self.restarts: list[Restart] = []
        self._restart_at: dict[int, Restart] = {}
        self.restart_count = 0
        self.records = 0
        self.skipped = 0
        self.warnings: list[str] = []

    def wants(self, name: str) -> bool:
        """Whether ``name`` is kept; remembers the name as seen either way."""
        hit = self._keep.get(name)
        if hit is None:
            hit = self._keep[name] = bool(self._keep_fn(name))
            self.names.add(name)
        return hit

    def add(self, name: str, step: int, value: float) -> None:
        """Record one value of a wanted metric (call :meth:`wants` first)."""
        steps = self._steps.get(name)
        if steps is None:
            steps = self._steps[name] = array("q")
            self._values[name] = array("d")
        last = self._last.get(name)
        if last is not None and step <= last:
            self._disordered.add(name)
            if (
                step == last
            ):  # the same step again (TRL logs epoch in train and eval entries): no restart
                steps.append(step)
                self._values[name].append(value)
                return
            seen = self._restart_at.get(
                step
            )  # one restart per resumed step, whichever metrics show it
            if seen is None:
                self.restart_count += 1
                if len(self.restarts) < MAX_LISTED:
                    self._restart_at[step] = Restart(step=step, after_step=last, metric=name)
                    self.restarts.append(self._restart_at[step])
            elif last > seen.after_step:
                seen.after_step, seen.metric = last, name
        self._last[name] = (
            step  # the replay after a restart continues from here: one restart, not one a step
        )
        steps.append(step)
        self._values[name].append(value)

    def finish(self, **fields) -> RunData:
        """The collected run; duplicate steps keep the value written last."""
        series: dict[str, Series] = {}
        nonfinite: dict[str, list[int]] = {}
        for name, raw_steps in self._steps.items():
            steps = np.frombuffer(raw_steps, dtype=np.int64).copy()
            values = np.frombuffer(self._values[name], dtype=np.float64).copy()
            if name in self._disordered:
                order = np.argsort(
                    steps, kind="stable"
                )  # stable: among equal steps, write order stays
                steps, values = steps[order], values[order]
                last = np.ones(steps.size, dtype=bool)
                last[:-1] = steps[1:] != steps[:-1]
                steps, values = steps[last], values[last]
            bad = ~np.isfinite(values)
            if bad.any():
                nonfinite[name] = [int(s) for s in steps[bad][:MAX_LISTED]]
            series[name] = Series(name=name, steps=steps, values=values)
        warnings = list(self.warnings)
        if self.restart_count:
            first = self.restarts[0]
            warnings.append(
                f"restart seen: step {first.step} written again after step {first.after_step}"
                + (f" ({self.restart_count} times)" if self.restart_count > 1 else "")
                + "; the last value written for each step is kept"
            )
        return RunData(
            metrics=sorted(self.names),
            series=series,
            restarts=self.restarts,
            restart_count=self.restart_count,
            nonfinite=nonfinite,
            records=self.records,
            skipped=self.skipped,
            warnings=warnings,
            **fields,
        )


def to_float(value: object) -> float | None:
    """A logged scalar as a float; None for text, lists, dicts and booleans."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    return None
