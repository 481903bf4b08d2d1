"""`papers by X` reads X as a whole name (issue 38): an organisation by its short form or whole, its
words written together or apart, with or without hyphens and dots, in any case; a name no byline
carries gets "no papers" and the bylines like it, never the papers of one of its words."""

from __future__ import annotations

import io

import pytest

from rlmap_bot.cli.shell import run_shell
from rlmap_bot.commands.catalog import papers
from rlmap_bot.commands.context import Invocation
from rlmap_bot.runs.sources.access import local_access


def papers_by(core, who: str):
    """`papers --by WHO` as the command line runs it (an option's value is never a question)."""
    ctx = Invocation.of(
        core, "cli", user="local", channel="local", local=True, run_access=local_access
    )
    return papers(ctx, by=who)


DEEPSEEK = {"deepseek-r1", "deepseekmath-grpo"}


@pytest.mark.parametrize(
    "who, expected",
    [
        ("DeepSeek", DEEPSEEK),  # the organisation's short form (found none before)
        ("deepseek ai", DEEPSEEK),  # listed the 9 papers by "AI" before
        ("DeepSeek-AI", DEEPSEEK),
        ("DeepSeekAI", DEEPSEEK),
        ("Moonshot AI", {"kimi-k3"}),
        ("moonshotai", {"kimi-k3"}),
        ("moonshot", {"kimi-k3"}),
        ("Z.ai", {"glm-5", "glm-5-2"}),
        ("zai", {"glm-5", "glm-5-2"}),
        ("z ai", {"glm-5", "glm-5-2"}),
        ("open ai", None),  # OpenAI's eleven
        ("Google DeepMind", {"dreamerv3"}),
        ("Andy Jones", {"board-game-scaling"}),  # "Andy L. Jones": an initial left out
    ],
)
def test_an_organisation_or_a_name_in_any_spelling(core, who, expected):
    found = {p.id for p in papers_by(core, who).papers}
    if expected is None:
        expected = {p.id for p in papers_by(core, "OpenAI").papers}
        assert len(expected) >= 10
    assert found == expected, found


def test_deepmind_is_also_google_deepmind_and_google_is_all_three(core):
    deepmind = {p.id for p in papers_by(core, "DeepMind").papers}
    assert "dreamerv3" in deepmind and "chinchilla" in deepmind  # DeepMind is a name of its own
    assert {p.id for p in papers_by(core, "Google").papers} == {
        "dreamerv3",
        "on-policy-what-matters",
        "seed-rl",
    }


@pytest.mark.parametrize("who", ["AI", "deepseek research", "Zurich", "Lab"])
def test_a_word_of_a_name_is_not_the_name(core, who):
    # "AI", "Lab" and "Zürich" are words of organisations' names, not their short forms; "deepseek
    # research" is no byline, though one of its words is.
    result = papers_by(core, who)
    assert result.papers == [] and result.filters == [f"by {who}"]
    assert result.near  # bylines like it are offered


def test_no_papers_offers_the_bylines_like_the_name(core):
    result = papers_by(core, "deepseek research")
    assert "DeepSeek-AI" in result.near
    out = io.StringIO()
    run_shell(core, stdin=io.StringIO("papers by Zurich\nquit\n"), stdout=out)
    assert "No papers by Zurich in the catalog" in out.getvalue()
    assert "Bylines like it: ETH Zürich" in out.getvalue()


def test_a_letter_off_is_read_as_the_byline_and_said(core):
    result = papers_by(core, "deepseek-ia")
    assert {p.id for p in result.papers} == DEEPSEEK
    assert result.filters == ["by DeepSeek-AI (for “deepseek-ia”)"]


def test_in_chat_a_misspelt_organisation_is_still_the_papers_list(core):
    out = io.StringIO()
    run_shell(
        core, stdin=io.StringIO("papers by deepseek-ia\npapers by deepseek ai\nquit\n"), stdout=out
    )
    text = out.getvalue()
    assert "2 papers by DeepSeek-AI (for “deepseek-ia”) in the catalog" in text
    assert "2 papers by deepseek ai in the catalog" in text
