"""A Slack watch of a run where the team tracks it: `/rlmap watch trackio:PROJECT/RUN every 5m`
over the real Bolt app and real signed HTTP, on a run the real trackio SDK is still writing, with
TRACKIO_DIR and RLMAP_RUN_ROOTS set as a user would.  The scheduled checks say nothing while the
run is healthy and post exactly one alert when its loss turns NaN.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.sources import open_source, parse_source
from rlmap_bot.runs.sources.access import Access
from support.slackio import blocks_of, slash, text_of
from support.watching import Clock, launch, tick, watch_posts

#: A TRL-style run (its Trackio callback's ``train/`` names): healthy for 200 steps; on a line
#: from the test, 20 steps of NaN loss and infinite gradient norm.
WRITER = """
    import math, sys, trackio
    trackio.init(project="grpo-demo", name="run-a")
    for s in range(200):
        wiggle = 0.01 * math.sin(s / 3)
        trackio.log({"train/reward": 0.55 + 0.0005 * s + wiggle, "train/loss": 0.40 - 0.0005 * s,
                     "train/grad_norm": 1.0 + wiggle}, step=s)
    print("ready", flush=True)
    sys.stdin.readline()
    for s in range(200, 220):
        trackio.log({"train/reward": 0.65, "train/loss": float("nan"),
                     "train/grad_norm": float("inf")}, step=s)
    trackio.finish()
    print("done", flush=True)
"""


def _rows_written(folder, steps: int) -> None:
    """trackio.log hands rows to a background thread that writes them a moment later."""
    source = open_source(
        parse_source("trackio:grpo-demo/run-a"), Access(environ={"TRACKIO_DIR": str(folder)})
    )
    deadline = time.monotonic() + 60  # judgement: far past trackio's flush on a loaded machine
    while True:
        try:
            run, _ = source.read_new(None, lambda name: name == "train/loss")
            if "train/loss" in run.series and len(run.series["train/loss"]) >= steps:
                return
        except RunReadError:
            pass  # the project's database is not created yet
        assert time.monotonic() < deadline, f"trackio wrote fewer than {steps} steps in 60 s"
        time.sleep(0.2)


def test_a_trackio_run_watched_from_slack_alerts_once_when_its_loss_turns_nan(
    standin, built_db, tmp_path, monkeypatch
):
    pytest.importorskip("trackio", reason="the trackio test extra is not installed")
    roots = tmp_path / "runs"
    folder = roots / "trackio"
    folder.mkdir(parents=True)
    monkeypatch.setenv("TRACKIO_DIR", str(folder))
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER)],
        env={**os.environ, "TRACKIO_DIR": str(folder), "HF_HUB_OFFLINE": "1"},
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    clock = Clock()
    bot = launch(standin, built_db, tmp_path / "state.db", roots, clock, http=True)
    try:
        assert writer.stdout is not None and writer.stdin is not None
        while (line := writer.stdout.readline()) and line.strip() != "ready":
            pass
        _rows_written(folder, 200)
        reply = slash(bot, standin, "watch trackio:grpo-demo/run-a every 5m")
        assert "Watching `trackio:grpo-demo/run-a`" in reply["text"], reply["text"]
        assert "every 5 minutes" in reply["text"]
        [watch] = bot.front.core.state.watches.list()
        assert watch.path == "trackio:grpo-demo/run-a" and watch.interval_minutes == 5

        # Healthy, still logging: the scheduled checks post nothing.
        assert tick(bot, clock, 5).status == "unchanged"
        assert watch_posts(standin) == []

        writer.stdin.write("go\n")
        writer.stdin.flush()
        while (line := writer.stdout.readline()) and line.strip() != "done":
            pass
        _rows_written(folder, 220)
        result = tick(bot, clock, 5)
        assert result.status == "checked" and result.new_steps == 20, result
        [(alert, meta)] = watch_posts(standin)
        assert meta["watch_id"] == watch.id and "fault:nan" in meta["conditions"], meta
        text = text_of(blocks_of(alert))
        assert "NaN/inf" in text and "train/loss" in text, text

        # The same run, checked again: nothing more.
        assert tick(bot, clock, 5).alerts == []
        assert len(watch_posts(standin)) == 1
    finally:
        bot.stop()
        writer.kill()
        writer.wait()
