"""`rlmap-bot serve --http` as a real process:
settings checks, health, answers, kill and restart.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.request

from support.serve import EXE, start
from support.slackio import Card
from support.standin import BOT_TOKEN, SIGNING_SECRET, Slack, mention


def test_missing_settings_say_what_to_set(env):
    env.pop("SLACK_BOT_TOKEN", None)
    out = subprocess.run(
        [EXE, "serve", "--http"], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2
    assert "SLACK_BOT_TOKEN" in out.stderr and "SLACK_SIGNING_SECRET" in out.stderr
    assert "Traceback" not in out.stderr
    env["SLACK_BOT_TOKEN"] = BOT_TOKEN
    out = subprocess.run([EXE, "serve"], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "SLACK_APP_TOKEN" in out.stderr and "--http" in out.stderr
    assert BOT_TOKEN not in out.stderr + out.stdout


def test_serve_http_answers_and_survives_kill_mid_diagnosis(serve_env, standin, tmp_path):
    log = tmp_path / "serve.log"
    proc, url = start(serve_env, log)
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=5) as response:
            assert json.loads(response.read())["ok"] is True
        slack = Slack(url, standin)
        slack.event(mention("1.1", "the PPO paper"))
        assert "Proximal Policy Optimization" in json.dumps(
            standin.wait_for("chat.postMessage")[0].args["blocks"]
        )
        slack.command("diagnose", channel="C2")
        standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "C2", count=2)
        thread = standin.messages["C2"][0]["ts"]
        ts = standin.messages["C2"][1]["ts"]
        card = Card(type("B", (), {"slack": slack, "front": None})(), standin, "C2", ts, thread)
        card.click("diag_skip")
        asked = card.signal
        proc.send_signal(signal.SIGKILL)  # no clean shutdown: the state must already be on disk
        proc.wait(timeout=10)
        proc, url = start(serve_env, log)
        card.bot.slack = Slack(url, standin)
        assert card.signal == asked
        card.click("diag_stop")
        assert "Verdict" in json.dumps(card.blocks)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    text = log.read_text()
    assert BOT_TOKEN not in text and SIGNING_SECRET not in text, "a secret reached the logs"
    assert "Traceback" not in text


def test_sighup_reloads_the_catalog(serve_env, standin, knowledge_copy, tmp_path):
    serve_env["RLMAP_KNOWLEDGE"] = str(knowledge_copy)
    log = tmp_path / "serve.log"
    proc, url = start(serve_env, log)
    assert "building the knowledge store" in log.read_text(), (
        "a start that builds says so (it takes seconds)"
    )
    try:
        (knowledge_copy / "papers" / "zz-quokka.yaml").write_text(
            "id: zz-quokka\nkind: paper\ntitle: Quokka Policy Gradients\nsummary: Quokkas learn "
            "fast.\nverification: verified\nstages: [optimization]\nadded: 2026-12-02\n"
        )
        proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 20
        while "reloaded the catalog" not in log.read_text() and time.time() < deadline:
            time.sleep(0.1)
        assert "reloaded the catalog" in log.read_text()
        Slack(url, standin).command("ask quokka policy gradients")
        assert "Quokka Policy Gradients" in json.dumps(
            standin.wait_for("response_url")[0].args["blocks"]
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_an_unreachable_state_store_is_a_plain_error_without_the_password(serve_env):
    serve_env["RLMAP_STATE_URL"] = "postgresql+psycopg://rlmap:hunter2@127.0.0.1:1/nope"
    out = subprocess.run(
        [EXE, "serve", "--http"], env=serve_env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2
    assert (
        "cannot open the state store postgresql+psycopg://rlmap:***@127.0.0.1:1/nope" in out.stderr
    )
    assert "hunter2" not in out.stderr and "Traceback" not in out.stderr
    diag = subprocess.run(
        [EXE, "diagnose", "--list"], env=serve_env, capture_output=True, text=True, timeout=60
    )
    assert diag.returncode == 2 and "hunter2" not in diag.stderr and "Traceback" not in diag.stderr


def test_an_oauth_only_environment_serves_slack_not_the_shell(env):
    # SLACK_CLIENT_ID alone means "many workspaces": the
    # bare command tries to serve and says what is missing.
    env["SLACK_CLIENT_ID"] = "client-id"
    out = subprocess.run(
        [EXE], env=env, input="stages\nquit\n", capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2 and "rlmap-bot shell" not in out.stdout
    assert "SLACK_CLIENT_SECRET" in out.stderr and "SLACK_SIGNING_SECRET" in out.stderr
    assert out.stderr.count("error:") == 1 and "Traceback" not in out.stderr
