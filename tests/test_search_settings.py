"""A question asking for a setting's value the catalog does not hold is a guess, not an answer.

Issue 38, item 6: "what learning rate for RLHF on a 7B model?" shares only the field's generic
words with any entry, yet every word of it is the map's, so the gate vouched for ReMax and
InstructGPT as a close call. The question asks for a value (query.asks_setting: "what", "which",
"how many" ... then a setting of params.SETTINGS) that no entry gives: its nearest entries are
shown as a guess. A question asking what a named entry did, why a setting matters, or for a
setting the catalog does give guidance on stays a confident answer. Every question below was
written for this file.
"""

from __future__ import annotations

import json

import pytest

from rlmap_bot.search.params import SETTINGS
from rlmap_bot.search.query import asks_setting
from rlmap_bot.text import words
from support.cli import invoke

ISSUE = "what learning rate for RLHF on a 7B model?"

# A value the catalog does not hold, with the entries of the map it is near (shown as a guess).
VALUE_ASKED = [
    "what learning rate should I pick for PPO on a 1B model",
    "how many GPUs would I need for RLHF on a 30B model",
    "which tokenizer is best for a math model",
    "what is a good sampling temperature for a 7B chat model",
    "how much GPU memory for a 13B model with GRPO",
    "what KL coefficient should I start with for a 3B model",
]

# The same words, covered: what a named entry did, why a setting matters, or a setting an entry
# is about; each stays confident with a right entry first.
COVERED = [
    ("which learning rate did the Tulu 3 RL stage use", "tulu-3"),
    ("what KL coefficient was used for DeepSeek-R1", "deepseek-r1"),
    ("how much GPU memory does verl's hybrid engine save", "hybridflow-verl"),
    ("why does a higher learning rate make the clip fraction jump", "clip_fraction"),
    ("what batch size do I need for GRPO on a 7B model", "larger-batches-llm-rl"),
]


def test_the_issues_question_is_a_guess_not_a_confident_close_call(env):
    data = json.loads(invoke(["ask", "--json", ISSUE], env).stdout)
    assert data["tier"] == "guess", data["tier"]
    assert data["results"] == [] and not data["close_call"]
    # Not "nothing": the entries it is near are shown, as a guess, with the words that tie it.
    assert {"remax", "instructgpt"} <= {h["id"] for h in data["guesses"]}
    assert "learning" in data["map_words"] or "rlhf" in data["map_words"], data["map_words"]


def test_the_terminal_shows_it_as_a_guess(env):
    out = invoke(["ask", ISSUE], env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Not sure this is what you mean; the closest in the map:")
    assert "Did you mean" not in out.stdout


@pytest.mark.parametrize("question", VALUE_ASKED)
def test_a_value_the_catalog_does_not_hold_is_a_guess(core, question):
    answer = core.ask(question)
    assert answer.tier == "guess" and answer.results == [], [h.id for h in answer.results]
    assert answer.guesses and answer.map_words


@pytest.mark.parametrize("question, first", COVERED)
def test_a_covered_question_with_the_same_words_stays_confident(core, question, first):
    answer = core.ask(question)
    assert answer.tier == "confident", answer.tier
    assert answer.results[0].id == first, [h.id for h in answer.results]


@pytest.mark.parametrize(
    "question, setting",
    [
        ("what's a good KL coefficient", "kl coefficient"),
        ("which tokeniser should I use", "tokenizer"),
        ("which optimiser should I use", ""),  # the optimization stage's alias: not capped
        ("how many A100s to train it", "a100"),
        ("ideal sampling temperature", "temperature"),
        # No asker before the setting, or another word between: another question.
        ("is our learning rate too high", ""),
        ("what happens to the learning rate during warmup", ""),
        ("why does a larger batch help", ""),
    ],
)
def test_the_reading_of_a_value_question(question, setting):
    assert asks_setting(words(question)) == setting


def test_no_setting_read_as_a_value_question_is_an_entry_of_its_own(core):
    # params.SETTINGS lists settings no entry is about: an entry titled or aliased by one (the
    # catalog's "epochs", "group size") answers the question, and must not be capped.
    store = core.searcher.store
    names = {
        " ".join(words(n))
        for kind in ("paper", "signal", "stage", "topic")
        for e in store.all(kind)
        for n in [e.title, *e.aliases]
    }
    assert not names & set(SETTINGS), names & set(SETTINGS)
