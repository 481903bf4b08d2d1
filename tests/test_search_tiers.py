"""Ask's three answers: confident, a guess, or nothing.

A confident answer is as strict as the gate (an off-topic question that borrows a word of the map
does not get one). When the gate refuses yet some word of the question speaks for the map
(params.guess_word_evidence, or a title or alias found whole), the nearest entries are shown as a
guess: `ask --json` says `"tier": "guess"` and keeps
them in `guesses`, the terminal says so in three
lines, Slack in one compact card with "Diagnose a run". "Nothing in the map" is left for a question
none of whose words speaks for the map. Every question below was written for this file.
"""

from __future__ import annotations

import json

import pytest

from support.cli import invoke
from support.slackio import blocks_of, text_of

# A problem with a run told in everyday words: the gate cannot vouch for any entry, a guess finds
# it.
PLAIN = [
    (
        "the judge model says most replies are fine but when I check them myself many are junk",
        {"reward_audit_error_rate"},
    ),
    ("the checker approves answers that a person can see are wrong", {"reward_audit_error_rate"}),
    (
        "half the prompts in our set are too easy and the other half impossible",
        {"train_solve_rate", "zero_advantage_fraction"},
    ),
    (
        "two runs with different random seeds end up miles apart",
        {"eval_seed_std", "deep-rl-that-matters"},
    ),
    ("the loss suddenly blew up to infinity halfway through", {"loss_divergence"}),
]
# Off-topic, each with a word the map uses in another sense.
BORROWS = [
    "the reward for finishing my marathon was a medal",
    "our sales policy gives a bonus to the agent who closes most deals",
    "my kid's sticker reward chart stopped working",
    "scaling a cake recipe for a wedding",
    "tokens for the arcade machines at the fair",
]
# Off-topic, no word of the map.
NO_MAP_WORD = [
    "what temperature should I roast a chicken at",
    "how do I fix a squeaky door hinge",
    "good names for a golden retriever puppy",
    "which sunscreen is best for kids",
    "how long to boil an egg",
]
GUESS = PLAIN[0][0]


@pytest.mark.parametrize("question, nearest", PLAIN)
def test_a_plainly_worded_question_about_the_map_gets_a_guess_with_the_entry(
    core, question, nearest
):
    answer = core.ask(question)
    assert answer.tier == "guess" and answer.results == [], answer.tier
    assert nearest & {h.id for h in answer.guesses}, [h.id for h in answer.guesses]
    assert answer.map_words, "a guess says which words speak for the map"
    assert all(
        0 < h.score <= core.searcher.floor + 1e-9 for h in answer.guesses
    )  # never as sure as an answer


@pytest.mark.parametrize("question", BORROWS)
def test_an_off_topic_question_with_a_map_word_never_gets_a_confident_answer(core, question):
    answer = core.ask(question)
    assert answer.tier != "confident" and answer.results == [], [h.id for h in answer.results]


@pytest.mark.parametrize("question", NO_MAP_WORD + ["best pizza dough hydration"])
def test_a_question_with_no_map_word_gets_nothing(core, question):
    answer = core.ask(question)
    assert (
        answer.tier == "nothing"
        and not answer.results
        and not answer.guesses
        and not answer.map_words
    )
    assert answer.known_topics  # what the bot knows about, instead


@pytest.mark.parametrize(
    "question",
    [
        # Issue 38: each opened the guess tier on one everyday word of the catalog ("zurich",
        # "reset", "recipe", "learn", "validating"), read beside words the map never uses.
        "weather in zurich next week",
        "how do i reset my vpn password",
        "good sourdough starter recipe?",
        "I want to learn guitar",
        "validating my parking ticket",
    ],
)
def test_one_everyday_word_alone_ties_nothing_to_the_map(core, question):
    answer = core.ask(question)
    assert answer.tier == "nothing" and not answer.guesses, [h.id for h in answer.guesses]


def test_two_everyday_words_or_one_the_map_owns_still_make_a_guess(core):
    # "batch" and "size" together are the map's batch size in another kitchen: shown as a guess; one
    # word only the map uses ("GRPO") is not an everyday word at all.
    assert core.ask("the optimal batch size for cookies").tier == "guess"
    assert core.ask("is GRPO still worth using these days").tier == "guess"
    # An everyday word with no word the map never uses beside it keeps its weight.
    assert core.ask("what's the recipe").tier != "nothing"


def test_one_borrowed_map_word_is_a_guess_not_vouched_for(core):
    # Enough evidence for the floor, all of it from one word: the rest of the question may be about
    # a game ("dota") or be chat around a lookup ("GRPO"); the map cannot tell, so neither is
    # confident.
    for question, nearest in [
        ("which dota 2 items are best for a support player", "openai-five"),
        ("is GRPO still worth using these days", "deepseekmath-grpo"),
        ("what does PPO stand for and who came up with it", "ppo"),
    ]:
        answer = core.ask(question)
        assert answer.tier == "guess" and answer.results == [], question
        assert nearest in [h.id for h in answer.guesses], question
    # A short lookup, two map words meeting in one entry, or a comparison stay confident answers.
    for question, first in [
        ("the PPO paper", "ppo"),
        ("entropy collapse in GRPO training", None),
        ("Ape-X and IMPALA, how are they different", None),
    ]:
        answer = core.ask(question)
        assert answer.tier == "confident" and answer.results and answer.guesses == [], question
        assert first is None or answer.results[0].id == first


def test_a_byline_name_alone_in_another_setting_is_a_guess_not_vouched_for(core):
    # The two words of one cited name are one borrowed word: a question about the person's
    # errands rests on the name alone, so its nearest entries are a guess at most.
    for question, nearest in [
        ("Jimmy Ba office hours", "dreamerv3"),
        ("Google Brain gym membership", "seed-rl"),
    ]:
        answer = core.ask(question)
        assert answer.tier == "guess" and answer.results == [], question
        assert nearest in [h.id for h in answer.guesses], question
    # Asking who wrote something with that name, or the name with the map's own words, stays a
    # confident answer.
    for question, first in [
        ("who wrote the world model paper with Jimmy Ba", "dreamerv3"),
        ("Andy Jones scaling laws for board games", "board-game-scaling"),
    ]:
        answer = core.ask(question)
        assert answer.tier == "confident" and answer.results, question
        assert first in [h.id for h in answer.results[:3]], question


def test_cli_json_says_the_tier(env):
    data = json.loads(invoke(["ask", "--json", GUESS], env).stdout)
    assert data["tier"] == "guess" and data["results"] == [] and data["guesses"][0]["id"]
    assert data["map_words"]
    data = json.loads(invoke(["ask", "--json", "the PPO paper"], env).stdout)
    assert data["tier"] == "confident" and data["results"] and data["guesses"] == []
    data = json.loads(invoke(["ask", "--json", NO_MAP_WORD[0]], env).stdout)
    assert data["tier"] == "nothing" and data["results"] == [] and data["guesses"] == []


def test_the_terminal_shows_a_guess_in_three_lines(env):
    out = invoke(["ask", GUESS], env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 3, out.stdout
    assert lines[0] == "Not sure this is what you mean; the closest in the map:"
    assert "Reward audit error rate (reward_audit_error_rate)" in lines[1]
    assert lines[2].startswith("About a run of yours? `diagnose`")
    assert "Nothing in the map is relevant" not in out.stdout


def test_the_shell_shows_a_guess_as_a_guess(env):
    shell = invoke(["shell"], env, stdin=GUESS + "\nquit\n")
    assert "Not sure this is what you mean; the closest in the map:" in shell.stdout
    assert "Reward audit error rate" in shell.stdout


def test_the_terminal_says_nothing_only_when_no_word_speaks_for_the_map(env):
    out = invoke(["ask", NO_MAP_WORD[1]], env)
    assert (
        "Nothing in the map is relevant" in out.stdout
        and "Not sure this is what you mean" not in out.stdout
    )


def test_slack_shows_a_guess_in_one_compact_card_with_the_diagnose_button(bot, standin):
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U1",
            "channel": "D1",
            "ts": "300.1",
            "text": GUESS,
        }
    )
    call = standin.wait_for("chat.postMessage")[0]
    blocks = blocks_of(call)
    text = text_of(blocks)
    assert (
        "Not sure this is what you mean; the closest in the map:" in text
        and "Reward audit error rate" in text
    )
    assert "About a run of yours? `/rlmap diagnose`" in text
    assert [b["type"] for b in blocks] == [
        "section",
        "context",
        "actions",
    ]  # one card: entries, pointer, buttons
    buttons = blocks[-1]["elements"]
    assert buttons[-1]["text"]["text"] == "Diagnose a run"
    assert "reward_audit_error_rate" in [b["value"] for b in buttons[:-1]]
    assert call.args["text"].startswith("Not sure this is what you mean")


def test_slack_says_nothing_with_no_guess_when_no_word_speaks_for_the_map(bot, standin):
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U1",
            "channel": "D1",
            "ts": "300.2",
            "text": NO_MAP_WORD[2],
        }
    )
    text = text_of(blocks_of(standin.wait_for("chat.postMessage")[0]))
    assert "Nothing in the map is relevant" in text and "Not sure this is what you mean" not in text
