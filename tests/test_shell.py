"""The local shell, driven line by line as a person would type."""

from __future__ import annotations

from support.cli import shell


def test_plain_line_is_a_question(core):
    out = shell(
        core, "our grader says 90% solved but spot checks disagree, where do I look?", "quit"
    )
    # The first hit may follow the prompt on the same line ("rlmap> 1. ...").
    first = [line for line in out.splitlines() if "1. [" in line][0]
    assert "Reward quality" in first


def test_commands(core):
    out = shell(core, "help", "stages", "papers", "show dapo", "ask Hafner's paper", "quit")
    assert "ask QUESTION" in out and "diagnose" in out
    assert "1. Environments (environments)" in out
    assert "papers in the catalog" in out
    assert "DAPO" in out and "Key facts:" in out
    assert "Mastering Diverse Domains through World Models" in out
    assert out.rstrip().endswith("bye")


def test_bad_input_never_shows_a_traceback(core):
    out = shell(
        core,
        "show",
        "show no-such-thing",
        "ask",
        "!!!",
        "\x00\x01",
        "show ../../etc/passwd",
        "quit",
    )
    assert "Traceback" not in out
    assert "`show` needs ID" in out and "Usage: show ID" in out
    assert "no entry with id 'no-such-thing'" in out
    assert "`ask` needs QUESTION" in out and "Usage: ask QUESTION" in out
    assert "Nothing in the map is relevant" in out


def test_off_topic_says_what_it_knows(core):
    out = shell(core, "where is the coffee machine?", "quit")
    assert "Nothing in the map is relevant" in out
    assert "Rollout generation" in out
    assert "About a run of yours? `diagnose` asks what you see" in out  # as the shell types it


def test_end_of_input_quits(core):
    out = shell(core, "stages")
    assert out.rstrip().endswith("bye")


def test_papers_by_a_name_as_people_type_it(core):
    # A newcomer (2026-12-03): "papers by Schulmann"
    # found nothing and offered nothing, and "papers by
    # John Schulman" left the papers list for a search.
    # Bylines give surnames; a letter off is a typo.
    out = shell(
        core,
        "papers by John Schulman",
        "papers by Schulmann stage optimization",
        "papers by deepmnd",
        "papers by Lilian Weng",
        "quit",
    )
    assert "4 papers by Schulman (for “John Schulman”) in the catalog" in out
    assert "papers on Optimization by Schulman (for “Schulmann”)" in out
    assert "papers by DeepMind (for “deepmnd”)" in out  # as the byline writes it
    # Nobody close: nothing guessed, and the line is a question the map has no answer to.
    assert (
        "(for “Lilian Weng”)" not in out
        and "Nothing in the map is relevant to “papers by Lilian Weng”" in out
    )
    assert "Two entries fit about equally well" not in out


def test_a_question_that_starts_with_papers_by_stays_a_question(core):
    # The review of the change above (2026-12-03): a
    # name read over several words must not swallow the
    # question that follows it, nor read a short name as another person's.
    out = shell(
        core,
        "papers by DeepMind using world models",
        "papers by the DeepSeek team",
        "papers by Gao et al reward overoptimization",
        "papers by Lin",
        "quit",
    )
    assert (
        "Mastering Diverse Domains through World Models" in out.split("papers by the DeepSeek")[0]
    )
    assert "(deepseek-r1," in out and "(reward-model-overoptimization," in out
    assert (
        "papers by Team" not in out
        and "No papers by Lin in the catalog" in out
        and "(for “Lin”)" not in out
    )


def test_a_close_call_shows_two_then_the_rest_apart(core):
    out = shell(core, "ask MiniMax", "quit")
    head, _, rest = out.partition("Also relevant:")
    assert (
        "Did you mean one of these?" in head
        and "1. [" in head
        and "2. [" in head
        and "3. [" not in head
    )
    assert "3. [" in rest, "the third fit is shown, after the two"


def test_a_question_mark_after_a_paused_diagnosis_is_help_not_a_question(core):
    # Issue 38: "?" skips a question inside a guided diagnosis; typed on once the diagnosis paused
    # (three "don't know"s), it was searched as a question: `Nothing in the map is relevant to “?”`.
    out = shell(core, "diagnose", *["?"] * 6, "stages", "?", "quit")
    assert "(paused: measure one of these" in out
    assert "Nothing in the map is relevant to “?”" not in out
    after = out.split("(paused: measure one of these", 1)[1]
    assert "is paused. Measure one of the checks above, then `diagnose --resume " in after
    assert "Ask anything (any line that is not a command is a question)" in after
    # Once another command ran, "?" is the commands' help alone.
    last = out.rsplit("The five stages", 1)[1]
    assert "is paused" not in last and "Ask anything (any line" in last


def test_a_question_mark_alone_is_help(core):
    out = shell(core, "?", "quit")
    assert "Ask anything (any line that is not a command is a question)" in out
    assert "Nothing in the map is relevant" not in out
