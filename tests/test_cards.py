"""Every card the bot sends, made by the real Bolt app from realistic inputs
(``support/gallery.py``, what `python3 dev.py cards` draws): each within Slack's limits, and the
mrkdwn reader that measures them reading mrkdwn as Slack's client does."""

from __future__ import annotations

import pytest

from support import blockkit, gallery


@pytest.fixture(scope="module")
def cards(tmp_path_factory, built_db) -> gallery.Gallery:
    return gallery.make(tmp_path_factory.mktemp("cards"), built_db)


def test_the_gallery_has_every_kind_of_card(cards):
    names = {s.name for s in cards.shots}
    assert {
        "diagnosis-grpo-run",
        "guided-question",
        "guided-verdict",
        "alert-stage",
        "alert-fault",
        "alert-change",
        "alert-resolved",
        "alert-paused",
        "digest-week",
        "home",
        "ask-confident",
        "ask-guess",
        "ask-nothing",
        "help",
        "help-usage",
        "credentials-form",
        "curation-card",
    } <= names, sorted(names)
    if gallery.real_logs() is not None:
        assert "diagnosis-verl-agent-opd-262" in names


def test_every_card_is_within_slack_s_limits(cards):
    refused = {s.name: blockkit.problems(s.surface) for s in cards.shots}
    assert {n: p for n, p in refused.items() if p} == {}


def test_the_limits_check_finds_what_slack_refuses():
    button = {"type": "button", "action_id": "a", "text": {"type": "plain_text", "text": "x" * 76}}
    assert blockkit.problems({"blocks": [{"type": "actions", "elements": [button]}]})
    context = {"type": "context", "elements": [{"type": "mrkdwn", "text": "x"}] * 11}
    assert blockkit.problems({"blocks": [context]})
    assert blockkit.problems({"blocks": [{"type": "divider"}] * 51})
    assert not blockkit.problems({"view": {"type": "home", "blocks": [{"type": "divider"}] * 51}})
    twice = {"type": "divider", "block_id": "b"}
    assert blockkit.problems({"blocks": [twice, twice]})


@pytest.mark.parametrize(
    "mrkdwn, seen",
    [
        ("*Reward quality* binds", "Reward quality binds"),
        ("_(critic/score/mean, steps 1-20)_", "(critic/score/mean, steps 1-20)"),
        ("`actor/pg_loss` and snake_case_name", "actor/pg_loss and snake_case_name"),
        ("<https://arxiv.org/abs/1707.06347|PPO> &amp; W&amp;B &lt;3", "PPO & W&B <3"),
        ("<#C123|team> asked <@U1>", "#team asked @U1"),
        ("a*b*c stays", "a*b*c stays"),
        (":rotating_light: *Fault*", "\u25cf Fault"),
        ("*<https://x.org|a title>* (2023)", "a title (2023)"),
    ],
)
def test_the_visible_text_of_mrkdwn_is_what_slack_shows(mrkdwn, seen):
    assert blockkit.visible(mrkdwn) == seen


def test_visible_characters_count_every_text_a_person_reads():
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": "Verdict"}},
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "*bold* <https://x.org|link>"},
            "accessory": {
                "type": "button",
                "action_id": "a",
                "text": {"type": "plain_text", "text": "Open"},
            },
        },
        {"type": "context", "elements": [{"type": "mrkdwn", "text": "`id`"}]},
    ]
    assert blockkit.visible_chars(blocks) == len("Verdict") + len("bold link") + 4 + 2
