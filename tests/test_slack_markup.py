"""Issue 38: `*`, `_`, `~` and backticks in a person's or arXiv's text reached mrkdwn as markup:
a question or a paper's title turned bold, italic or struck through in the bot's reply. The real
Bolt app against the Slack stand-in; what a person sees is read with Slack's rules
(support/blockkit.py)."""

from __future__ import annotations

import pytest

from support import blockkit
from support.bot import start_bot
from support.slackio import blocks_of

REST = "2507.10541"  # a recorded arXiv answer (tests/data/arxiv)
MARKED = "*free* pizza_ for ~everyone~ in the `lobby` today"
SHOWN = "*free* pizza_ for ~everyone~ in the \u02cblobby\u02cb today"  # a backtick's look-alike


def shown(call) -> str:
    return blockkit.visible_text(blocks_of(call)) + "\n" + blockkit.visible(call.args["text"])


@pytest.mark.parametrize(
    "text",
    [MARKED, "_a_ *b* ~c~", "Q*: a star_", "x_y_z and *", "`code` and ``LaTeX''", "~/.config/x"],
)
def test_escaped_text_shows_as_written_under_slack_s_rules(text):
    from rlmap_bot.slack.markup import escape

    seen = blockkit.visible(escape(text))
    assert seen == text.replace("`", "\u02cb")
    # inside the bot's own markup too: a title in bold stays one bold title
    assert blockkit.visible(f"*{escape(text)}*") == text.replace("`", "\u02cb")


def test_names_with_underscores_are_left_as_they_are_and_code_keeps_its_text():
    from rlmap_bot.slack.markup import code, escape, prose

    assert escape("actor/pg_loss and snake_case") == "actor/pg_loss and snake_case"
    assert code("actor/pg_loss `x`") == "`actor/pg_loss \u02cbx\u02cb`"
    # the bot's sentences keep their code spans, and their data is escaped around them
    assert prose("Use `/rlmap help` for *x*").startswith("Use `/rlmap help` for ")
    assert blockkit.visible(prose("Use `/rlmap help` for *x*")) == "Use /rlmap help for *x*"


def test_a_question_with_markup_is_echoed_as_typed(bot, standin):
    bot.slack.command(f"ask {MARKED}", respond_as="marked")
    [call] = standin.wait_for("response_url", lambda c: c.target == "marked", timeout=30)
    assert SHOWN in shown(call)


def test_an_arxiv_title_with_markup_reaches_the_reply_and_the_curators_card_as_written(
    standin, built_db, tmp_path, arxiv
):
    arxiv.variant(REST, "2611.00077", title=f"Q*: {MARKED}")
    bot = start_bot(
        standin,
        built_db,
        tmp_path / "state.db",
        rlmap_curators="UCUR",
        rlmap_curator_channel="CCUR",
        rlmap_arxiv_url=arxiv.url,
        rlmap_arxiv_delay_seconds=0,
        rlmap_arxiv_timeout_seconds=5,
    )
    try:
        bot.slack.command("suggest 2611.00077", respond_as="suggest")
        [reply] = standin.wait_for("response_url", lambda c: c.target == "suggest", timeout=30)
        [card] = standin.wait_for(
            "chat.postMessage", lambda c: c.args["channel"] == "CCUR", timeout=30
        )
        for call in (reply, card):
            assert f"Q*: {SHOWN}" in shown(call), shown(call)
    finally:
        bot.stop()
