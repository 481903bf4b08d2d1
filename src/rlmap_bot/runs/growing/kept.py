"""The series a watch keeps between checks: bounded, whatever the length of the run.

A check must judge the whole run (the verdict compares the recent window with
the early level) without re-reading the log, and a watch must not grow with the
run.  For every metric the reader keeps (the ones the alias table maps, so a
few dozen at most), :class:`KeptRun` holds:

* a uniform sample of every point logged so far: every ``stride``-th point, at
  most :data:`CAP` of them.  When the sample reaches ``CAP`` the stride doubles
  and every other kept point goes, so it always spans the whole run evenly.
  While a run has fewer than ``CAP`` points the sample *is* the run, and a check
  derives exactly what ``diagnose --run`` would;
* the last :data:`TAIL` points at full resolution, the context the fault scan
  (:mod:`rlmap_bot.runs.growing.scan`) needs for the points that arrive next.

That is at most ``(CAP + TAIL) * 16`` bytes a metric (about 34 KB), stored
compressed in the state store.  Subsampling keeps single points as logged
(no averaging), so medians, trends and noise estimates stay unbiased; what it
cannot see (single-step spikes and NaNs between kept points) the fault scan
sees at full resolution as the points arrive.
"""

from __future__ import annotations

import io
import json

import numpy as np

from rlmap_bot.runs.model import RunData, Series

#: Kept points a metric.  derive_signals judges the recent quarter of the points, the
#: quarter before it and the first 5% after warm-up; between 1,024 and 2,048 kept points
#: (the count after and before a halving) leave those windows at least 256, 256 and 51
#: points, well above their minimums (20, 3, 5), and Sen's slope uses 400 at most anyway.
CAP = 2048
#: Full-resolution points kept a metric for the fault scan: the rolling baseline of the
#: spike and jump rules is 25 points (runs.stats.SPIKE_WINDOW), a jump must last 3; 64
#: covers both with room for a jump that straddles two checks.
TAIL = 64


class _Metric:
    __slots__ = ("stride", "seen", "steps", "values", "tail_steps", "tail_values")

    def __init__(self) -> None:
        self.stride = 1
        self.seen = 0
        self.steps = np.empty(0, dtype=np.int64)
        self.values = np.empty(0, dtype=np.float64)
        self.tail_steps = np.empty(0, dtype=np.int64)
        self.tail_values = np.empty(0, dtype=np.float64)

    @property
    def last_step(self) -> int | None:
        if self.tail_steps.size:
            return int(self.tail_steps[-1])
        return int(self.steps[-1]) if self.steps.size else None

    def absorb(self, steps: np.ndarray, values: np.ndarray) -> None:
        if steps.size == 0:
            return
        last = self.last_step
        if last is not None and steps[0] <= last:
            # A restart: the run logs these steps again and overwrites what it logged before.
            first = steps[0]
            keep = self.steps < first
            self.steps, self.values = self.steps[keep], self.values[keep]
            keep = self.tail_steps < first
            self.tail_steps, self.tail_values = self.tail_steps[keep], self.tail_values[keep]
            self.seen = self.steps.size * self.stride
        ordinals = self.seen + np.arange(steps.size)
        pick = ordinals % self.stride == 0
        self.steps = np.concatenate([self.steps, steps[pick]])
        self.values = np.concatenate([self.values, values[pick]])
        self.seen += int(steps.size)
        while self.steps.size > CAP:
            self.stride *= 2
            self.steps, self.values = self.steps[::2].copy(), self.values[::2].copy()
        self.tail_steps = np.concatenate([self.tail_steps, steps])[-TAIL:]
        self.tail_values = np.concatenate([self.tail_values, values])[-TAIL:]


class KeptRun:
    """The bounded picture of one run (see the module docstring)."""

    def __init__(self) -> None:
        self.metrics: dict[str, _Metric] = {}
        self.names: set[str] = set()
        self.format: str | None = None
        self.path: str = ""
        self.restart_count = 0
        self.records = 0
        self.step_count = 0

    # -- growing ----------------------------------------------------------------------------------
    def absorb(self, chunk: RunData) -> int:
        """Add a reader's result (what was appended, or a
        whole re-read); returns its steps (densest metric).
        """
        self.format = chunk.format
        self.path = chunk.path
        self.names.update(chunk.metrics)
        self.restart_count += chunk.restart_count
        self.records += chunk.records
        before = self.last_step
        added = 0
        for name, series in chunk.series.items():
            metric = self.metrics.get(name)
            if metric is None:
                metric = self.metrics[name] = _Metric()
            metric.absorb(series.steps, series.values)
            added = max(added, len(series))
        self._count_steps(chunk, before)
        return added

    def _count_steps(self, chunk: RunData, before: int | None) -> None:
        """Keep :attr:`steps` as ``diagnose --run`` counts a run: its distinct logged steps, any
        metric's (a verl run's step 0 holds only the evaluation before training, and is one)."""
        logged = [s.steps for s in chunk.series.values() if len(s)]
        if not logged:
            return
        union = np.unique(np.concatenate(logged))
        if before is None or union[0] >= before:
            self.step_count += int(np.sum(union > before)) if before is not None else union.size
            return
        # A restart logged steps again from union[0]: the steps kept before it, and the new ones
        # (exact while the sample is the run; counted by the sample's stride after that).
        kept = np.unique(np.concatenate([m.steps for m in self.metrics.values()]))
        self.step_count = int(np.sum(kept < union[0])) * self.largest_stride + union.size

    # -- reading -----------------------------------------------------------------------------------
    @property
    def empty(self) -> bool:
        return not any(m.steps.size for m in self.metrics.values())

    @property
    def last_step(self) -> int | None:
        lasts = [m.last_step for m in self.metrics.values() if m.last_step is not None]
        return max(lasts) if lasts else None

    @property
    def first_step(self) -> int | None:
        firsts = [int(m.steps[0]) for m in self.metrics.values() if m.steps.size]
        return min(firsts) if firsts else None

    @property
    def steps(self) -> int:
        """Distinct logged steps over every metric: the run's length as every surface says it."""
        return self.step_count

    @property
    def points(self) -> int:
        """Points logged by the densest metric: the run's length in logged steps."""
        return max((m.seen for m in self.metrics.values()), default=0)

    @property
    def largest_stride(self) -> int:
        return max((m.stride for m in self.metrics.values()), default=1)

    def tail(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        m = self.metrics.get(name)
        if m is None:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        return m.tail_steps, m.tail_values

    def to_run(self) -> RunData:
        """The kept sample as a RunData, for derive_signals and the chart."""
        series = {
            name: Series(name=name, steps=m.steps, values=m.values)
            for name, m in self.metrics.items()
            if m.steps.size
        }
        return RunData(
            path=self.path,
            format=self.format or "",
            metrics=sorted(self.names),
            series=series,
            restart_count=self.restart_count,
            records=self.records,
        )

    def tails_run(self) -> RunData:
        """The full-resolution tails as a RunData (the fault scan's context)."""
        series = {
            name: Series(name=name, steps=m.tail_steps, values=m.tail_values)
            for name, m in self.metrics.items()
            if m.tail_steps.size
        }
        return RunData(
            path=self.path, format=self.format or "", metrics=sorted(self.names), series=series
        )

    # -- storing -----------------------------------------------------------------------------------
    def dumps(self) -> bytes:
        """Compressed bytes for the state store (numpy's npz: no pickle, nothing executable)."""
        arrays: dict[str, np.ndarray] = {}
        order = sorted(self.metrics)
        meta = {
            "names": sorted(self.names),
            "format": self.format,
            "path": self.path,
            "restart_count": self.restart_count,
            "records": self.records,
            "steps": self.step_count,
            "metrics": [
                [name, self.metrics[name].stride, self.metrics[name].seen] for name in order
            ],
        }
        for i, name in enumerate(order):
            m = self.metrics[name]
            arrays[f"s{i}"], arrays[f"v{i}"] = m.steps, m.values
            arrays[f"ts{i}"], arrays[f"tv{i}"] = m.tail_steps, m.tail_values
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
        buffer = io.BytesIO()
        # Named, so no array can be taken for the flag; all
        # arrays are numeric, and loads() refuses pickles too.
        np.savez_compressed(buffer, allow_pickle=False, **arrays)
        return buffer.getvalue()

    @classmethod
    def loads(cls, data: bytes | None) -> KeptRun:
        kept = cls()
        if not data:
            return kept
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            meta = json.loads(bytes(npz["meta"]).decode("utf-8"))
            kept.names = set(meta["names"])
            kept.format, kept.path = meta["format"], meta["path"]
            kept.restart_count, kept.records = meta["restart_count"], meta["records"]
            for i, (name, stride, seen) in enumerate(meta["metrics"]):
                m = _Metric()
                m.stride, m.seen = int(stride), int(seen)
                m.steps, m.values = npz[f"s{i}"], npz[f"v{i}"]
                m.tail_steps, m.tail_values = npz[f"ts{i}"], npz[f"tv{i}"]
                kept.metrics[name] = m
        # A watch stored before the distinct count was kept: its densest metric's points.
        kept.step_count = int(meta.get("steps", kept.points))
        return kept
