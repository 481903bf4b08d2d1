"""Benchmark: a watch's check of a large log that grew, against the size of the log.

    python benchmarks/watch.py [--mb N] [--big] [--metrics N]

Writes a verl console log of --mb MB (default 100; --big: about 1 GB) with --metrics
metrics a step (default 80, of which the alias table keeps about 15), watches it with
the real WatchService over a SQLite state store, and times:

* the first check, which reads the whole log (in pieces of at most 64 MB);
* a check after 1,000 new steps, and one after 10,000 (the cost should follow the growth);
* a check with nothing new;
* beside them, re-reading and deriving the whole log, which is what every check would
  cost a watcher without incremental reading.

It prints bytes read and seconds side by side, the stored state's size and the
process's peak memory.  Not part of the tests.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from logs import write  # noqa: E402 - benchmarks/logs.py: wide verl records, written in blocks


class CountingPoster:
    """Takes the posts a check makes (a healthy run should make none) and counts them."""

    def __init__(self) -> None:
        self.posts: list[str] = []

    def post_alert(self, channel, alert):
        from rlmap_bot.wording.posts import alert_title

        self.posts.append(alert_title(alert))
        return f"{len(self.posts)}.0"

    def attach_chart(self, channel, ts, chart, alert):
        pass

    def find(self, channel, alert_id, since):
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--mb", type=int, default=100, help="size of the watched log in MB (default 100)"
    )
    ap.add_argument("--big", action="store_true", help="a log of about 1 GB")
    ap.add_argument("--metrics", type=int, default=80)
    args = ap.parse_args()
    target = (1 << 30) if args.big else args.mb * 1_000_000

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        root = folder / "runs"
        root.mkdir()
        os.environ["RLMAP_RUN_ROOTS"] = str(root)
        os.environ["RLMAP_HOME"] = str(folder / "home")
        path = root / "train.log"
        t0 = time.perf_counter()
        probe = 10_000
        write("verl-console", path, probe, args.metrics)
        per_step = path.stat().st_size / probe
        steps = max(probe, int(target / per_step))
        if steps > probe:
            write("verl-console", path, steps - probe, args.metrics, start=probe + 1, mode="a")
        size = path.stat().st_size
        print(
            f"log: {size / 1e6:,.0f} MB, {steps:,} steps x {args.metrics} metrics ({per_step:,.0f} "
            f"bytes a step), written in {time.perf_counter() - t0:.0f} s; {os.cpu_count()} cores"
        )

        from rlmap_bot.core import Core
        from rlmap_bot.runs.aliases import load_aliases
        from rlmap_bot.runs.signals import derive_signals
        from rlmap_bot.runs.sources import read_source
        from rlmap_bot.runs.sources.access import workspace_access_for
        from rlmap_bot.watch.model import Watch
        from rlmap_bot.watch.service import WatchService

        core = Core(ROOT / "knowledge", folder / "kb.db", state_url=folder / "state.db")
        clock = [dt.datetime.now(dt.UTC)]
        service = WatchService(
            core, access=workspace_access_for(core.settings, core.state), clock=lambda: clock[0]
        )
        watch = core.state.watches.save(
            Watch(
                team="T",
                channel="C",
                path=str(path.resolve()),
                created_at=clock[0],
                updated_at=clock[0],
            )
        )
        poster = CountingPoster()
        rows: list[tuple[str, float, int, float]] = []

        def check(label: str) -> None:
            clock[0] += dt.timedelta(minutes=15)
            start = time.perf_counter()
            result = service.run(watch.id, f"at:{clock[0].isoformat()}", poster)
            rows.append(
                (label, path.stat().st_size / 1e6, result.bytes_read, time.perf_counter() - start)
            )

        check("first check: the whole log")
        first_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        for grow in (1_000, 10_000):
            write("verl-console", path, grow, args.metrics, start=steps + 1, mode="a")
            steps += grow
            check(f"check after {grow:,} new steps")
        check("check with nothing new")
        aliases = load_aliases(ROOT / "knowledge")
        start = time.perf_counter()
        derive_signals(read_source(path, aliases=aliases), aliases)
        rows.append(
            (
                "re-read and derive the whole log",
                path.stat().st_size / 1e6,
                path.stat().st_size,
                time.perf_counter() - start,
            )
        )

        print(f"\n{'':36} {'log MB':>8} {'read MB':>9} {'seconds':>9}")
        for label, mb, read, seconds in rows:
            print(f"{label:36} {mb:8,.0f} {read / 1e6:9.2f} {seconds:9.3f}")
        grow1, grow10 = rows[1][3], rows[2][3]
        print(
            f"\n10x the growth costs {grow10 / grow1:.1f}x the time; a 1,000-step check costs "
            f"{grow1 / rows[-1][3]:.4f} of re-reading the whole log ({rows[-1][3] / grow1:,.0f}x "
            f"less)."
        )
        _, blob, _ = core.state.watches.load_state(watch.id)
        print(
            f"stored state: {len(blob or b'') / 1e3:,.0f} KB of kept series; peak memory "
            f"{first_peak:,.0f} MB after the first check; posts made: {len(poster.posts)} "
            f"{poster.posts[:3]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
