"""Every diagnosis from logs says one forecast line: the ceiling with its interval, the share of
it reached and what 1,000 more steps buy; the forecaster's abstention in a few words; nothing
when the logs hold no reward and no held-out score. The same forecast as `forecast SOURCE`, in
the terminal, the JSON and Slack (a log dropped in a diagnosis thread)."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from rlmap_bot.cli.main import cli
from support import KNOWLEDGE, runlogs
from support.scalingcurves import Truth, run, write_log
from support.slackio import blocks_of, start, text_of

LINE = re.compile(
    r"Forecast: ceiling near [\d.]+ \([\d.]+-[\d.]+\); \d+% of it reached; "
    r"(another 1,000 steps buy about [+-][\d.]+|the curve has stopped moving)\."
)


def invoke(args, built_db):
    return CliRunner().invoke(cli, ["--knowledge", str(KNOWLEDGE), "--db", str(built_db), *args])


def test_a_diagnosis_says_the_same_forecast_as_the_forecast_command(built_db, tmp_path):
    x, y = run(Truth(0.75, 1.3, 120), 250, noise=0.015)
    log = write_log(tmp_path / "run.jsonl", x, y)
    said = invoke(["diagnose", "--run", str(log)], built_db)
    assert said.exit_code == 0, said.output
    assert LINE.search(" ".join(said.output.split())), said.output
    data = json.loads(invoke(["diagnose", "--run", str(log), "--json"], built_db).output)
    forecast = json.loads(invoke(["forecast", str(log), "--json"], built_db).output)
    assert data["forecast"]["metric"] == forecast["metric"] == "reward"
    assert data["forecast"]["asymptote"] == forecast["asymptote"]
    assert data["forecast"]["reached"] == forecast["reached"]
    low, high = data["forecast"]["asymptote"]["low"], data["forecast"]["asymptote"]["high"]
    assert low < 0.75 < high + 0.05


def test_a_short_run_says_why_there_is_no_forecast_in_a_few_words(built_db, tmp_path):
    x, y = run(Truth(0.75, 1.3, 120), 12)
    log = write_log(tmp_path / "short.jsonl", x, y)
    said = " ".join(invoke(["diagnose", "--run", str(log)], built_db).output.split())
    assert "Forecast: none yet (only 12 points so far)." in said, said
    data = json.loads(invoke(["diagnose", "--run", str(log), "--json"], built_db).output)
    assert data["forecast"]["abstain"].startswith("only 12 points")
    assert data["forecast"]["asymptote"] is None


def test_a_run_without_a_reward_or_held_out_curve_says_no_forecast(built_db, tmp_path):
    records = [(s, {"actor/entropy": 1.0 - s / 400, "actor/grad_norm": 1.0}) for s in range(1, 201)]
    log = runlogs.write_jsonl(tmp_path / "noreward.jsonl", records)
    said = invoke(["diagnose", "--run", str(log)], built_db)
    assert said.exit_code == 0, said.output
    assert "Forecast" not in said.output
    data = json.loads(invoke(["diagnose", "--run", str(log), "--json"], built_db).output)
    assert data["forecast"] is None


def test_a_held_out_score_logged_densely_is_forecast_before_the_training_reward(built_db, tmp_path):
    x, y = run(Truth(0.75, 1.3, 120), 300, noise=0.01)
    rows = [
        (int(s), {"reward": float(v), "eval_reward": float(v) - 0.2})
        for s, v in zip(x, y, strict=True)
    ]
    log = runlogs.write_jsonl(tmp_path / "both.jsonl", rows)
    data = json.loads(invoke(["diagnose", "--run", str(log), "--json"], built_db).output)
    assert data["forecast"]["quantity"] == "held-out score"
    assert data["forecast"]["metric"] == "eval_reward"


def test_a_log_dropped_in_a_diagnosis_thread_says_the_forecast_line(bot, standin, tmp_path):
    x, y = run(Truth(0.75, 1.3, 120), 250, noise=0.015)
    data = write_log(tmp_path / "run.jsonl", x, y).read_bytes()
    card = start(bot, standin)
    file = standin.share_file("run.jsonl", data, user="U1")
    bot.slack.event(
        {
            "type": "message",
            "subtype": "file_share",
            "channel_type": "channel",
            "channel": card.channel,
            "user": "U1",
            "ts": f"{card.thread}7",
            "thread_ts": card.thread,
            "text": "",
            "files": [file],
        }
    )
    posted = standin.wait_for(
        "chat.postMessage", lambda c: "Forecast" in text_of(blocks_of(c)), timeout=60
    )[0]
    assert LINE.search(" ".join(text_of(blocks_of(posted)).split())), text_of(blocks_of(posted))
