"""Benchmark: a watch check's cost at 1k and at 1M logged steps, per source kind built here.

    python benchmarks/watch_sources.py [--steps N] [--repeat R] [--metrics M] [--only KIND ...]
                                       [--tracker-steps KIND=N ...] [--build-only]

For each source kind, a run of 1,000 and one of --steps (default 1,000,000) logged steps is
watched and read once whole (the first check); then --repeat times 100 new steps are logged and
the check that reads them is timed.  The median of those checks on the large run over the one on
the small run is the ratio printed (the target is <= 2: a check costs what is new, not what the
run holds).  The kinds:

* a verl console log and a verl file-logger JSONL (paths), written here (benchmarks/logs.py);
* a W&B run folder (its ``.wandb`` transaction log), a TensorBoard folder, a Trackio store and
  an MLflow SQLite store, written by the trackers' own SDKs (benchmarks/tracker_writer.py: wandb
  offline, tensorboard's event writer, trackio, MLflow's client).  Writing 1M steps takes them
  minutes, so each large run is built once and kept in ~/.cache/rlmap-bot/bench/ (or
  $RLMAP_BENCH_CACHE) under the SDK's version and the step count; each line says whether it was
  built or reused.  The run is copied out of the cache and grown by the same SDK in its own
  process (W&B: the run resumed under its id, a new folder each time; TensorBoard: the event
  file appended to; Trackio: the run resumed by name; MLflow: log_batch on the run).

Every source goes through the real WatchService over a SQLite state store, read with a
terminal's access (this process's environment, as `rlmap-bot watch` reads).  Not part of the
tests; `python3 dev.py bench` runs it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import shutil
import statistics
import subprocess
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


def _timed_check(folder: Path, roots: Path, terminal: bool, path: str):
    """A watch of ``path`` on a fresh Core in ``folder`` (runs read under ``roots``; ``terminal``:
    with this process's environment, as `rlmap-bot watch` reads, else a workspace's access), and a
    function that advances the clock a slot, checks it once and returns (seconds, bytes read)."""
    from rlmap_bot.core import Core
    from rlmap_bot.runs.sources.access import terminal_access_for, workspace_access_for
    from rlmap_bot.watch.model import Watch
    from rlmap_bot.watch.service import WatchService

    core = Core(ROOT / "knowledge", folder / "kb.db", state_url=folder / "state.db")
    clock = [dt.datetime.now(dt.UTC)]
    settings = core.settings.model_copy(update={"rlmap_run_roots": str(roots)})
    access = terminal_access_for() if terminal else workspace_access_for(settings, core.state)
    service = WatchService(core, access=access, clock=lambda: clock[0], settings=settings)
    watch = core.state.watches.save(
        Watch(team="T", channel="C", path=path, created_at=clock[0], updated_at=clock[0])
    )
    poster = Quiet()

    def check() -> tuple[float, int]:
        clock[0] += dt.timedelta(minutes=15)
        start = time.perf_counter()
        result = service.run(watch.id, f"at:{clock[0].isoformat()}", poster)
        assert result is not None and result.status in ("checked", "unchanged"), result
        return time.perf_counter() - start, result.bytes_read

    return check


def _checks(
    kind: str, folder: Path, steps: int, metrics: int, repeat: int
) -> tuple[float, float, int]:
    """(first check s, median timed check s, bytes a timed check read) for a run of ``steps``."""
    root = folder / "runs"
    root.mkdir(parents=True, exist_ok=True)
    path = root / ("train.log" if kind == "verl-console" else "train.jsonl")
    write(kind, path, steps, metrics)
    check = _timed_check(folder, root, False, str(path.resolve()))

    first, _ = check()
    times, read = [], 0
    for i in range(repeat):
        write(kind, path, GROWTH, metrics, start=steps + 1 + i * GROWTH, mode="a")
        seconds, read = check()
        times.append(seconds)
    return first, statistics.median(times), read


WRITER = ROOT / "benchmarks" / "tracker_writer.py"
#: Where the trackers' runs of many steps are kept between bench runs (writing 1M steps with a
#: tracker's SDK takes minutes): one folder per tracker, its SDK's version and the step count.
CACHE = Path(os.environ.get("RLMAP_BENCH_CACHE", "~/.cache/rlmap-bot/bench")).expanduser()
#: The package whose writer writes each tracker's run (its version keys the cache).
PACKAGES = {
    "wandb": "wandb",
    "mlflow": "mlflow",
    "trackio": "trackio",
    "tensorboard": "tensorboard",
}


def _writer_env(kind: str, folder: Path) -> dict[str, str]:
    """The environment a tracker's writer (and its reader) gets for a run kept in ``folder``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "MLFLOW_"))}
    env.update(
        WANDB_MODE="offline",
        WANDB_SILENT="true",
        WANDB_DIR=str(folder),
        WANDB_CONFIG_DIR=str(folder / ".cfg"),
        WANDB_CACHE_DIR=str(folder / ".cache"),
        WANDB_DATA_DIR=str(folder / ".data"),
        WANDB_CONSOLE="off",
        WANDB_DISABLE_GIT="true",
        MLFLOW_TRACKING_URI=f"sqlite:///{folder}/mlflow.db",
        TRACKIO_DIR=str(folder),
        HF_HUB_OFFLINE="1",
    )
    return env


class Writer:
    """A tracker's SDK in its own process (benchmarks/tracker_writer.py), logging on command."""

    def __init__(self, kind: str, folder: Path):
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER), kind, str(folder)],
            env=_writer_env(kind, folder),
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._wait()

    def _wait(self) -> None:
        assert self.proc.stdout is not None
        while (line := self.proc.stdout.readline()) and line.strip() != "ok":
            pass
        if not line:
            raise RuntimeError(f"the tracker writer stopped (exit {self.proc.wait()})")

    def log(self, start: int, count: int) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"log {start} {count}\n")
        self.proc.stdin.flush()
        self._wait()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=600)


def cached_run(kind: str, steps: int) -> tuple[Path, str]:
    """A folder holding a run of ``steps`` steps written by ``kind``'s SDK, and whether it was
    built now or reused from :data:`CACHE` (built once, in a folder renamed into place)."""
    version = importlib.metadata.version(PACKAGES[kind])
    dest = CACHE / f"{kind}-{version}-{steps}"
    if (dest / "built").is_file():
        return dest / "run", f"reused {dest}"
    building = CACHE / f".{dest.name}.{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    (building / "run").mkdir(parents=True)
    start = time.perf_counter()
    writer = Writer(kind, building / "run")
    writer.log(0, steps)
    writer.close()
    seconds = time.perf_counter() - start
    (building / "built").write_text(f"{seconds:.0f} s with {kind} {version}\n")
    shutil.rmtree(dest, ignore_errors=True)
    building.rename(dest)
    return dest / "run", f"built in {seconds:.0f} s into {dest}"


def _watched(kind: str, folder: Path) -> str:
    """What a watch of the run in ``folder`` names, as a person would type it."""
    if kind == "wandb":
        return str(folder / "wandb")
    if kind == "mlflow":
        return "mlflow:" + (folder / "run_id").read_text().strip()
    if kind == "trackio":
        return "trackio:bench/bench1"
    return str(folder)


def _tracker_checks(
    kind: str, folder: Path, steps: int, repeat: int
) -> tuple[float, float, int, str]:
    """As :func:`_checks`, for a tracker's run copied from the cache into ``folder``."""
    cached, how = cached_run(kind, steps)
    run = folder / "run"
    shutil.copytree(cached, run, symlinks=True)
    env = _writer_env(kind, run)
    saved = {k: os.environ.get(k) for k in ("MLFLOW_TRACKING_URI", "TRACKIO_DIR")}
    os.environ.update({k: env[k] for k in saved})
    # read with this process's environment, as `rlmap-bot watch` does
    check = _timed_check(folder, folder, True, _watched(kind, run))

    writer = Writer(kind, run)
    try:
        first, _ = check()
        times, read = [], 0
        for i in range(repeat):
            writer.log(steps + i * GROWTH, GROWTH)
            seconds, read = check()
            times.append(seconds)
    finally:
        writer.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return first, statistics.median(times), read, how


TRACKERS = ("wandb", "tensorboard", "trackio", "mlflow")
#: Tracker stores named by a prefix and found through the environment: read through SQL, so no
#: byte count.
STORES = ("trackio", "mlflow")
#: A tracker's large run when --tracker-steps does not say.  MLflow's client writes about 1,300
#: metric rows a second into its SQLite store here (log_batch, 2-core machine under load): 1M
#: steps of 4 metrics would take about 50 minutes to build once, so it is measured at 100k.
DEFAULT_STEPS = {"mlflow": 100_000}
LABELS = {
    "verl-console": "verl console log",
    "verl-jsonl": "verl JSONL",
    "wandb": "W&B run folder",
    "tensorboard": "TensorBoard folder",
    "trackio": "Trackio store",
    "mlflow": "MLflow sqlite",
}


def report(
    steps: int = 1_000_000,
    repeat: int = 5,
    metrics: int = 16,
    only: tuple[str, ...] = (),
    tracker_steps: dict[str, int] | None = None,
) -> None:
    """Print one line a source kind; ``tracker_steps`` sets a tracker's large run (default
    ``steps``), for a tracker too slow to write ``steps`` here."""
    os.environ.setdefault("RLMAP_HOME", tempfile.mkdtemp(prefix="rlmap-bench-home-"))
    print(
        f"Watch check cost by source kind: {GROWTH} new steps read at 1k and at {steps:,} logged "
        f"steps (verl logs {metrics} metrics a step, trackers 4; median of {repeat} checks; load "
        f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(
        f"   {'source':>18} {'1k s':>8} {'big s':>8} {'steps':>9} {'ratio':>6} {'read KB':>8} "
        f"{'first check s':>14}"
    )
    for kind in [k for k in (*LABELS,) if not only or k in only]:
        big = {**DEFAULT_STEPS, **(tracker_steps or {})}.get(kind, steps)
        notes = []
        try:
            with tempfile.TemporaryDirectory() as small, tempfile.TemporaryDirectory() as large:
                if kind in TRACKERS:
                    _, t_small, _, how_small = _tracker_checks(kind, Path(small), 1_000, repeat)
                    first, t_big, read, how = _tracker_checks(kind, Path(large), big, repeat)
                    notes.append(f"{big:,}-step run {how}")
                else:
                    _, t_small, _ = _checks(kind, Path(small), 1_000, metrics, repeat)
                    first, t_big, read = _checks(kind, Path(large), big, metrics, repeat)
        except Exception as exc:  # noqa: BLE001 - one source that cannot be built here: said
            print(f"   {LABELS[kind]:>18} not measured: {type(exc).__name__}: {exc}"[:300])
            continue
        print(
            f"   {LABELS[kind]:>18} {t_small:8.3f} {t_big:8.3f} {big:9,} {t_big / t_small:6.2f} "
            f"{(f'{read / 1e3:.1f}' if kind not in STORES else '-'):>8} {first:14.1f}"
            + (f"  ({'; '.join(notes)})" if notes else "")
        )
        if big < steps:
            print(f"   {'':>18} ({kind} measured at {big:,} steps, not {steps:,}: see --help)")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--metrics", type=int, default=16)
    ap.add_argument("--only", nargs="*", default=[], choices=list(LABELS), help="these kinds")
    ap.add_argument(
        "--tracker-steps",
        nargs="*",
        default=[],
        metavar="KIND=N",
        help="a tracker's large run at N steps (MLflow's client writes about 1,300 metric rows/s "
        "here: 1M steps of 4 metrics is about 50 minutes the first time)",
    )
    ap.add_argument(
        "--build-only", action="store_true", help="write the trackers' cached runs, measure nothing"
    )
    args = ap.parse_args(argv)
    sizes = {
        **DEFAULT_STEPS,
        **{k: int(n) for k, _, n in (x.partition("=") for x in args.tracker_steps)},
    }
    if args.build_only:
        for kind in args.only or TRACKERS:
            if kind in TRACKERS:
                for n in (1_000, sizes.get(kind, args.steps)):
                    print(kind, n, cached_run(kind, n)[1], flush=True)
        return 0
    report(args.steps, args.repeat, args.metrics, tuple(args.only), sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
