"""Off-topic questions that borrow the map's words get
"nothing relevant"; their on-topic twins do not.
"""

import pytest


@pytest.mark.parametrize(
    "question",
    [
        "who won the football match last night",
        "scaling my startup team to fifty people",
        "a policy for remote work",
        "mirage in the desert",
        "stage fright before my talk",
        "seed funding for our company",
        "reward points for the coffee loyalty card",
        "where is the coffee machine?",
    ],
)
def test_everyday_senses_of_map_words_are_rejected(core, question):
    answer = core.ask(question)
    assert answer.results == [], [h.id for h in answer.results]
    assert answer.known_topics  # says what it does know about instead


@pytest.mark.parametrize(
    "question, expected",
    [
        (
            "what's the optimal batch size for GRPO",
            {"critical-batch-size-grpo", "larger-batches-llm-rl"},
        ),
        ("the mirage paper", {"emergence-mirage"}),
        ("how much does eval variance change from seed to seed", {"eval_seed_std", "evaluation"}),
        ("policy entropy collapse", {"entropy_trend", "entropy-mechanism"}),
        ("reward", {"reward"}),
    ],
)
def test_the_same_words_in_the_map_sense_are_answered(core, question, expected):
    ids = [h.id for h in core.ask(question).results[:3]]
    assert set(ids) & expected, ids


def test_a_rejection_names_the_words_the_map_never_uses(core):
    answer = core.ask("a policy for remote work")
    assert "remote" in answer.unrelated_words


@pytest.mark.parametrize(
    "question",
    [
        "what's a good batch size for sourdough",  # a rare English word, no typo: foreign
        "how long should a batch of brioche proof",
        "rollout of the new HR software",  # a map word inside an everyday phrase
        "token ring network topology",
    ],
)
def test_families_found_by_hands_on_trying_are_rejected(core, question):
    assert core.ask(question).results == []


def test_a_rare_byline_name_is_evidence_not_noise(core):
    # "Hafner" appears a few times in the catalog: a name, not a weak estimate of its language.
    assert core.ask("Hafner's paper").results[0].id == "dreamerv3"


def test_a_question_that_is_exactly_a_name_gets_that_entry_first(core):
    assert core.ask("reward").results[0].id == "reward"
    assert core.ask("IMPALA").results[0].id == "impala"


def test_a_rejected_question_still_says_what_was_corrected(core):
    answer = core.ask("genration paper")
    assert answer.corrections == {"genration": "generation"}
