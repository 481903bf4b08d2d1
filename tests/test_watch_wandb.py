"""A watch of a W&B run folder that a live process is still writing, read from a cursor.

The run is written by the real wandb SDK in offline mode, in its own process, as a training
script would; the watch goes through the real service and state store.  The first check reads
what is logged so far; after the process logs more, the next check reads only the new steps (the
cursor kept with the watch), and a check with nothing new reads nothing.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

from rlmap_bot.runs.sources.access import local_access
from rlmap_bot.watch.model import Watch
from support import skip_unless_installed, wandb_offline_env
from support.poster import Recorder
from support.watching import Clock, watch_service

skip_unless_installed("wandb", "the test extra installs wandb; it writes the run this test watches")

WRITER = r"""
import sys, wandb
run = wandb.init(project="rl", id="live1")
def log(a, b):
    for i in range(a, b):
        run.log({"critic/score/mean": 0.4 + 0.3 * i / 400,
                 "response_length/mean": 300.0 + (i % 5),
                 "actor/grad_norm": 0.3 + 0.01 * (i % 3),
                 "actor/entropy": 0.5 - 0.0002 * i}, step=i)
log(0, 300)
print("logged", flush=True)
log(300, int(sys.stdin.readline()))
print("logged", flush=True)
sys.stdin.readline()
run.finish()
"""
#: How long to wait for the SDK's writer to put logged steps on disk.  Not a speed assertion:
#: generous, so a loaded machine only makes the test slower.
WAIT_S = 60
T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


def _check(service, watch_id: str, poster: Recorder, slot: str):
    service.clock.now += dt.timedelta(minutes=15)
    return service.run(watch_id, slot, poster)


def test_a_watch_of_a_live_wandb_run_reads_only_the_new_steps(core, tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER],
        env=wandb_offline_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "logged"
        service = watch_service(core, tmp_path, Clock(T0))
        folder = str(service.resolve(str(tmp_path / "wandb"), local_access()))
        watch = service.repo.save(
            Watch(team="T", channel="C", path=folder, created_at=T0, updated_at=T0)
        )
        poster = Recorder()
        # The SDK writes the log in 32 KB blocks: a live run's
        # last steps reach the disk with the next block.
        first = _check(service, watch.id, poster, "at:0")
        assert (
            first.status == "checked" and first.mode == "source" and first.format == "wandb-run"
        ), first
        seen = first.last_step
        assert seen is not None and 0 < seen <= 299 and first.steps == seen + 1
        tracking, _, _ = service.repo.load_state(watch.id)
        assert tracking.cursor is not None and tracking.cursor["data"]["run_id"] == "live1"
        proc.stdin.write("400\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "logged"
        proc.stdin.write("\n")  # the run finishes: everything logged is on disk
        proc.stdin.flush()
        assert proc.wait(timeout=WAIT_S) == 0
        second = _check(service, watch.id, poster, "at:1")
        assert second.status == "checked" and second.last_step == 399 and second.steps == 400, (
            second
        )
        assert second.new_steps == 399 - seen
        log = next((tmp_path / "wandb").glob("*-live1/run-live1.wandb"))
        assert 0 < second.bytes_read < log.stat().st_size, "only what was appended is read"
        idle = _check(service, watch.id, poster, "at:2")
        assert idle.status == "unchanged" and idle.bytes_read == 0
    finally:
        if proc.poll() is None:
            proc.kill()
