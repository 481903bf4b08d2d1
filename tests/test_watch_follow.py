"""``rlmap-bot watch SOURCE`` in a terminal follows the run until Ctrl-C.

A real ``rlmap-bot`` process follows a verl console log that this test appends to, as a trainer
would; the alert for what the appended steps hold is printed once, and a SIGINT ends the process
cleanly (exit 0 or 130, no traceback).  The same for a W&B-style run folder is left to the source
readers' own tests; here what is held is the terminal's loop.
"""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

from support import runlogs as rl

#: How long to wait for a line the follower must print.  Not a speed assertion: generous, so a
#: loaded machine only makes the test slower; a follower that never prints fails it.
WAIT = 120


def _start(env: dict[str, str], log: Path, root: Path) -> tuple[subprocess.Popen, queue.Queue]:
    exe = Path(sys.executable).with_name("rlmap-bot")
    env = {**env, "RLMAP_RUN_ROOTS": str(root), "RLMAP_WATCH_FOLLOW_SECONDS": "0.5"}
    proc = subprocess.Popen(
        [str(exe), "watch", str(log), "--follow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return proc, lines


def _until(lines: queue.Queue, text: str) -> list[str]:
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(
                f"no line with {text!r} after {WAIT} s; printed: {''.join(seen)[-2000:]}"
            ) from None
        if line is None:
            raise AssertionError(
                f"the follower ended before {text!r}; printed: {''.join(seen)[-2000:]}"
            )
        seen.append(line)
        if text in line:
            return seen


def test_watch_follows_a_growing_log_prints_its_alert_once_and_stops_on_sigint(env, tmp_path):
    records = rl.named(rl.phased([("healthy", 300), ("nan", 60)]), "verl")
    log = tmp_path / "runs" / "train.log"
    rl.write_verl_console(log, [r for r in records if r[0] <= 300])
    proc, lines = _start(env, log, tmp_path / "runs")
    try:
        _until(lines, "Following")
        _until(lines, "Checked")  # the first check says where the run stands
        with open(log, "a", encoding="utf-8") as f:  # the trainer logs on: NaN from here
            f.writelines(rl.verl_console_lines([r for r in records if r[0] > 300]))
        seen = _until(lines, "Fault: NaN/inf in actor/")
        # Two more checks read nothing new; the fault is not said again.
        with open(log, "a", encoding="utf-8"):
            pass
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
    rest = []
    while not lines.empty():
        item = lines.get()
        if item is not None:
            rest.append(item)
    printed = "".join(seen + rest) + (out or "")
    assert proc.returncode in (0, 130), (proc.returncode, err)
    assert "Traceback" not in err, err
    assert printed.count("Fault: NaN/inf in actor/") == 1, printed[-3000:]


def test_watch_of_a_source_it_cannot_read_says_so_in_one_line(env, tmp_path):
    exe = Path(sys.executable).with_name("rlmap-bot")
    run = subprocess.run(
        [str(exe), "watch", "mlflow:no-such-run", "--follow"],
        capture_output=True,
        text=True,
        env={**env, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'none.db'}"},
        timeout=WAIT,
    )
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and run.stderr.startswith("error: "), (
        run.stderr
    )


def test_sigterm_stops_following_between_checks_as_ctrl_c_does(env, tmp_path):
    """The stop is marked by the signal and taken at the next sleep: the check under way ends,
    the process says so and exits cleanly (before, SIGTERM killed it mid-check without a word)."""
    records = rl.named(rl.phased([("healthy", 200)]), "verl")
    log = tmp_path / "runs" / "train.log"
    rl.write_verl_console(log, records)
    proc, lines = _start(env, log, tmp_path / "runs")
    try:
        _until(lines, "Checked")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
    rest = []  # what the follower printed last, up to the end of its output (the pump's None)
    while (item := lines.get(timeout=WAIT)) is not None:
        rest.append(item)
    assert proc.returncode in (0, 130), (proc.returncode, err)
    assert "Traceback" not in err, err
    printed = "".join(rest) + (out or "")  # communicate reads what the pump had not yet
    assert "Stopped following." in printed, printed[-1000:]
