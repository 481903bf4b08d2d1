"""Slack text is not part of the question (issue 18),
in the real Bolt app against the Web API stand-in.

Mentions, channel links, URLs, code marks and emoji do not change what ask finds; "papers by
@someone" looks the person up (users.info) and searches their real name; a question in another
language gets a short "English only" note with whatever matched.
"""

from __future__ import annotations

import pytest

from rlmap_bot.search.query import plain
from support.slackio import blocks_of, text_of

PLAIN = "why is my reward going up but evals going down"
DECORATED = (
    "<@U42> why is my :thinking_face: `reward` going up <#C9|ml-team> but evals "
    "<https://wandb.ai/team/run/abc|going down> :chart_with_downwards_trend: "
    "https://example.org/x?y=1"
)


def _dm(bot, standin, text: str, ts: str) -> dict:
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U1",
            "channel": "D1",
            "ts": ts,
            "text": text,
        }
    )
    return standin.wait_for("chat.postMessage")[0]


def _entries(call) -> list[str]:
    return [
        e["value"]
        for b in blocks_of(call)
        if b["type"] == "actions"
        for e in b["elements"]
        if "value" in e
    ]


def test_markup_does_not_change_what_is_found(bot, standin):
    plain_answer = _dm(bot, standin, PLAIN, "400.1")
    standin.calls.clear()
    decorated = _dm(bot, standin, DECORATED, "400.2")
    assert _entries(decorated) == _entries(plain_answer) and _entries(plain_answer)


def test_markup_is_stripped_from_the_words_not_the_words_in_it():
    text = plain(
        "what is `clip_fraction` :tada: <#C1|general> #random see <https://a.org/b|the PPO paper> "
        "https://c.org"
    )
    assert text.split() == ["what", "is", "clip_fraction", "see", "the", "PPO", "paper"]
    assert plain("meet at 10:30:00").split() == ["meet", "at", "10:30:00"]  # a time is not an emoji


def test_papers_by_a_mentioned_person_use_their_real_name(bot, standin):
    standin.user_names["U777"] = "Danijar Hafner"
    call = _dm(bot, standin, "papers by <@U777>", "401.1")
    assert standin.of("users.info")[-1].args["user"] == "U777"
    assert "Mastering Diverse Domains through World Models" in text_of(blocks_of(call))


def test_a_mention_the_lookup_cannot_name_is_dropped(bot, standin):
    call = _dm(bot, standin, "papers by <@U404> on PPO", "401.2")
    assert "Proximal Policy Optimization" in text_of(blocks_of(call))


def test_another_language_gets_an_english_only_note(bot, standin):
    call = _dm(bot, standin, "Warum steigt die Belohnung, aber die Evaluierung nicht?", "402.1")
    assert "English only" in text_of(blocks_of(call)) and "English only" in call.args["text"]
    standin.calls.clear()
    english = _dm(bot, standin, PLAIN, "402.2")
    assert "English only" not in text_of(blocks_of(english))


def test_another_language_with_nothing_readable_is_told_so_and_nothing_is_corrected(bot, standin):
    """The note once promised "what I could match is below" above "Nothing in the map is relevant",
    and "fällt" was "corrected" to "falls"."""
    call = _dm(bot, standin, "warum steigt meine Belohnung aber die Bewertung fällt", "403.1")
    text = text_of(blocks_of(call))
    assert (
        "English only, and nothing I could read" in text
        and "what I could match is below" not in text
    )
    assert "corrected spelling" not in text


@pytest.mark.parametrize(
    "question, other",
    [
        (
            "como reduzir a divergência KL",
            True,
        ),  # two words English lacks, one written with a diacritic
        ("¿por qué mi recompensa sube pero la evaluación baja?", True),
        ("is the naïve café reward model ok", False),  # diacritics on English words
        ("Schrödinger reward hacking", False),  # one name with a diacritic is no language
        ("reward model by Hervé Jégou", False),  # nor two, without another language's common words
        ("Gödel or Schrödinger reward hacking", False),
    ],
)
def test_diacritics_on_words_neither_english_nor_the_catalogs_mark_another_language(
    core, question, other
):
    assert core.ask(question).english_only is other
