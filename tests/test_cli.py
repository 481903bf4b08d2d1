"""The command line, run as the installed `rlmap-bot` script in a subprocess."""

from __future__ import annotations

import json
import re

import pytest

from support.cli import invoke, run_cli


def test_ask_prints_kind_title_line_and_why(env):
    out = invoke(["ask", "rewrad", "hacking"], env)
    assert out.returncode == 0, out.stderr
    assert "rewrad → reward" in out.stdout
    assert re.search(r"^1\. \[\w+\] \S.*  \(\S+, score \d\.\d\d\)", out.stdout, re.M), out.stdout
    assert "why:" in out.stdout
    assert "Traceback" not in out.stderr


def test_ask_json_shape(env):
    out = invoke(["ask", "--json", "--limit", "3", "the", "PPO", "paper"], env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["query"] == "the PPO paper"
    assert 1 <= len(data["results"]) <= 3
    first = data["results"][0]
    assert (
        first["id"] == "ppo"
        and first["kind"] == "paper"
        and 0 < first["score"] <= 1
        and first["title"]
    )
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)


def test_ask_json_off_topic_is_empty(env):
    out = invoke(["ask", "--json", "where is the coffee machine?"], env)
    data = json.loads(out.stdout)
    assert data["results"] == []
    assert "Reward quality" in data["known_topics"]


def test_ask_batch_from_stdin_one_object_per_line_in_order(env):
    questions = [
        "DreamerV3",
        "where is the coffee machine?",
        "anything from DeepSeek",
        "",
        "2210.10760",
    ]
    out = invoke(["ask", "--json", "-"], env, stdin="\n".join(questions) + "\n")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    # One object per input line, always: a blank line gets
    # an empty answer saying so, so lines stay aligned.
    assert [line["query"] for line in lines] == questions
    assert lines[0]["results"][0]["id"] == "dreamerv3"
    assert lines[1]["results"] == []
    assert {"deepseek-r1", "deepseekmath-grpo"} <= {r["id"] for r in lines[2]["results"]}
    assert lines[3]["results"] == [] and lines[3]["error"] == "empty question"
    assert set(lines[3]) >= set(lines[0]), "an empty line's object has an answer's keys"
    assert lines[4]["results"][0]["id"] == "reward-model-overoptimization"


def test_ask_batch_as_text_answers_each_line_under_its_question(env):
    """Without --json a blank line printed a JSON object among the text answers (newcomer pass)."""
    out = invoke(["ask", "--limit", "1", "-"], env, stdin="DreamerV3\n\nreward hacking\n")
    assert out.returncode == 0, out.stderr
    assert "{" not in out.stdout
    blocks = out.stdout.split("\n> ")
    assert out.stdout.startswith("> DreamerV3\n") and "dreamerv3" in blocks[0]
    assert blocks[1].startswith("(an empty line: no question)")
    assert blocks[2].startswith("reward hacking\n") and "reward-overoptimization" in blocks[2]


def test_show_prints_whole_entry_with_links(env):
    out = invoke(["show", "reward"], env)
    assert out.returncode == 0, out.stderr
    for part in (
        "Reward quality",
        "Signs it is the binding constraint",
        "What to measure",
        "Levers",
        "Linked entries",
        "Scaling Laws for Reward Model Overoptimization",
    ):
        assert part in out.stdout


def test_show_unknown_id_suggests(env):
    out = invoke(["show", "dapoo"], env)
    assert out.returncode == 2
    assert "no entry with id 'dapoo'" in out.stderr and "dapo" in out.stderr
    assert "Traceback" not in out.stderr


def test_kb_build_check_stats_export(env):
    build = invoke(["kb", "build"], env)
    assert build.returncode == 0 and "built" in build.stdout and "papers" in build.stdout
    check = invoke(["kb", "check"], env)
    assert check.returncode == 0 and check.stdout.startswith("ok:")
    stats = invoke(["kb", "stats"], env)
    counts = {
        line.split()[0]: int(line.split()[1])
        for line in stats.stdout.splitlines()
        if line.split()[0] in {"paper", "stage", "topic", "signal", "total"}
    }
    assert (
        counts["stage"] == 5
        and counts["topic"] == 5
        and counts["paper"] >= 48
        and counts["signal"] >= 23
    )
    export = invoke(["kb", "export", "--json"], env)
    entries = json.loads(export.stdout)
    assert len(entries) == counts["total"]
    ppo = next(e for e in entries if e["id"] == "ppo")
    for field in (
        "kind",
        "title",
        "aliases",
        "added",
        "summary",
        "facts",
        "stages",
        "authors",
        "first_seen",
        "source",
    ):
        assert field in ppo


def test_stages_and_papers_lists(env):
    stages = invoke(["stages"], env)
    assert [
        line for line in stages.stdout.splitlines() if line[:2] in {"1.", "2.", "3.", "4.", "5."}
    ][2].startswith("3. Reward quality")
    papers = invoke(["papers"], env)
    assert "Dota 2 with Large Scale Deep Reinforcement Learning" in papers.stdout


def test_usage_errors_are_one_line_not_tracebacks(env):
    for args in (["ask"], ["ask", "--limit", "zero", "x"], ["kb", "export"], ["nonsense"]):
        out = invoke(args, env)
        assert out.returncode == 2, args
        assert "Traceback" not in out.stderr and "Usage" in out.stderr


def test_bare_command_without_tokens_starts_the_shell(env):
    out = run_cli([], env, stdin="what is reward hacking?\nstages\nquit\n")
    assert out.returncode == 0, out.stderr
    assert "rlmap-bot shell" in out.stdout
    assert "score" in out.stdout  # an answer, not just the stage list
    assert "3. Reward quality (reward)" in out.stdout
    assert "bye" in out.stdout


@pytest.mark.parametrize(
    "words, named",
    [
        (["diagnose", "--run"], "--run needs a value"),
        (["ask", "--limit"], "--limit needs a value"),
        (["papers", "by"], "by needs a value"),
    ],
)
def test_an_option_missing_its_value_gets_the_usage_line_and_a_help_pointer(words, named, env):
    """click's parser raised these without a context:
    one bare 'Error:' line, naming '--by' for 'by'.
    """
    out = invoke(words, env)
    assert out.returncode == 2 and out.stdout == ""
    assert f" {words[0]} [OPTIONS]" in out.stderr and f" {words[0]} --help' for help" in out.stderr
    assert f"Error: {named}" in out.stderr and "Traceback" not in out.stderr


def test_a_flag_given_a_value_is_told_it_takes_none(env):
    out = invoke(["stages", "--json=yes"], env)
    assert out.returncode == 2 and "Error: Option '--json' does not take a value." in out.stderr
    assert " stages --help' for help" in out.stderr


def test_help_is_a_command_here_too(env):
    # The README's "`help` lists them all" after `python3 dev.py run show reward`: a newcomer typed
    # `dev.py run help` and was told there is no such command (2026-12-03).
    out = invoke(["help"], env)
    assert out.returncode == 0, out.stderr
    for command in ("ask", "show", "diagnose", "papers", "kb build"):
        assert f"rlmap-bot {command}" in out.stdout
    one = invoke(["help", "diagnose"], env)
    assert (
        one.returncode == 0
        and "--run SOURCE" in one.stdout
        and "rlmap-bot diagnose --run" in one.stdout
    )
    missing = invoke(["help", "nosuch"], env)
    assert missing.returncode == 2 and "`rlmap-bot help` lists them" in missing.stderr
