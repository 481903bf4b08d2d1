"""Who wrote what: authorship questions find the paper; "et al", "team", "paper" are no evidence."""

import pytest


@pytest.mark.parametrize(
    "question, expected",
    [
        ("who wrote PPO", "ppo"),
        ("who proposed GRPO", "deepseekmath-grpo"),
        ("PPO author", "ppo"),
        ("PPO authors", "ppo"),
        ("who introduced V-trace", "impala"),
        ("who came up with clip-higher", "dapo"),
        ("who proposed dynamic sampling", "dapo"),
    ],
)
def test_who_wrote_x_finds_the_paper_first(core, question, expected):
    answer = core.ask(question)
    assert answer.results and answer.results[0].id == expected, [h.id for h in answer.results]
    assert all(h.kind != "stage" for h in answer.results)  # it asks for a paper
    assert any(w.startswith("written by ") for w in answer.results[0].why), answer.results[0].why


@pytest.mark.parametrize(
    "question, unrelated",
    [
        # Each unrelated entry's text says "proposes" or
        # "introduces" and nothing about the subject asked.
        ("who proposed RLOO", "entropy-mechanism"),
        ("who introduced CISPO", "impala"),
        ("who proposed Dr. GRPO", "entropy-mechanism"),
    ],
)
def test_the_words_asking_who_match_no_entry(core, question, unrelated):
    ids = [h.id for h in core.ask(question).results]
    assert ids and unrelated not in ids, ids


def test_papers_by_someone_lists_their_papers_and_says_so(core):
    hits = core.ask("papers by Schulman").results
    assert {"ppo", "procgen", "single-agent-rl-scaling", "reward-model-overoptimization"} <= {
        h.id for h in hits
    }
    assert all("by Schulman" in h.why for h in hits if h.id in {"ppo", "procgen"})


def test_et_al_and_team_are_not_words_of_the_question(core):
    answer = core.ask("Espeholt et al")
    assert {h.id for h in answer.results[:2]} == {"impala", "seed-rl"}
    assert not answer.corrections
    # "team" is in bylines ("Kimi Team", "Ling Team") but says nothing by itself.
    assert core.ask("Kimi Team").results[0].id in {"kimi-k1-5", "kimi-k3"}
    assert not core.ask("our team").results


def test_what_did_an_organisation_publish(core):
    ids = [h.id for h in core.ask("what did MiniMax publish").results[:2]]
    assert set(ids) == {"minimax-m2", "minimax-m3"}


@pytest.mark.parametrize(
    "question, expected",
    [
        # Each word of these names is everyday English:
        # alone, "jimmy", "jones" or "brain" says nothing.
        ("what did Jimmy Ba work on here", "dreamerv3"),
        ("Andy Jones board games", "board-game-scaling"),  # the byline is "Andy L. Jones"
        ("Lambert et al", "tulu-3"),
        ("any Google Brain papers?", "on-policy-what-matters"),
        ("stuff from UT Austin", "path-not-taken"),  # the byline is "Meta and UT Austin"
    ],
)
def test_a_name_the_catalog_writes_is_one_word_of_the_map(core, question, expected):
    answer = core.ask(question)
    assert expected in [h.id for h in answer.results[:3]], answer.shown


@pytest.mark.parametrize(
    "question",
    [
        # "Li" is a byline word; the rest is chemistry
        "Li et al 2019 on lithium battery electrolytes",
        "is Timothy Chalamet in the new Dune film",  # a first name of a byline, not the name
        # the byline's name, next to words of another field
        "Princeton University tuition fees for next year",
    ],
)
def test_a_name_next_to_another_fields_words_is_not_enough_for_a_confident_answer(core, question):
    answer = core.ask(question)
    assert answer.tier != "confident" and not answer.results, [h.id for h in answer.results]


@pytest.mark.parametrize(
    "question, expected",
    [
        # Issue 38: an organisation by its short form or whole, its words together or apart.
        ("papers by DeepSeek", {"deepseek-r1", "deepseekmath-grpo"}),
        ("papers by deepseek ai", {"deepseek-r1", "deepseekmath-grpo"}),
        ("who wrote deepseek ai papers", {"deepseek-r1", "deepseekmath-grpo"}),
        ("papers from DeepSeek", {"deepseek-r1", "deepseekmath-grpo"}),
        ("anything from zai", {"glm-5", "glm-5-2"}),
        ("papers from Moonshot AI", {"kimi-k3"}),
    ],
)
def test_an_organisation_asked_for_gets_its_papers_first(core, question, expected):
    answer = core.ask(question)
    first = [h.id for h in answer.results[: len(expected)]]
    assert set(first) == expected, [h.id for h in answer.results]
    scores = [h.score for h in answer.results]
    assert scores == sorted(scores, reverse=True)  # the list still reads best first


def test_a_later_word_of_an_organisations_name_cites_no_one(core):
    # "AI" of DeepSeek-AI and of Sea AI Lab: "deepseek ai" cites DeepSeek-AI, not every "AI" byline.
    answer = core.ask("papers by deepseek ai")
    assert not any("Sea AI Lab" in why for h in answer.results for why in h.why)
    lexicon = core.searcher.lexicon
    assert not lexicon.names_alone("zurich", "zurich")
    assert not lexicon.names_alone("ai", "ai")
    assert lexicon.names_alone("deepseek", "deepseek") and lexicon.names_alone("hafner", "hafner")
    assert lexicon.names_alone("deepmind", "deepmind")  # of Google DeepMind too: a name elsewhere
    # Names are compared as written, not as stems: "Ilya" is not the byline's "Ilyas".
    assert not lexicon.names_alone("ilya", "ilya") and lexicon.names_alone("ilya", "ilyas")
    assert "implementation-matters" not in {
        h.id for h in core.ask("papers by Ilya Sutskever").shown
    }
    # The whole name still cites it.
    assert core.ask("stuff from ETH Zurich").results[0].id == "reasoning-language-models-blueprint"
