"""Benchmark: read and derive 100,000-step logs with 80 metrics in each text format.

    python benchmarks/logs.py [--steps N] [--metrics N] [--big]

For verl console, verl JSONL and CSV it prints wall time, throughput (MB/s)
beside a baseline that only reads the file's lines (the ratio says what parsing
and deriving cost on top of I/O), and peak memory.  Every measurement runs in
its own subprocess so peak RSS (getrusage maxrss) belongs to that read alone.
Then, for the incremental reader, the time to read a 1,000-step growth of a
large file against reading the whole file (``--big`` grows the file to about
1 GB first).  Targets: under 5 s and under 500 MB a format.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support import runlogs as rl  # noqa: E402

FORMATS = ("verl-console", "verl-jsonl", "csv")


def wide_records(steps: int, metrics: int, start: int = 1):
    """``steps`` records of a healthy verl run padded
    to ``metrics`` metrics, generated in blocks.
    """
    import numpy as np

    block = 10_000
    base = rl.named(rl.curves("healthy", steps=block, seed=1), "verl", filler=8)[1:]
    names = list(base[0][1])
    extra = [f"extra/metric_{i:03d}" for i in range(max(0, metrics - len(names)))]
    rng = np.random.default_rng(2)
    for i in range(steps):
        step = start + i
        row = dict(base[i % block][1])
        noise = rng.random(len(extra))
        for name, value in zip(extra, noise, strict=True):
            row[name] = float(value)
        yield step, row


def write(fmt: str, path: Path, steps: int, metrics: int, start: int = 1, mode: str = "w") -> None:
    with open(path, mode, encoding="utf-8", newline="") as f:
        header = None
        for step, row in wide_records(steps, metrics, start):
            if fmt == "verl-console":
                f.write(
                    f"(TaskRunner pid=1) step:{step} - "
                    + " - ".join(f"{k}:np.float64({v!r})" for k, v in row.items())
                    + "\n"
                )
            elif fmt == "verl-jsonl":
                f.write(json.dumps({"step": step, "data": row}) + "\n")
            else:
                if header is None:
                    header = list(row)
                    if mode == "w":
                        f.write(",".join(["step", *header]) + "\n")
                f.write(",".join([str(step), *(repr(row[k]) for k in header)]) + "\n")


def _child(kind: str, path: str, fmt: str) -> None:
    """Runs in a subprocess: one measurement, printed as JSON."""
    t0 = time.perf_counter()
    if kind == "baseline":
        n = 0
        with open(path, "rb") as f:
            for _ in f:
                n += 1
        out = {"lines": n}
    else:
        from rlmap_bot.runs.aliases import load_aliases
        from rlmap_bot.runs.signals import derive_signals
        from rlmap_bot.runs.sources import read_source

        aliases = load_aliases(ROOT / "knowledge")
        run = read_source(path, format=fmt, aliases=aliases)
        d = derive_signals(run, aliases)
        out = {"signals": len(d.signals), "steps": run.step_count}
    out["seconds"] = time.perf_counter() - t0
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def measure(kind: str, path: Path, fmt: str) -> dict:
    res = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path), fmt],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def incremental(folder: Path, big: bool, metrics: int) -> None:
    from rlmap_bot.runs.aliases import load_aliases
    from rlmap_bot.runs.incremental import RunReader

    aliases = load_aliases(ROOT / "knowledge")
    path = folder / "growing.log"
    steps = 100_000
    write("verl-console", path, steps, metrics)
    if big:
        per_step = path.stat().st_size / steps
        more = int((1 << 30) / per_step) - steps
        write("verl-console", path, more, metrics, start=steps + 1, mode="a")
        steps += more
    reader = RunReader(path, aliases=aliases)
    t0 = time.perf_counter()
    reader.read_new()
    whole = time.perf_counter() - t0
    size = path.stat().st_size
    write("verl-console", path, 1000, metrics, start=steps + 1, mode="a")
    t0 = time.perf_counter()
    delta = reader.read_new()
    grow = time.perf_counter() - t0
    print(f"\nincremental (verl console, {size / 1e6:,.0f} MB file, {steps:,} steps):")
    print(f"  read whole file      {whole:8.2f} s")
    print(
        f"  read 1,000 new steps {grow:8.4f} s   ({delta.bytes_read / 1e6:.1f} MB read; "
        f"{whole / max(grow, 1e-9):,.0f}x faster than re-reading)"
    )


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(*sys.argv[2:5])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--metrics", type=int, default=80)
    ap.add_argument(
        "--big", action="store_true", help="grow the incremental test file to about 1 GB"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"{args.steps:,} steps x {args.metrics} metrics, {os.cpu_count()} cores\n")
        print(
            f"{'format':14} {'size MB':>8} {'read+derive s':>14} {'MB/s':>7} {'lines-only s':>13} "
            f"{'MB/s':>7} {'ratio':>6} {'peak MB':>8}"
        )
        for fmt in FORMATS:
            path = folder / f"run.{fmt}"
            write(fmt, path, args.steps, args.metrics)
            mb = path.stat().st_size / 1e6
            base = measure("baseline", path, fmt)
            full = measure("read", path, fmt)
            print(
                f"{fmt:14} {mb:8.0f} {full['seconds']:14.2f} {mb / full['seconds']:7.0f} "
                f"{base['seconds']:13.2f} {mb / base['seconds']:7.0f} "
                f"{full['seconds'] / base['seconds']:5.1f}x {full['peak_mb']:8.0f}"
            )
            path.unlink()
        incremental(folder, args.big, args.metrics)
    return 0


if __name__ == "__main__":
    sys.exit(main())
