"""Benchmark: a watch check's cost at 1k and at 1M logged steps, per source kind built here.

    python benchmarks/watch_sources.py [--steps N] [--repeat R] [--metrics M]

For each source kind this machine can build (a verl console log and a verl file-logger JSONL,
both read through the path kind), a run of 1,000 and one of --steps (default 1,000,000) logged
steps is written, watched with the real WatchService over a SQLite state store, and read once
whole (the first check); then --repeat times 100 new steps are appended and the check that reads
them is timed.  The median of those checks at 1M steps over the one at 1k is the ratio printed
(the target is <= 2: a check costs what is new, not what the run holds).

A W&B run folder written by the real wandb SDK is measured only when ``wandb`` is installed and
writes 1M steps offline within --wandb-budget seconds; otherwise the line says why it is left
out.  Not part of the tests; `python3 dev.py bench` runs it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from logs import write  # noqa: E402 - benchmarks/logs.py: wide verl records, written in blocks

#: New steps a timed check reads.  Judgement: a 15-minute interval of a run at a few seconds a step.
GROWTH = 100


class Quiet:
    """Takes the posts a check makes and drops them."""

    def post_alert(self, channel, alert):
        return "1.0"

    def attach_chart(self, channel, ts, chart, alert):
        pass

    def find(self, channel, alert_id, since):
        return None


def _checks(
    kind: str, folder: Path, steps: int, metrics: int, repeat: int
) -> tuple[float, float, int]:
    """(first check s, median timed check s, bytes a timed check read) for a run of ``steps``."""
    from rlmap_bot.core import Core
    from rlmap_bot.watch.model import Watch
    from rlmap_bot.watch.service import WatchService

    root = folder / "runs"
    root.mkdir(parents=True, exist_ok=True)
    path = root / ("train.log" if kind == "verl-console" else "train.jsonl")
    write(kind, path, steps, metrics)
    core = Core(ROOT / "knowledge", folder / "kb.db", state_url=folder / "state.db")
    clock = [dt.datetime.now(dt.UTC)]
    settings = core.settings.model_copy(update={"rlmap_run_roots": str(root)})
    service = WatchService(core, clock=lambda: clock[0], settings=settings)
    watch = core.state.watches.save(
        Watch(
            team="T",
            channel="C",
            path=str(path.resolve()),
            created_at=clock[0],
            updated_at=clock[0],
        )
    )
    poster = Quiet()

    def check() -> tuple[float, int]:
        clock[0] += dt.timedelta(minutes=15)
        start = time.perf_counter()
        result = service.run(watch.id, f"at:{clock[0].isoformat()}", poster)
        assert result is not None and result.status in ("checked", "unchanged"), result
        return time.perf_counter() - start, result.bytes_read

    first, _ = check()
    times, read = [], 0
    for i in range(repeat):
        write(kind, path, GROWTH, metrics, start=steps + 1 + i * GROWTH, mode="a")
        seconds, read = check()
        times.append(seconds)
    return first, statistics.median(times), read


PROBE = r"""
import sys, time, wandb
run = wandb.init(project="bench", id="probe1")
start = time.perf_counter()
for i in range(int(sys.argv[1])):
    row = {"critic/score/mean": 0.5, "response_length/mean": 300.0, "actor/grad_norm": 0.3}
    run.log(row, step=i)
run.finish()
print(time.perf_counter() - start)
"""


def _wandb_line(budget: float, probe: int = 2_000) -> str:
    """Why a W&B run folder at 1M steps is or is not
    measured: the SDK's offline writing speed here.
    """
    import subprocess

    try:
        import wandb  # noqa: F401
    except ModuleNotFoundError:
        return (
            "W&B run folder: not measured: the wandb SDK is not installed here, and the folder "
            "must be "
            "written by the real SDK (pip install wandb, then rerun)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
        env.update(
            WANDB_MODE="offline",
            WANDB_SILENT="true",
            WANDB_DIR=tmp,
            WANDB_CONSOLE="off",
            WANDB_CONFIG_DIR=tmp,
            WANDB_CACHE_DIR=tmp,
            WANDB_DATA_DIR=tmp,
            WANDB_DISABLE_GIT="true",
        )
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(probe)], env=env, capture_output=True, text=True
        )
    if done.returncode != 0:
        return f"W&B run folder: not measured: the SDK probe failed ({done.stderr.strip()[-200:]})"
    rate = probe / float(done.stdout.strip().splitlines()[-1])
    projected = 1_000_000 / rate
    return (
        f"W&B run folder: not measured at 1M steps: the SDK writes {rate:,.0f} steps/s offline "
        f"here, "
        f"so 1M steps would take {projected / 60:,.0f} min (budget {budget:.0f} s); the reader's "
        f"cursor is the same kind as a line log's (a byte offset per run folder)"
    )


def report(
    steps: int = 1_000_000, repeat: int = 5, metrics: int = 16, wandb_budget: float = 120.0
) -> None:
    os.environ.setdefault("RLMAP_HOME", tempfile.mkdtemp(prefix="rlmap-bench-home-"))
    print(
        f"Watch check cost by source kind: {GROWTH} new steps read at 1k and at {steps:,} logged "
        f"steps "
        f"({metrics} metrics a step; median of {repeat} checks)"
    )
    print(
        f"   {'source':>14} {'1k s':>8} {'big s':>8} {'ratio':>6} {'read KB':>8} "
        f"{'first check s':>14}"
    )
    for kind in ("verl-console", "verl-jsonl"):
        with tempfile.TemporaryDirectory() as small, tempfile.TemporaryDirectory() as big:
            _, t_small, _ = _checks(kind, Path(small), 1_000, metrics, repeat)
            first, t_big, read = _checks(kind, Path(big), steps, metrics, repeat)
        print(
            f"   {kind:>14} {t_small:8.3f} {t_big:8.3f} {t_big / t_small:6.2f} {read / 1e3:8.1f} "
            f"{first:14.1f}"
        )
    print("   " + _wandb_line(wandb_budget))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--metrics", type=int, default=16)
    args = ap.parse_args(argv)
    report(args.steps, args.repeat, args.metrics)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
