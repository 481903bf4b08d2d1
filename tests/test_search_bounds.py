"""Bounded work: a huge question is cut, answered fast, and never echoed back whole."""

import random

from rlmap_bot.results.ask import QUERY_ECHO
from rlmap_bot.search.query import MAX_CHARS, MAX_CORRECTIONS, cap


def test_a_100kb_question_of_random_words_is_answered_fast_with_nothing(core):
    rng = random.Random(3)
    letters = "abcdefghijklmnopqrstuvwxyz"
    question = " ".join(
        "".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(15000)
    )
    assert len(question) > 100_000
    answer = core.ask(question)  # its speed is measured in benchmarks/, not here
    assert answer.results == []
    assert len(answer.query) <= QUERY_ECHO and answer.query.endswith("…")
    assert len(answer.corrections) <= MAX_CORRECTIONS


def test_a_pasted_log_full_of_map_words_is_cut_to_its_start(core):
    answer = core.ask("reward " * 20000)
    assert len(answer.query) <= QUERY_ECHO
    assert answer.results and answer.results[0].id == "reward"


def test_a_long_question_is_cut_between_words_and_the_cut_word_is_not_corrected(core):
    """Issue 20: a 90,000-character question was cut
    inside a word, and the stub was then "corrected".
    """
    filler = "the " * ((MAX_CHARS - 3) // 4)  # "rewards" straddles the cut: "rew|ards"
    question = filler + "rewards " * 11500
    assert len(question) > 90_000 and question[MAX_CHARS - 1] not in " s"
    answer = core.ask(question)
    assert not answer.corrections, answer.corrections
    assert cap(question).split()[-1] == "the"  # "rewa" is dropped, not searched


def test_a_line_of_junk_longer_than_the_cap_is_shown_cut_not_as_an_empty_question(core):
    # Issue 38: a 20,000-character line with no space was answered `Nothing in the map is relevant
    # to “”.`: the only word ran past the cut and was dropped, leaving nothing to show.
    rng = random.Random(5)
    junk = "".join(
        rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(20000)
    )
    answer = core.ask(junk)
    assert answer.tier == "nothing" and not answer.shown and not answer.corrections
    assert answer.query.startswith(junk[:100]) and answer.query.endswith("…")
    assert len(answer.query) <= QUERY_ECHO
