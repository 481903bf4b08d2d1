"""A signal found by ask says what the map reads into
it: the stage its diagnosis rules name, and why.

A newcomer asked "my reward keeps going up but eval accuracy is dropping, what's going on?" and got
the held-out trend's definition first, with nothing that said "this looks like overoptimization"
(2026-12-03). The rule that reads the symptom is the answer; the one shown is the one the question's
words meet, in the signal's own file first.
"""

from __future__ import annotations

import json

import pytest

from rlmap_bot.search.readings import first_clause
from support.cli import invoke
from support.slackio import blocks_of, text_of


@pytest.mark.parametrize(
    "question, signal, stage",
    [
        (
            "my reward keeps going up but eval accuracy is dropping, what's going on?",
            "heldout_score_trend",
            "Reward quality",
        ),
        (
            "the trainer waits for rollouts most of every step",
            "rollout_wait_fraction",
            "Rollout generation",
        ),
        ("the grader accepts lots of wrong answers", "reward_audit_error_rate", "Reward quality"),
        (
            "half of my GRPO groups have the same reward for every sample",
            "zero_advantage_fraction",
            "Optimization",
        ),
    ],
)
def test_a_signal_hit_says_where_it_points(core, question, signal, stage):
    hit = next(h for h in core.ask(question).results if h.id == signal)
    assert hit.points_to and hit.points_to.startswith(stage + ": "), hit.points_to


def test_only_signals_point_anywhere(core):
    hits = core.ask("the PPO paper").results + core.ask("reward hacking").results
    assert any(h.kind != "signal" for h in hits)
    assert all(h.points_to is None for h in hits if h.kind != "signal")


def test_a_reason_is_cut_at_its_first_clause_not_at_an_abbreviation():
    assert (
        first_clause("Wrong answers are the length bias Dr. GRPO attributes to it. More.")
        == "Wrong answers are the length bias Dr. GRPO attributes to it."
    )
    assert (
        first_clause("The signature Gao et al. measured: the proxy rises.")
        == "The signature Gao et al. measured."
    )
    assert first_clause("No stop at all") == "No stop at all."


def test_the_terminal_json_and_slack_show_it(env, bot, standin):
    question = "my reward keeps going up but eval accuracy is dropping"
    out = invoke(["ask", question], env)
    assert (
        "points to Reward quality: Training reward up while the held-out score goes down"
        in " ".join(out.stdout.split())
    )
    data = json.loads(invoke(["ask", "--json", question], env).stdout)
    assert data["results"][0]["points_to"].startswith("Reward quality: ")
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U1",
            "channel": "D1",
            "ts": "500.1",
            "text": question,
        }
    )
    text = text_of(blocks_of(standin.wait_for("chat.postMessage")[0]))
    assert "Points to Reward quality: Training reward up" in text


@pytest.mark.parametrize(
    "question, signal, contradiction",
    [
        # The review of 2026-12-03 found each shown the reading of the opposite value.
        ("the reward curve keeps going up", "proxy_reward_trend", "going down"),
        ("is rising entropy a good sign?", "entropy_trend", "collaps"),
        ("pass@256 stays above the base model", "passk_vs_base", "fallen below"),
        ("the training reward has been flat for 500 steps", "proxy_reward_trend", "going down"),
    ],
)
def test_a_reading_never_contradicts_the_value_the_question_states(
    core, question, signal, contradiction
):
    hits = core.ask(question).shown
    hit = next((h for h in hits if h.id == signal), None)
    assert hit is not None, [h.id for h in hits]
    assert contradiction not in (hit.points_to or "").lower(), hit.points_to
