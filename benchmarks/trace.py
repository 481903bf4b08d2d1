"""How far a command travels inside rlmap_bot: the modules it runs and the hops between them.

    python benchmarks/trace.py [--edges] [--json]

Two traces, each of a real run of the command in this process (issue 39):

* ``watch``: ``/rlmap watch trackio:grpo-demo/run-a every 5m`` sent as a signed slash command to
  the real Bolt app (in process, against the Slack stand-in of ``tests/support``), on a Trackio run
  of 200 steps written by the trackio SDK, with ``TRACKIO_DIR`` under ``RLMAP_RUN_ROOTS``; the
  command sets the watch, announces it, checks the run at once and replies.
* ``diagnose``: ``diagnose --run examples/grpo-run.log`` typed at the local shell (the README's
  first session: the verdict, and the chart the shell draws of every run).

Each command is run twice in one process and the second run is traced, so what is counted is the
command's own path in a bot or shell that is already up: not the imports, the opening of the
knowledge store or the building of the diagnosis engine, which the first command of any process
pays (a watch is set in another channel first; the shell reads the same run before).  While it
runs, ``sys.setprofile`` (and ``threading.setprofile``, for Bolt's listener threads) sees every
Python call.  Definitions:

* a **module** is a ``.py`` file of ``src/rlmap_bot`` in which at least one function ran during
  the traced command (module-level code run by an import is left out: an import is not a step of
  the command);
* a **package** is the module's unit in the layers contract: the first name under ``rlmap_bot``
  (``runs`` for ``rlmap_bot.runs.sources.trackio``, ``wording`` for ``rlmap_bot.wording``);
* a **hop** is an ordered pair of different modules (A, B) such that a function of B was called
  while the nearest rlmap_bot frame below it (library frames skipped: Bolt, pydantic, functools)
  was one of A.  Each pair counts once however often it is taken; a **package hop** is a hop
  whose two modules lie in different packages, and a **middle hop** a package hop of which
  neither module is a front-end's (``cli``, ``slack``): the core's own crossings.

Not part of the tests.  The counts before and after the issue-39 restructure are in
docs/architecture.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import rlmap_bot  # noqa: E402 - the package traced: this checkout's, or the one on PYTHONPATH

PACKAGE_DIR = Path(rlmap_bot.__file__).resolve().parent


#: The front-ends' packages: what is left of a trace without them is the middle.
FRONT_ENDS = {"cli", "slack"}


class Tracer:
    """Records rlmap_bot modules entered and the hops between them while ``recording``."""

    def __init__(self) -> None:
        self.recording = False
        self.modules: set[str] = set()
        self.hops: Counter[tuple[str, str]] = Counter()
        self._names: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def module(self, filename: str) -> str | None:
        """The dotted module name of a file of src/rlmap_bot; None for anything else."""
        name = self._names.get(filename, "")
        if name != "":
            return name
        path = Path(filename)
        found: str | None = None
        if path.is_absolute() and path.suffix == ".py":
            try:
                rel = path.resolve().relative_to(PACKAGE_DIR)
            except ValueError:
                rel = None
            if rel is not None:
                parts = ["rlmap_bot", *rel.with_suffix("").parts]
                if parts[-1] == "__init__":
                    parts.pop()
                found = ".".join(parts)
        self._names[filename] = found
        return found

    def profile(self, frame, event: str, arg) -> None:  # noqa: ANN001 - sys.setprofile's signature
        if not self.recording or event != "call":
            return
        code = frame.f_code
        if code.co_name == "<module>":
            return
        callee = self.module(code.co_filename)
        if callee is None:
            return
        caller = None
        back = frame.f_back
        while back is not None:
            filename = back.f_code.co_filename
            if filename.startswith("<frozen importlib"):
                return  # run by an import (a class body, a decorator): not a step of the command
            caller = self.module(filename)
            if caller is not None:
                if back.f_code.co_name == "<module>":
                    return
                break
            back = back.f_back
        with self._lock:
            self.modules.add(callee)
            if caller is not None and caller != callee:
                self.hops[(caller, callee)] += 1

    def __enter__(self) -> Tracer:
        threading.setprofile(self.profile)
        sys.setprofile(self.profile)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]

    def summary(self) -> dict:
        def package(module: str) -> str:
            return module.split(".")[1] if "." in module else module

        packages = sorted({package(m) for m in self.modules})
        cross = sorted(h for h in self.hops if package(h[0]) != package(h[1]))
        middle = [h for h in cross if not {package(h[0]), package(h[1])} & FRONT_ENDS]
        return {
            "modules": len(self.modules),
            "packages": len(packages),
            "hops": len(self.hops),
            "package_hops": len(cross),
            "middle_hops": len(middle),
            "package_names": packages,
            "module_names": sorted(self.modules),
            "hop_pairs": [f"{a} -> {b}" for a, b in sorted(self.hops)],
        }


#: The Trackio run: 200 healthy steps of a TRL-style run (its callback's ``train/`` names).
WRITER = """
    import math, trackio
    trackio.init(project="grpo-demo", name="run-a")
    for s in range(200):
        wiggle = 0.01 * math.sin(s / 3)
        trackio.log({"train/reward": 0.55 + 0.0005 * s + wiggle, "train/loss": 0.40 - 0.0005 * s,
                     "train/grad_norm": 1.0 + wiggle}, step=s)
    trackio.finish()
"""


def trace_watch(tmp: Path, db: Path) -> dict:
    """The second ``/rlmap watch trackio:... every 5m`` a served bot answers, traced."""
    from rlmap_bot.core import Core
    from rlmap_bot.settings import Settings
    from rlmap_bot.slack.app import SlackFrontEnd
    from support import KNOWLEDGE
    from support.bot import in_process
    from support.standin import BOT_TOKEN, SIGNING_SECRET, Slack, StandIn

    roots = tmp / "runs"
    folder = roots / "trackio"
    folder.mkdir(parents=True)
    os.environ["TRACKIO_DIR"] = str(folder)
    subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WRITER)],
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _rows_written(folder)
    standin = StandIn().start()
    tracer = Tracer()
    try:
        with tracer:  # installed before the bot exists, so Bolt's listener threads inherit it
            settings = Settings(
                slack_bot_token=BOT_TOKEN,
                slack_signing_secret=SIGNING_SECRET,
                slack_api_url=standin.base_url,
                rlmap_run_roots=str(roots),
            )
            front = SlackFrontEnd(Core(KNOWLEDGE, db, state_url=tmp / "state.db"), settings)
            slack = Slack("http://in-process", standin)
            slack.dispatch = in_process(front.app)
            for channel in ("C0", "C1"):
                tracer.recording = channel == "C1"
                name = f"reply-{channel}"
                slack.command(
                    "watch trackio:grpo-demo/run-a every 5m", channel=channel, respond_as=name
                )
                [reply] = standin.wait_for("response_url", lambda c, n=name: c.target == n, 60)
                text = reply.args.get("text", "")
                assert "Watching `trackio:grpo-demo/run-a`" in text, text
                _settle(front)
            tracer.recording = False
            front.app.listener_runner.listener_executor.shutdown(wait=True)
    finally:
        standin.stop()
    return tracer.summary()


def _settle(front) -> None:  # noqa: ANN001
    """Wait until the listener that answered has finished (its claim is settled after the reply)."""
    executor = front.app.listener_runner.listener_executor
    deadline = time.monotonic() + 30
    while getattr(executor, "_work_queue", None) is not None and not executor._work_queue.empty():
        assert time.monotonic() < deadline, "the listener never finished"
        time.sleep(0.05)
    time.sleep(0.5)  # the running listener returns after its reply


def _rows_written(folder: Path) -> None:
    """trackio.finish() has returned; the rows are in its store once a read sees all 200."""
    from rlmap_bot.runs.sources import open_source, parse_source
    from rlmap_bot.runs.sources.access import Access

    source = open_source(
        parse_source("trackio:grpo-demo/run-a"), Access(environ={"TRACKIO_DIR": str(folder)})
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            run, _ = source.read_new(None, lambda name: name == "train/loss")
            if len(run.series.get("train/loss", ())) >= 200:
                return
        except Exception:  # noqa: BLE001 - the store may not exist yet
            pass
        assert time.monotonic() < deadline, "trackio wrote fewer than 200 steps in 60 s"
        time.sleep(0.2)


def trace_diagnose(tmp: Path, db: Path) -> dict:
    """The second ``diagnose --run examples/grpo-run.log`` typed at one local shell, traced."""
    import io

    from rlmap_bot.cli.shell import Shell
    from rlmap_bot.core import Core
    from support import KNOWLEDGE

    line = f"diagnose --run {ROOT / 'examples' / 'grpo-run.log'}"
    out = io.StringIO()
    shell = Shell(Core(KNOWLEDGE, db, state_url=tmp / "shell.db"), io.StringIO(), out)
    tracer = Tracer()
    with tracer:
        for traced in (False, True):
            start = len(out.getvalue())
            tracer.recording = traced
            shell.handle(line)
            tracer.recording = False
            assert "Verdict:" in out.getvalue()[start:], out.getvalue()
    return tracer.summary()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", action="store_true", help="list the modules and hops")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.add_argument("--only", choices=("watch", "diagnose"), help="one trace")
    args = parser.parse_args()
    from rlmap_bot.search.index import build_store
    from support import KNOWLEDGE

    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="rlmap-trace-") as scratch:
        tmp = Path(scratch)
        os.environ["RLMAP_HOME"] = str(tmp / "home")
        db = tmp / "knowledge.db"
        build_store(KNOWLEDGE, db)
        if args.only in (None, "watch"):
            out["watch"] = trace_watch(tmp, db)
        if args.only in (None, "diagnose"):
            out["diagnose"] = trace_diagnose(tmp, db)
    if args.json:
        print(json.dumps(out if args.edges else _counts(out), indent=2))
        return
    for name, summary in out.items():
        print(
            f"{name}: {summary['modules']} modules in {summary['packages']} packages "
            f"({', '.join(summary['package_names'])}); {summary['hops']} hops, "
            f"{summary['package_hops']} between packages, {summary['middle_hops']} of them in the "
            f"middle"
        )
        if args.edges:
            for module in summary["module_names"]:
                print(f"  module {module}")
            for hop in summary["hop_pairs"]:
                print(f"  hop {hop}")


def _counts(out: dict[str, dict]) -> dict[str, dict]:
    keys = ("modules", "packages", "hops", "package_hops", "middle_hops")
    return {name: {k: s[k] for k in keys} for name, s in out.items()}


if __name__ == "__main__":
    main()
