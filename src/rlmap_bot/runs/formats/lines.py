"""Line-based formats: verl console, verl file logger (JSONL), W&B exports, plain CSV/JSONL.

Each parser turns one line into values handed to a :class:`Collector`; the
driver in :mod:`rlmap_bot.runs.read` owns files, offsets and byte counts, so the
same parsers serve whole reads and incremental ones.  Only values of kept
metrics are converted to floats: on a 100,000-step log with 80 metrics that is
most of the saving.
"""

from __future__ import annotations

import csv
import json
import math
import re

import orjson

from rlmap_bot.runs.model import Collector, to_float

#: Column or key names taken as the step, in order of preference.
STEP_KEYS = (
    "_step",
    "step",
    "global_step",
    "train/global_step",
    "trainer/global_step",
    "training/global_step",
    "system/step",  # ROLL (alibaba/ROLL): its pipelines log metrics["system/step"] = global_step
    "iteration",
    "iter",
    "Step",
)

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
VERL_STEP = re.compile(r"(?:^|[\s)\]>])step:(\d+) - ")
_WRAPPED = re.compile(r"^[A-Za-z_][\w.]*\((.*)\)$")
#: Distinct key layouts remembered per file (the keys of a line, in order).  Judgement: a
#: run has a handful (training steps, validation steps); the cap bounds memory on odd logs.
LAYOUTS = 256


def parse_number(text: str) -> float | None:
    """A console value: 0.5, nan, inf, np.float64(0.5), tensor(0.5, device='cuda:0')."""
    text = text.strip()
    if text[-1:] == ")":  # np.float64(0.5): take the inside without paying for a failed float()
        inner = text[text.find("(") + 1 : -1]
        if "," not in inner:
            try:
                return float(inner)
            except ValueError:
                pass
    try:
        return float(text)
    except ValueError:
        pass
    m = _WRAPPED.match(text)
    if m:
        inner = m.group(1).split(",", 1)[0].strip()
        try:
            return float(inner)
        except ValueError:
            return None
    return None


class LineParser:
    """Base: ``feed`` returns True when the line held a metric record."""

    format = ""

    def __init__(self, collector: Collector):
        self.c = collector

    def feed(self, raw: bytes) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def state(self) -> dict:
        """What an incremental reader must remember besides the offset (CSV: the header)."""
        return {}

    def restore(self, state: dict) -> None:
        """Set up from a saved :meth:`state`."""


class VerlConsole(LineParser):
    """``step:N - key:value - ...`` lines, with ANSI colours, Ray prefixes and numpy reprs."""

    format = "verl-console"

    def __init__(self, collector: Collector):
        super().__init__(collector)
        self._layouts: dict[tuple[str, ...], list[tuple[int, str]]] = {}

    def feed(self, raw: bytes) -> bool:
        if b"step:" not in raw:
            return False
        line = raw.decode("utf-8", "replace")
        if "\x1b" in line:
            line = ANSI_ESCAPE.sub("", line)
        m = VERL_STEP.search(line)
        if m is None:
            return False
        step = int(m.group(1))
        parts = line[m.end() :].rstrip().split(" - ")
        names = tuple([p[: p.find(":")] for p in parts])
        kept = self._layouts.get(names)
        if kept is None:  # a new key layout: ask which names are kept once, not on every line
            kept = [
                (i, n.strip())
                for i, n in enumerate(names)
                if ":" in parts[i] and n.strip() and self.c.wants(n.strip())
            ]
            if len(self._layouts) < LAYOUTS:
                self._layouts[names] = kept
        add = self.c.add
        for i, name in kept:
            part = parts[i]
            number = parse_number(part[part.find(":") + 1 :])
            if number is not None:
                add(name, step, number)
        return bool(kept) or any(":" in p for p in parts)


def _flatten(data: dict, prefix: str = ""):
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            if value.get("_type"):  # W&B media and histograms: not scalars
                continue
            yield from _flatten(value, name + "/")
        else:
            yield name, value


class JsonLines(LineParser):
    """One JSON object a line: verl's file logger, W&B history, or a plain step-keyed record."""

    format = "jsonl"

    def __init__(self, collector: Collector, kind: str = "jsonl"):
        super().__init__(collector)
        self.kind = kind
        self.format = kind
        self._layouts: dict[tuple[str, ...], list[str] | None] = {}

    def feed(self, raw: bytes) -> bool:
        raw = raw.strip()
        if not raw or raw[:1] != b"{":
            return False
        try:
            obj = orjson.loads(
                raw
            )  # about 4x the standard library on verl's 80-key lines (benchmarks/logs.py)
        except orjson.JSONDecodeError:
            # Python's json writes NaN and Infinity, which
            # orjson refuses: the rare line goes the slow way
            try:
                obj = json.loads(raw)
            except ValueError:
                return False
        return self.record(obj)

    def record(self, obj: object) -> bool:
        """One decoded record (also used for JSON arrays of records)."""
        if not isinstance(obj, dict):
            return False
        if self.kind == "verl-jsonl":
            step, data = obj.get("step"), obj.get("data")
            if not isinstance(data, dict):
                return False
            number = to_float(step)
            if number is None or not math.isfinite(number):
                return False
            layout = tuple(data)
            kept = self._layouts.get(layout)
            if kept is None:
                flat = any(isinstance(v, dict) for v in data.values())
                kept = None if flat else [n for n in layout if self.c.wants(n)]
                if kept is not None and len(self._layouts) < LAYOUTS:
                    self._layouts[layout] = kept
            if kept is not None:  # the common flat record: only kept names are touched
                self._add(((n, data[n]) for n in kept), int(number), check=False, null=math.nan)
                return True
            self._add(_flatten(data), int(number), null=math.nan)
            return True
        else:
            step = None
            for key in STEP_KEYS:
                if key in obj:
                    step = obj[key]
                    break
            items = (
                (k, v) for k, v in _flatten(obj) if k not in STEP_KEYS and not k.startswith("_")
            )
        number = to_float(step)
        if number is None or not math.isfinite(number):
            return False
        self._add(items, int(number))
        return True

    def _add(self, items, step: int, check: bool = True, null: float | None = None) -> None:
        """Values of wanted names; ``null`` is what a JSON null stands for (verl's file logger
        writes a NaN as null: strict JSON has no NaN), None to skip it."""
        wants, add = self.c.wants, self.c.add
        for name, value in items:
            if not check or wants(name):
                if type(value) is float:
                    add(name, step, value)
                    continue
                if value is None:
                    if null is not None:
                        add(name, step, null)
                    continue
                value = parse_number(value) if isinstance(value, str) else to_float(value)
                if value is not None:
                    add(name, step, value)


#: A column of a CSV exported from the W&B web UI: ``<run name> - <metric>``, with ``__MIN`` and
#: ``__MAX`` companions (the band of a smoothed or sampled chart, not values that were logged).
UI_COLUMN = re.compile(r"^(?P<run>.+?) - (?P<metric>.+)$")
UI_BAND = ("__MIN", "__MAX")
#: A column naming the run of each row, in a CSV that holds several runs (one export of a sweep).
RUN_COLUMNS = ("run", "run_id", "run_name")


def ui_runs(header: list[str]) -> list[str]:
    """The run names of a W&B UI export's header, in column order (empty for any other CSV)."""
    runs: list[str] = []
    for name in header:
        m = UI_COLUMN.match(name.strip())
        if m and m.group("run") not in runs:
            runs.append(m.group("run"))
    return runs


class Csv(LineParser):
    """A header with a step column, then one row a step (W&B's ``_step`` or a plain ``step``).

    A W&B web-UI export names its columns ``<run> - <metric>`` (several runs may share one
    file): ``run`` picks one run's columns (default: the first run named), under their metric
    names; the ``__MIN``/``__MAX`` band columns are not values and are left out.
    """

    format = "csv"

    def __init__(self, collector: Collector, kind: str = "csv", run: str | None = None):
        super().__init__(collector)
        self.kind = kind
        self.format = kind
        self.run = run
        self.header: list[str] | None = None
        self._step_col = -1
        self._run_col = -1
        self._kept: list[tuple[int, str]] = []

    def _set_header(self, header: list[str]) -> bool:
        names = [h.strip() for h in header]
        step_col = next((names.index(k) for k in STEP_KEYS if k in names), -1)
        if step_col < 0:
            return False
        self.header, self._step_col = names, step_col
        self._run_col = next((names.index(k) for k in RUN_COLUMNS if k in names), -1)
        runs = ui_runs([n for i, n in enumerate(names) if i != step_col])
        run = self.run if self.run is not None else (runs[0] if runs else None)
        wants = self.c.wants
        self._kept = []
        for i, n in enumerate(names):
            if i == step_col or i == self._run_col or not n or n in STEP_KEYS or n.startswith("_"):
                continue
            if runs:
                m = UI_COLUMN.match(n)
                if m is None or m.group("run") != run or n.endswith(UI_BAND):
                    continue
                n = m.group("metric")
                if n in STEP_KEYS:
                    continue
            if wants(n):
                self._kept.append((i, n))
        return True

    def feed(self, raw: bytes) -> bool:
        line = raw.decode("utf-8", "replace")
        if not line.strip():
            return False
        row = next(csv.reader([line]))
        if self.header is None:
            self._set_header(row)
            return False
        if len(row) <= self._step_col:
            return False
        if (
            self._run_col >= 0
            and self.run is not None
            and (len(row) <= self._run_col or row[self._run_col].strip() != self.run)
        ):
            return False  # another run's row
        number = parse_number(row[self._step_col]) if row[self._step_col] else None
        if number is None or not math.isfinite(number):
            return False
        step = int(number)
        add = self.c.add
        width = len(row)
        for i, name in self._kept:
            if i < width:
                cell = row[i]
                if cell:
                    try:
                        add(name, step, float(cell))
                    except ValueError:
                        value = parse_number(cell)
                        if value is not None:
                            add(name, step, value)
        return True

    def state(self) -> dict:
        out: dict = {"header": self.header} if self.header is not None else {}
        if self.run is not None:
            out["run"] = self.run
        return out

    def restore(self, state: dict) -> None:
        self.run = state.get("run", self.run)
        if state.get("header"):
            self._set_header(list(state["header"]))


LINE_FORMATS = {
    "verl-console": lambda c: VerlConsole(c),
    "verl-jsonl": lambda c: JsonLines(c, "verl-jsonl"),
    "wandb-json": lambda c: JsonLines(c, "wandb-json"),
    "jsonl": lambda c: JsonLines(c, "jsonl"),
    "wandb-csv": lambda c: Csv(c, "wandb-csv"),
    "csv": lambda c: Csv(c, "csv"),
}
