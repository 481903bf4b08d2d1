"""Independent readings of the real-log bank, written before any rlmap-bot reader sees the logs.

Each log in the bank (one folder a log, with SOURCE.md) is parsed here by a few lines of plain
Python (json, csv, a regular expression for verl's console lines, and TensorBoard's own record
loader), never by rlmap_bot, so that the tests of the reader compare it with something it did not
compute. For every quantity named in bank.yaml it writes the medians of the first and last 10 % and
20 % of the logged points, their ratio (the level), a trend label and the faults it finds (NaN/inf,
a gradient norm exactly 0 or constant, a loss exactly 0). Labels the numbers leave open are set by
eye in bank.yaml ("trend_by_eye") with the reason.

    python tests/data/real_logs/compute_readings.py [--root DIR] [--out FILE]

--root is the folder that holds the log folders (default: $RLMAP_REAL_LOGS, else this file's
folder; see README.md for where the log files themselves live); the readings are written to
readings.yaml beside this file unless --out says otherwise.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent

# How the labels are made. The same numbers are written into readings.yaml's header.
WINDOWS = (0.10, 0.20, 0.30)  # shares of the logged points at each end
FLAT_BAND = 0.10  # |last20 / first20 - 1| at most this: flat
GREY_BAND = 0.05  # within FLAT_BAND +- this, the neighbouring label is accepted too
COLLAPSE = 0.25  # last10 below this share of max(start, first10), a positive quantity: collapsed
MEDIAN_RTOL = 0.02  # a reader's medians must agree within 2 % (relative)
MIN_POINTS_FOR_TREND = (
    3  # fewer points: any trend label is accepted (judgement: two points are not a curve)
)

Series = dict[int, float]

# ---------------------------------------------------------------- parsers (no rlmap_bot)

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_STEP = re.compile(r"(?:^|[\s)])step:(\d+) - ")
_WRAP = re.compile(r"^np\.(?:float|int)\d*\((.*)\)$")


def _number(text: str) -> float | None:
    text = text.strip()
    match = _WRAP.match(text)
    if match:
        text = match.group(1).strip()
    try:
        return float(text)
    except ValueError:
        return None


def read_verl_console(path: Path) -> dict[str, Series]:
    """`step:N - key:value - ...` lines; Ray prefixes, ANSI colours and NUL bytes are skipped."""
    out: dict[str, Series] = {}
    raw = path.read_bytes().replace(b"\x00", b"").decode("utf-8", errors="replace")
    for line in raw.splitlines():
        line = _ANSI.sub("", line)
        match = _STEP.search(line)
        if not match:
            continue
        step = int(match.group(1))
        for part in line[match.end() :].split(" - "):
            key, sep, value = part.partition(":")
            if not sep:
                continue
            number = _number(value)
            if number is not None:
                out.setdefault(key.strip(), {})[step] = number
    return out


def _flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"actor": {"grad_norm": 1}} -> {"actor/grad_norm": 1} (EasyR1 nests its metrics)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}/"))
        else:
            out[f"{prefix}{key}"] = value
    return out


def read_jsonl(path: Path) -> dict[str, Series]:
    """One object a line: `step` or `_step` beside the metrics (nested objects flattened with
    "/"), or verl's {"step", "data"}."""
    out: dict[str, Series] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        step = row.get("step", row.get("_step"))
        data = _flat(row["data"]) if isinstance(row.get("data"), dict) else _flat(row)
        for key, value in data.items():
            if key in ("step", "_step") or isinstance(value, (list, str)) or value is None:
                continue
            out.setdefault(key, {})[int(step)] = float(value)
    return out


def read_trl_state(path: Path) -> dict[str, Series]:
    """transformers' trainer_state.json: log_history rows keyed by `step`."""
    out: dict[str, Series] = {}
    for row in json.loads(path.read_text(encoding="utf-8"))["log_history"]:
        step = int(row["step"])
        for key, value in row.items():
            if key == "step" or not isinstance(value, (int, float)):
                continue
            out.setdefault(key, {})[step] = float(value)
    return out


def read_tensorboard(path: Path) -> dict[str, Series]:
    """Every scalar of the event file(s), all points (size_guidance 0 keeps them all)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    out: dict[str, Series] = {}
    for tag in acc.Tags()["scalars"]:
        out[tag] = {int(e.step): float(e.value) for e in acc.Scalars(tag)}
    from tensorboard.util import tensor_util

    for tag in acc.Tags().get("tensors", []):  # scalars written as tensors; text summaries skipped
        for event in acc.Tensors(tag):
            value = tensor_util.make_ndarray(event.tensor_proto)
            if value.size == 1 and value.dtype.kind in "fiu":
                out.setdefault(tag, {})[int(event.step)] = float(value.reshape(-1)[0])
    return out


def read_csv_table(path: Path, run: dict[str, str] | None = None) -> dict[str, Series]:
    """A step column (`step`, `_step`, `Step`, `train/global_step`) and one column a metric;
    W&B UI exports prefix columns with `<run> - ` and add `__MIN`/`__MAX` (dropped here). A file
    holding several runs in a run column is read for the one run named in bank.yaml."""
    out: dict[str, Series] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields = reader.fieldnames or []
        step_col = next(f for f in fields if f in ("step", "_step", "Step", "train/global_step"))
        skip = {step_col} | ({run["column"]} if run else set())
        for row in reader:
            if run and row[run["column"]] != run["value"]:
                continue
            step = int(float(row[step_col]))
            for key in fields:
                if key in skip or key.endswith(("__MIN", "__MAX")) or row[key] in ("", None):
                    continue
                name = key.split(" - ", 1)[1] if " - " in key else key
                number = _number(row[key])
                if number is not None:
                    out.setdefault(name, {})[step] = number
    return out


READERS = {
    "verl-console": read_verl_console,
    "jsonl": read_jsonl,
    "verl-jsonl": read_jsonl,
    "trl-state": read_trl_state,
    "tensorboard": read_tensorboard,
    "csv": read_csv_table,
    "wandb-csv": read_csv_table,
}

# ---------------------------------------------------------------- statistics


def _ranges(steps: list[int]) -> str:
    """[1, 2, 3, 7] -> '1-3, 7' (at most 12 pieces, then a count)."""
    if not steps:
        return ""
    pieces: list[str] = []
    start = prev = steps[0]
    for step in steps[1:] + [-1]:  # -1 closes the last run (steps are never negative)
        if step == prev + 1:
            prev = step
            continue
        pieces.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = step
    if len(pieces) > 12:
        return ", ".join(pieces[:12]) + f", ... ({len(steps)} steps)"
    return ", ".join(pieces)


def _round(x: float) -> float:
    if not math.isfinite(x) or x == 0:
        return x
    return float(f"{x:.4g}")


def window_medians(values: np.ndarray) -> dict[str, float]:
    n = len(values)
    out: dict[str, float] = {"start": _round(float(np.median(values[:3])))}
    for share in WINDOWS:
        k = max(1, math.ceil(share * n))
        tag = f"{round(share * 100)}"
        out[f"first{tag}"] = _round(float(np.median(values[:k])))
        out[f"last{tag}"] = _round(float(np.median(values[-k:])))
    return out


def trend_label(
    med: dict[str, float], positive: bool = True
) -> tuple[str, list[str], float | None]:
    """(label, other labels a reader may give, last20/first20 - 1). Only a quantity that is never
    negative (entropy, length, a norm, a share) can be called collapsed; a signed one (a loss, a
    score on [-1, 1]) is rising, falling or flat."""
    f10, l10, f20, l20 = med["first10"], med["last10"], med["first20"], med["last20"]
    base = max(med["start"], f10)
    if positive and base > 0 and l10 < COLLAPSE * base:
        return "collapsed", ["falling"] if l10 > 0.8 * COLLAPSE * base else [], None
    if f20 == 0:
        return ("flat" if l20 == 0 else ("rising" if l20 > 0 else "falling")), [], None
    rel = (l20 - f20) / abs(f20)
    label = "rising" if rel > FLAT_BAND else "falling" if rel < -FLAT_BAND else "flat"
    alternatives: list[str] = []
    if abs(abs(rel) - FLAT_BAND) <= GREY_BAND:
        alternatives = ["flat"] if label != "flat" else ["rising" if rel > 0 else "falling"]
    return label, alternatives, round(rel, 4)


def faults(name: str, quantity: str, series: Series) -> dict[str, Any]:
    steps = sorted(series)
    values = np.array([series[s] for s in steps])
    found: dict[str, Any] = {}
    nan = [s for s, v in zip(steps, values, strict=True) if math.isnan(v)]
    inf = [s for s, v in zip(steps, values, strict=True) if math.isinf(v)]
    if nan:
        found["nan_steps"] = _ranges(nan)
    if inf:
        found["inf_steps"] = _ranges(inf)
    finite = values[np.isfinite(values)]
    zero = [s for s, v in zip(steps, values, strict=True) if v == 0.0]
    if quantity in ("grad_norm", "loss", "entropy") and zero:
        found["exactly_zero_steps"] = _ranges(zero)
        found["exactly_zero_share"] = round(len(zero) / len(steps), 4)
    if quantity in ("grad_norm", "entropy") and len(finite) > 2 and np.all(finite == finite[0]):
        found["constant_value"] = float(finite[0])
    return found


def reading_for(entry: dict[str, Any], data: dict[str, Series]) -> dict[str, Any]:
    quantities: dict[str, Any] = {}
    fault_list: dict[str, Any] = {}
    for quantity, metric in entry["quantities"].items():
        series = data[metric]
        steps = sorted(series)
        values = np.array([series[s] for s in steps])
        finite_steps = [s for s, v in zip(steps, values, strict=True) if math.isfinite(v)]
        finite = values[np.isfinite(values)]
        med = window_medians(finite)
        label, alternatives, rel = trend_label(med, positive=bool(np.all(finite >= 0)))
        reading: dict[str, Any] = {
            "metric": metric,
            "points": len(steps),
            "first_step": finite_steps[0],
            "last_step": finite_steps[-1],
            **med,
            "level": _round(med["last10"] / med["first10"]) if med["first10"] else None,
            "level_vs_start": _round(med["last10"] / med["start"]) if med["start"] else None,
            "change20": rel,
            "trend": label,
        }
        eye = entry.get("trend_by_eye", {}).get(quantity)
        if eye is None and len(finite) < MIN_POINTS_FOR_TREND:
            eye = {
                "trend": "ambiguous",
                "why": f"{len(finite)} point(s): no trend can be read",
                "also": ["rising", "falling", "flat", "collapsed"],
            }
        if eye:
            reading["trend"] = eye["trend"]
            reading["trend_rule"] = label
            reading["trend_note"] = eye["why"]
            alternatives = eye.get("also", [])
        if alternatives:
            reading["trend_also_accepted"] = alternatives
        quantities[quantity] = reading
        found = faults(entry["name"], quantity, series)
        if found:
            fault_list[quantity] = {"metric": metric, **found}
    for share_name, (part, whole) in entry.get("shares", {}).items():
        a, b = data[part], data[whole]
        common = sorted(set(a) & set(b))
        ratio = np.array([a[s] / b[s] for s in common if b[s]])
        med = window_medians(ratio)
        quantities[share_name] = {
            "metric": f"{part} / {whole}",
            "points": len(ratio),
            **med,
            "level": _round(med["last10"] / med["first10"]) if med["first10"] else None,
            "trend": trend_label(med)[0],
        }
    main = entry["quantities"][entry["main"]]
    main_steps = sorted(data[main])
    extra: dict[str, Any] = {}
    if "run" in entry:
        extra["run"] = entry["run"]
    return {
        "name": entry["name"],
        "path": entry["path"],
        "format": entry["format"],
        **extra,
        "steps": {
            "main_metric": main,
            "first": main_steps[0],
            "last": main_steps[-1],
            "points": len(main_steps),
        },
        "quantities": quantities,
        "faults": fault_list or "none",
        "expert_summary": entry["summary"],
    }


HEADER = f"""\
# Expert readings of the real-log bank, written before any rlmap-bot reader was run on these logs.
#
# How they were made: tests/data/real_logs/compute_readings.py (numpy, json, csv, a regular
# expression for verl console lines and TensorBoard's own record loader; it does not import
# rlmap_bot) parses each log and computes, for every quantity listed, the medians of the first and
# last 10/20/30 % of its finite logged points (ceil(share x points), at least one point). Each
# curve was also looked at by eye (values printed step by step); where the numbers and the eye
# disagree the label is the eye's, with trend_rule (what the numbers alone say) and trend_note (why).
#
# Tolerances for a reader held to these readings:
# - steps: first, last and points of the main series exactly (the main metric is named).
# - medians: within {MEDIAN_RTOL:.0%} relative (or 1e-6 absolute near zero) of first10/first20/last10/last20.
# - start = median of the first 3 logged points (the run's first logged level, before any warm-up
#   window); level = last10 / first10 and level_vs_start = last10 / start, within {MEDIAN_RTOL:.0%} relative
#   when a reader computes the same ratio.
# - trend: rising if last20/first20 - 1 > {FLAT_BAND:.2f}, falling if < -{FLAT_BAND:.2f}, else flat; collapsed when a
#   positive quantity's last10 is below {COLLAPSE:.0%} of max(start, first10), whatever it does now (a reader
#   must never call such a series stable or flat). Within +-{GREY_BAND:.2f} of the {FLAT_BAND:.2f} band the neighbouring
#   label is accepted too (trend_also_accepted); a label judged by eye says so. A series of fewer
#   than {MIN_POINTS_FOR_TREND} points is "ambiguous" and any label is accepted.
# - faults: NaN/inf steps, a gradient norm exactly 0 (or constant), a loss exactly 0, an entropy
#   exactly 0, with the steps at which they occur; "none" means none of these is in the file.
# - timing shares (verl): the named part over timing_s/step, per step, then the same medians.
#
# Regenerate: python tests/data/real_logs/compute_readings.py --root <folder holding the logs>
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("RLMAP_REAL_LOGS", HERE)))
    parser.add_argument("--out", type=Path, default=HERE / "readings.yaml")
    args = parser.parse_args(argv)
    bank = yaml.safe_load((HERE / "bank.yaml").read_text(encoding="utf-8"))["logs"]

    readings = []
    for entry in bank:
        path = args.root / entry["path"]
        if "run" in entry:
            data = read_csv_table(path, entry["run"])
        else:
            data = READERS[entry["format"]](path)
        readings.append(reading_for(entry, data))
    text = (
        HEADER
        + "\n"
        + yaml.safe_dump({"logs": readings}, sort_keys=False, allow_unicode=True, width=100)
    )
    args.out.write_text(text, encoding="utf-8")
    print(f"{len(readings)} readings written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
