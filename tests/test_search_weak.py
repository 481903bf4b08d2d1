"""Weak matches: a problem told in everyday words gets its nearest entries, marked weak, never nothing.

Below the evidence floor, a question whose map words meet in one nearest entry (params.weak_words)
gets those entries in `weak`, not `results`: `ask --json` keeps `results` for confident answers, and
the terminal, the shell and Slack say it is a weak match. A question that merely shares a word gets
neither.
"""

from __future__ import annotations

import json

from support.cli import invoke
from support.slackio import blocks_of, text_of

# Thin evidence: everyday words ("rewrite", "green") around a few the map uses. The earlier example ("the agent
# discovered it could edit the tests so the checks pass without solving anything") is a confident answer
# since the swe-bench paper gave the catalog "tests", "pass" and "solving": reward_audit_error_rate first.
WEAK = "the model learned to rewrite the unit tests so that every check comes back green"
SHARES_A_WORD = "is a PPO health plan worth it"


def test_thin_evidence_gives_weak_matches_not_results(core):
    answer = core.ask(WEAK)
    assert answer.results == []
    assert "reward_audit_error_rate" in [h.id for h in answer.weak]
    assert all(0 < h.score < core.searcher.floor + 1e-9 for h in answer.weak)  # never as sure as an answer


def test_a_question_that_shares_a_word_gets_neither(core):
    answer = core.ask(SHARES_A_WORD)
    assert answer.results == [] and answer.weak == []


def test_one_borrowed_map_word_is_shown_weak_not_vouched_for(core):
    # Enough evidence for the floor, all of it from one word: the rest of the question may be about a
    # game ("dota") or be chat around a lookup ("GRPO"); the map cannot tell, so neither is confident.
    for question, nearest in [("which dota 2 items are best for a support player", "openai-five"),
                              ("is GRPO still worth using these days", "deepseekmath-grpo"),
                              ("what does PPO stand for and who came up with it", "ppo")]:
        answer = core.ask(question)
        assert answer.results == [], question
        assert nearest in [h.id for h in answer.weak], question
    # A short lookup, two map words meeting in one entry, or a comparison stay confident answers.
    for question, first in [("the PPO paper", "ppo"), ("entropy collapse in GRPO training", None),
                            ("Ape-X and IMPALA, how are they different", None)]:
        answer = core.ask(question)
        assert answer.results and answer.weak == [], question
        assert first is None or answer.results[0].id == first


def test_cli_json_keeps_weak_matches_in_their_own_field(env):
    data = json.loads(invoke(["ask", "--json", WEAK], env).stdout)
    assert data["results"] == [] and data["weak"] and data["weak"][0]["id"]
    data = json.loads(invoke(["ask", "--json", "the PPO paper"], env).stdout)
    assert data["results"] and data["weak"] == []


def test_cli_and_shell_say_it_is_a_weak_match(env):
    out = invoke(["ask", WEAK], env)
    assert out.returncode == 0, out.stderr
    assert "weak match" in out.stdout and "Reward audit error rate" in out.stdout
    assert "Nothing in the map is relevant" not in out.stdout
    assert "About a run of yours? `diagnose`" in out.stdout  # a symptom told loosely: a diagnosis may say more
    shell = invoke(["shell"], env, stdin=WEAK + "\nquit\n")
    assert "weak match" in shell.stdout and "Reward audit error rate" in shell.stdout


def test_slack_says_it_is_a_weak_match(bot, standin):
    bot.slack.event({"type": "message", "channel_type": "im", "user": "U1", "channel": "D1", "ts": "300.1",
                     "text": WEAK})
    call = standin.wait_for("chat.postMessage")[0]
    text = text_of(blocks_of(call))
    assert "weak match" in text and "Reward audit error rate" in text
    assert "About a run of yours? `/rlmap diagnose`" in text
    assert "weak match" in call.args["text"]
