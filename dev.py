#!/usr/bin/env python3
"""Set up and run rlmap-bot from a fresh checkout, with nothing but Python 3.11 and pip.

    python3 dev.py run [ARGS...]   create .venv if needed, install, then run `rlmap-bot ARGS...`
    python3 dev.py test [ARGS...]  create .venv if needed,
    install with test extras, then run pytest ARGS...
                                   (in 4 pytest-xdist workers unless
                                   ARGS choose: -n 0 for one process)
    python3 dev.py bench [ARGS...] the same set-up, then run the search and diagnosis benchmarks
    python3 dev.py bench-load [ARGS...]  the load benchmark (one and two replicas)
    python3 dev.py cards [ARGS...] every Slack card from realistic inputs, as JSON and HTML
                                   pages in build/cards/ (--shots: screenshots with Chromium)
    python3 dev.py lint            the same set-up, then ruff
    check, ruff format --check and mypy (as .ci/run does)
    python3 dev.py docs            the same set-up,
    then regenerate docs/commands.md from --help (cog)

The virtual environment lives at .venv/ in the checkout.  Installing is skipped
when pyproject.toml has not changed since the last install (a stamp file
records its hash), so the second run starts at once.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
COGGED = ("docs/commands.md",)  # pages with [[[cog ... ]]] blocks (tests/test_docs.py checks them)


def ensure_venv(extras: str) -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py runs under any python3 to say this
        sys.exit("rlmap-bot needs Python 3.11 or newer; this is " + sys.version.split()[0])
    # Two dev.py commands started at once (CI runs lint beside the tests) set up one .venv: the
    # second waits for the first instead of installing into the same folder at the same time.
    with open(ROOT / ".venv.lock", "a") as lock:
        if os.name == "posix":
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        _install(extras)


def _install(extras: str) -> None:
    if not PYTHON.exists():
        print("creating virtual environment in .venv/ ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
        # The pip that Python 3.11's venv ships (23.2) weighs every file of every release page it
        # reads: resolving the test extras took 56 s of CPU on 2 cores, against 32 s for pip 26,
        # which this upgrade (about 3 s) brings. A venv made before keeps its pip.
        subprocess.run(
            [str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            + ["pip>=26,<27"],
            cwd=ROOT,
            check=True,
        )
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    stamp = VENV / f".installed-{extras or 'base'}"
    if stamp.exists() and stamp.read_text() == wanted:
        return
    # pip runs quietly (its own output is mostly noise);
    # say how long the wait is (a newcomer pass: 45 s of
    # silence on the first run). Measured on 2 cores: 34-47
    # s for the first install, once per pyproject change.
    print(
        f"installing rlmap-bot{f'[{extras}]' if extras else ''} into .venv/ (about a minute; only "
        f"when pyproject.toml changes) ...",
        flush=True,
    )
    target = f".[{extras}]" if extras else "."
    subprocess.run(
        # --no-compile: pip would byte-compile every module of every dependency (a third of the
        # install's time on 2 cores: 47 s -> 34 s measured); Python compiles the few it imports
        # (for the tests, into .venv/pycache: test_env).
        [
            str(PYTHON),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",
            "-e",
            target,
        ],
        cwd=ROOT,
        check=True,
    )
    stamp.write_text(wanted)


def workers(args: list[str]) -> list[str]:
    """pytest-xdist's ``-n 4`` unless the caller chose
    (``-n``, ``--numprocesses``, ``-p no:xdist``).

    The suite spends most of its wall time waiting on the servers and processes it starts, so 4
    workers keep 2 cores busy (measured with 1,005 tests on 2 cores: 4 min 33 s of wall time for
    3 min 20 s of CPU in one process, 2 min 11 s in four).
    """
    chosen = any(
        a in ("-n", "--numprocesses", "no:xdist") or a.startswith(("-n", "--numprocesses="))
        for a in args
    )
    return [] if chosen else ["-n", "4"]


def test_env() -> dict[str, str]:
    """The tests' environment, with Python's compiled bytecode kept under ``.venv/pycache/``.

    The suite starts hundreds of Python processes (``rlmap-bot`` itself, ``mlflow server``, the
    tracker SDKs writing runs). With no bytecode cache, each one compiles every module it imports
    again: pip installs with ``--no-compile`` and PYTHONDONTWRITEBYTECODE, set on some machines,
    writes none. Measured on 2 cores: ``import mlflow`` 3.4 s -> 1.3 s, ``import
    rlmap_bot.slack.app`` 1.5 s -> 0.8 s of CPU once cached. PYTHONPYCACHEPREFIX puts the cache in
    the virtual environment, so the checkout stays free of ``__pycache__`` folders either way.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(VENV / "pycache"))
    return env


COMMANDS = ("run", "test", "bench", "bench-load", "cards", "lint", "docs")


def main(argv: list[str]) -> int:
    if argv and argv[0] in {"-h", "--help", "help"}:
        print(__doc__.strip())
        return 0
    if not argv or argv[0] not in COMMANDS:
        if argv:
            import difflib

            near = difflib.get_close_matches(argv[0], COMMANDS, n=1)
            print(
                f"dev.py: unknown command {argv[0]!r}"
                + (f"; did you mean {near[0]!r}?" if near else ""),
                file=sys.stderr,
            )
        print(__doc__.strip(), file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "lint" and rest:
        print(
            "dev.py lint takes no arguments: it runs ruff check, ruff format --check and mypy",
            file=sys.stderr,
        )
        return 0 if rest[0] in {"-h", "--help"} else 2
    if command == "docs" and rest:
        print(
            "dev.py docs takes no arguments: it regenerates docs/commands.md from --help",
            file=sys.stderr,
        )
        return 0 if rest[0] in {"-h", "--help"} else 2
    try:
        if command == "run":
            ensure_venv("")
            exe = BIN / "rlmap-bot"
            if (
                os.name == "posix"
            ):  # hand the terminal over: Ctrl-C and signals reach the bot, not dev.py
                os.chdir(ROOT)
                os.execv(str(exe), [str(exe), *rest])
            return subprocess.call([str(exe), *rest], cwd=ROOT)
        ensure_venv("test")
        if command == "test":
            return subprocess.call(
                [str(PYTHON), "-m", "pytest", *workers(rest), *rest], cwd=ROOT, env=test_env()
            )
        if command == "lint":
            paths = ["src", "tests", "benchmarks", "dev.py"]
            ruff = subprocess.call([str(PYTHON), "-m", "ruff", "check", *paths], cwd=ROOT)
            layout = subprocess.call(
                [str(PYTHON), "-m", "ruff", "format", "--check", *paths], cwd=ROOT
            )
            mypy = subprocess.call([str(PYTHON), "-m", "mypy"], cwd=ROOT)
            return ruff or layout or mypy
        if command == "docs":  # the command reference, written by cog from each command's --help
            return subprocess.call([str(PYTHON), "-m", "cogapp", "-r", *COGGED], cwd=ROOT)
        script = {"bench-load": "load.py", "cards": "cards.py"}.get(command, "run.py")
        return subprocess.call([str(PYTHON), str(ROOT / "benchmarks" / script), *rest], cwd=ROOT)
    except subprocess.CalledProcessError as exc:
        print(f"set-up failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
