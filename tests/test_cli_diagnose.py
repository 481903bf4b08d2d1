"""`rlmap-bot diagnose` as a user runs it: JSON in, verdict out; the guided flow on a terminal."""

from __future__ import annotations

import json

import pytest

from support.cli import invoke as run_cli
from support.cli import shell


def test_signals_file_json_verdict(env, tmp_path):
    path = tmp_path / "signals.json"
    path.write_text(json.dumps({"proxy_reward_trend": "rising", "heldout_score_trend": "falling"}))
    out = run_cli(["diagnose", "--signals", str(path), "--json"], env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["binding_stage"] == "reward"
    assert 0 < data["confidence"] <= 1
    assert [r["stage"] for r in data["ranking"]][0] == "reward" and len(data["ranking"]) == 5
    assert all({"stage", "score"} <= set(r) for r in data["ranking"])
    assert data["evidence"] and data["next_checks"]
    assert all({"id", "title"} <= set(p) for p in data["papers"])


def test_signals_from_stdin_text_verdict(env):
    out = run_cli(
        ["diagnose", "--signals", "-"],
        env,
        stdin='{"eval_seed_std": 3, "eval_improvement": 1, "eval_num_seeds": 3}',
    )
    assert out.returncode == 0, out.stderr
    assert (
        "Verdict: Evaluation binds" in out.stdout
        and "Evidence:" in out.stdout
        and "Read:" in out.stdout
    )


@pytest.mark.parametrize(
    "payload, message",
    [
        (
            '{"zero_advantage_fractoin": 0.3}',
            "unknown signal 'zero_advantage_fractoin'; did you mean 'zero_advantage_fraction'?",
        ),
        ('{"clip_fraction": 7}', "clip_fraction must be at most 1"),
        ('{"clip_fraction": "high"}', "clip_fraction takes a number"),
        ('{"proxy_reward_trend": "up"}', "proxy_reward_trend takes one of rising, flat, falling"),
        ('{"grad_norm_spikes": "maybe"}', "grad_norm_spikes takes yes/no"),
        ("[1, 2]", "signals must be a JSON object"),
        ("not json at all", "signals file is not valid JSON"),
        ("", "signals file is not valid JSON"),
    ],
)
def test_bad_input_exits_2_with_one_line(env, payload, message):
    out = run_cli(["diagnose", "--signals", "-", "--json"], env, stdin=payload)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert message in lines[0]
    # With --json, what reads standard output is told too, as JSON (issue 38).
    assert json.loads(out.stdout) == {"error": lines[0].removeprefix("error: "), "exit_code": 2}


def test_missing_file_is_a_usage_error(env, tmp_path):
    out = run_cli(["diagnose", "--signals", str(tmp_path / "nope.json")], env)
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_guided_flow_on_the_terminal(env):
    # First question, then: a bad value, don't know, back, a typed value, then stop.
    first = run_cli(["diagnose"], env, stdin="")
    assert "Q1." in first.stdout and "nothing saved" in first.stdout
    assert run_cli(["diagnose", "--list"], env).stdout.strip() == "no open diagnoses", (
        "an unanswered session was kept"
    )
    out = run_cli(["diagnose"], env, stdin="not a value\n?\nback\na\nstop\n")
    assert out.returncode == 0, out.stderr
    assert "Q1." in out.stdout and "Q2." in out.stdout
    assert "Verdict:" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr


def test_guided_flow_reaches_a_verdict_with_typed_answers(env):
    # Pick the first preset of every question until the flow ends.
    out = run_cli(["diagnose"], env, stdin="a\n" * 30)
    assert out.returncode == 0, out.stderr
    assert "Verdict:" in out.stdout and "Stages by score:" in out.stdout


def test_paused_diagnosis_can_be_listed_and_resumed(env):
    paused = run_cli(["diagnose"], env, stdin="a\n")
    assert "paused" in paused.stdout
    listed = run_cli(["diagnose", "--list"], env)
    short = listed.stdout.split()[0]
    assert len(short) == 8 and "1 answer " in listed.stdout
    resumed = run_cli(["diagnose", "--resume", short], env, stdin="stop\n")
    assert resumed.returncode == 0 and "Q2." in resumed.stdout and "Verdict:" in resumed.stdout
    gone = run_cli(["diagnose", "--resume", short], env, stdin="")
    assert gone.returncode == 2 and "no single open diagnosis" in gone.stderr


def test_shell_diagnose_command(core):
    text = shell(core, "diagnose", "?", "?", "stop", "stages", "quit")
    assert "Q1." in text and "Verdict:" in text and "1. Environments" in text


def test_json_is_refused_for_the_interactive_flow_and_leaves_no_session(env):
    out = run_cli(["diagnose", "--json"], env, stdin="")
    assert out.returncode == 2 and "--json needs --signals, --simulate or --run" in out.stderr
    listed = run_cli(["diagnose", "--list", "--json"], env)
    assert listed.returncode == 0 and json.loads(listed.stdout) == {"sessions": []}


@pytest.mark.parametrize("dont_know", ["?", "don't know", "no idea"])
def test_a_person_who_knows_nothing_is_asked_four_questions_then_shown_what_to_measure(
    env, dont_know
):
    out = run_cli(["diagnose"], env, stdin=f"{dont_know}\n" * 30)
    assert out.returncode == 0, out.stderr
    said = " ".join(out.stdout.split())
    assert "Q4." in out.stdout and "Q5." not in out.stdout, out.stdout
    assert "These would tell most" in said and "\n1. " in out.stdout and "\n3. " in out.stdout
    assert "resume with `rlmap-bot diagnose --resume" in out.stdout
    assert "Verdict:" not in out.stdout
    listed = run_cli(["diagnose", "--list"], env)
    short = listed.stdout.split()[0]
    resumed = run_cli(["diagnose", "--resume", short], env, stdin="stop\n")
    assert resumed.returncode == 0 and "Q5." in resumed.stdout and "Verdict:" in resumed.stdout


def test_a_paused_diagnosis_resumes_with_the_readings_list_and_asks_the_one_picked(env):
    paused = run_cli(["diagnose"], env, stdin="?\n" * 4)
    assert "These would tell most" in " ".join(paused.stdout.split())
    short = run_cli(["diagnose", "--list"], env).stdout.split()[0]
    resumed = run_cli(["diagnose", "--resume", short], env, stdin="b\nstop\n")
    assert resumed.returncode == 0, resumed.stderr
    out = resumed.stdout
    assert "Q5. Which of these can you read?" in out and "Pick letters" in out
    listed = out.split("Q5.", 1)[1].split("\n")
    second = next(line for line in listed if line.strip().startswith("b) "))
    assert f"Q6. {second.strip()[3:]}" in out and "Verdict:" in out


def test_a_simulated_team_that_knows_nothing_is_put_four_questions_in_all(env):
    out = run_cli(["diagnose", "--simulate", "-"], env, stdin="{}")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Asked 3 signal questions (4 in all, the opening one included)")
