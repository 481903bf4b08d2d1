#!/usr/bin/env python3
"""Cold start: `rlmap-bot --help`, `ask` and `kb build`
as fresh processes, next to `python -c pass`.

    python3 benchmarks/coldstart.py [--runs N] [--instructions]

Each command runs N times (default 15) in a fresh process with a built store (the first `ask`
builds it and is not counted); the medians are printed with the interpreter's own start-up as the
baseline, so the difference is what rlmap-bot adds. `kb build` (validate every knowledge file and
build the store with its search tables, wordfreq's word lists read) runs BUILD_RUNS times.
Targets: --help under 0.25 s, ask under 0.25 s, kb build under 20 s (issue 18).

Beside each median wall time, the median CPU time of the process (user + system): on a machine
other processes keep busy the wall time grows with the wait for a core, the CPU time much less.
``--instructions`` also counts the instructions of one `--help` and one `ask` under valgrind's
callgrind (when valgrind is installed): the same count on every run, whatever the load, so a change
of a few milliseconds shows on a busy machine too (a start runs about 4 million instructions per
millisecond on the 2-core machine of docs/measurements.md).

Python caches each module's compiled byte code (``__pycache__``) the first time it is imported, so
every start after the first loads it instead of compiling the source again. A shell with
``PYTHONDONTWRITEBYTECODE`` set (some containers set it) never caches, and each start compiles
rlmap-bot's own modules anew (about 45 ms more per ask, measured with cProfile). The benchmark
measures what a user's second and later runs cost: byte code cached, as on any ordinary install.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD_RUNS = 3  # seconds each: a median of three is enough against a 20 s target


def median_times(argv: list[str], runs: int, env: dict[str, str]) -> tuple[float, float]:
    """Median wall and CPU (user + system) seconds of ``argv`` run ``runs`` times."""
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
        )
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(wall), statistics.median(cpu)


def instructions(argv: list[str], env: dict[str, str]) -> int:
    """Instructions one run of ``argv`` executes, counted by valgrind's callgrind."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in callgrind's output: {done.stderr[-300:]}")
    return int(found.group(1))


def report(runs: int = 15, count_instructions: bool = False) -> dict[str, float]:
    exe = str(Path(sys.executable).with_name("rlmap-bot"))
    build_runs = min(runs, BUILD_RUNS)
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "RLMAP_HOME": home}
        env.pop(
            "PYTHONDONTWRITEBYTECODE", None
        )  # see the module docstring: measure cached byte code
        for name in list(env):
            if name.startswith("SLACK_"):
                env.pop(name)
        subprocess.run(
            [exe, "ask", "PPO"], env=env, stdout=subprocess.DEVNULL, check=True
        )  # builds the store
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "rlmap-bot --help": [exe, "--help"],
            "rlmap-bot ask": [exe, "ask", "why is my reward going up but evals down?"],
        }
        times = {name: median_times(argv, runs, env) for name, argv in commands.items()}
        times["rlmap-bot kb build"] = median_times([exe, "kb", "build"], build_runs, env)
        counted = {}
        if count_instructions and shutil.which("valgrind"):
            for name in ("rlmap-bot --help", "rlmap-bot ask"):
                counted[name] = instructions(commands[name], env)
    print(
        f"Cold start, fresh processes, byte code cached, median of {runs} ({build_runs} for kb "
        f"build; seconds, wall and CPU); targets: --help < 0.25, ask < 0.25, kb build < 20"
    )
    base = times["python -c pass"][0]
    for name, (value, cpu) in times.items():
        # A build is seconds of work, not start-up: a ratio to the interpreter would say nothing.
        startup = name not in ("python -c pass", "rlmap-bot kb build")
        extra = (
            f"   (+{value - base:.3f} over the interpreter, {value / base:.1f}x)" if startup else ""
        )
        print(f"   {name:18} {value:.3f}  CPU {cpu:.3f}{extra}")
    if count_instructions and not counted:
        print("   instructions: valgrind is not installed")
    for name, count in counted.items():
        print(f"   {name:18} {count / 1e6:.0f} M instructions (callgrind, one run)")
    return {name: wall for name, (wall, _) in times.items()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count the instructions of one --help and one ask (valgrind's callgrind)",
    )
    args = parser.parse_args()
    report(args.runs, count_instructions=args.instructions)
