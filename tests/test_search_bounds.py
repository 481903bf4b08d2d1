"""Bounded work: a huge question is cut, answered fast, and never echoed back whole."""

import random
import time

from rlmap_bot.search.models import QUERY_ECHO
from rlmap_bot.search.query import MAX_CORRECTIONS


def test_a_100kb_question_of_random_words_is_answered_fast_with_nothing(core):
    rng = random.Random(3)
    letters = "abcdefghijklmnopqrstuvwxyz"
    question = " ".join("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(15000))
    assert len(question) > 100_000
    core.ask("warm up")
    t0 = time.perf_counter()
    answer = core.ask(question)
    elapsed = time.perf_counter() - t0
    assert answer.results == []
    assert elapsed < 0.5, elapsed  # generous for a slow CI machine; typically a few milliseconds
    assert len(answer.query) <= QUERY_ECHO and answer.query.endswith("…")
    assert len(answer.corrections) <= MAX_CORRECTIONS


def test_a_pasted_log_full_of_map_words_is_cut_to_its_start(core):
    answer = core.ask("reward " * 20000)
    assert len(answer.query) <= QUERY_ECHO
    assert answer.results and answer.results[0].id == "reward"
