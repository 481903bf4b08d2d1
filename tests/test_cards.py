"""Every card the bot sends, made by the real Bolt app from realistic inputs
(``support/gallery.py``, what `python3 dev.py cards` draws): each within Slack's limits, and the
mrkdwn reader that measures them reading mrkdwn as Slack's client does."""

from __future__ import annotations

import re

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
        "alert-stop",
        "forecast",
        "compare",
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


def _shot(cards: gallery.Gallery, name: str) -> gallery.Shot:
    return next(s for s in cards.shots if s.name == name)


def _mrkdwn_texts(blocks: list[dict]) -> list[str]:
    out = []
    for block in blocks:
        for obj in [block.get("text"), *(block.get("fields") or []), *block.get("elements", [])]:
            if isinstance(obj, dict) and obj.get("type") == "mrkdwn":
                out.append(obj["text"])
    return out


def test_no_card_has_a_bare_ampersand(cards):
    """Issue 38: the "W&B" label reached App Home with a bare &. Slack reads & as the start of an
    entity: every one the bot sends is &amp;, &lt; or &gt;."""
    bare = [
        (s.name, text)
        for s in cards.shots
        for text in _mrkdwn_texts(s.blocks)
        if re.search(r"&(?!amp;|lt;|gt;)", text)
    ]
    assert bare == []


def test_entry_buttons_show_a_short_name_never_a_word_cut_in_two(cards, core):
    """Issue 38: paper buttons were cut mid-word at 70 characters ("...for Reasoning Languag…")."""
    labels = []
    for shot in cards.shots:
        for block in shot.blocks:
            for element in [*block.get("elements", []), block.get("accessory") or {}]:
                if str(element.get("action_id", "")).startswith("entry_show_"):
                    labels.append((element["text"]["text"], element["value"]))
    assert len(labels) > 10
    for label, entry_id in labels:
        entry = core.store.get(entry_id)
        assert entry is not None
        assert label in ("Open", "Full entry", entry.short_name), (label, entry.short_name)


def test_help_in_slack_speaks_slack(cards):
    for name in ("help", "help-watch", "home"):
        text = blockkit.visible_text(_shot(cards, name).blocks)
        assert "--once" not in text and "in the terminal" not in text and "here: shows" not in text


def test_a_week_s_digest_of_the_real_catalog_gives_years_links_and_fits_a_phone(cards):
    """Issue 38: 24 blocks and 7.2k characters for one week, "*New*" on every item, each URL
    repeated as text, no year: DPO (2023), InstructGPT and SWE-bench "new" because they entered
    the catalog that week."""
    shot = _shot(cards, "digest-week")
    text = "\n".join(_mrkdwn_texts(shot.blocks))
    new, _, added = text.partition("*Added to the catalog*")
    for paper in ("Direct Preference Optimization", "to follow instructions", "SWE-bench"):
        assert paper in added and paper not in new, paper
    assert "*New*" not in text
    items = [line for line in text.splitlines() if line.startswith("• ")]
    assert len(items) >= 10
    assert all(re.search(r"\((19|20)\d\d\b", line) for line in items), "a year on every paper"
    links = re.findall(r"<([^|>]+)\|([^>]+)>", text)
    assert links and all(label != url for url, label in links), "links as links"
    assert len(shot.blocks) <= 6
    assert blockkit.visible_chars(shot.blocks) <= 4000


def test_app_home_opens_with_the_person_s_own_watches_and_diagnoses(cards):
    """Issue 38: App Home opened with the static stage blurbs; a user's own watches and
    diagnoses came after 17 blocks."""
    blocks = _shot(cards, "home").blocks
    texts = [blockkit.visible_text([b]) for b in blocks]
    first = lambda words: next(i for i, t in enumerate(texts) if words in t)  # noqa: E731
    mine = max(first("Your open diagnoses"), first("Watched runs in your channels"))
    assert mine <= 3
    assert mine < first("Ask me about") < first("1. Environments") < first("Newest in the catalog")


def test_every_verdict_and_alert_card_opens_with_three_lines_and_fits_the_budget(cards):
    """Issue 38: a diagnosis card was 10 blocks and 4.4-6.5k characters with no line saying what
    to do; a watch alert 1.8-3.4k. Now: what binds or broke, how sure, one thing to do, then at
    most three readings, within about 1,500 characters."""
    checked = 0
    for shot in cards.shots:
        if shot.family not in (gallery.VERDICTS, gallery.ALERTS):
            continue
        blocks = shot.blocks
        assert blockkit.visible_chars(blocks) <= 1500, (shot.name, blockkit.visible_chars(blocks))
        if blocks[0]["type"] != "header":  # a resolved note or a pause notice: a line or two
            assert shot.family == gallery.ALERTS and len(blocks) <= 2, shot.name
            continue
        sure, step = blocks[1]["text"]["text"].split("\n")
        # How sure: a percentage, or none for a lead on one measurement (wording.is_lead).
        assert re.search(r"\d+% sure|^No percentage: it rests on one measurement", sure), (
            shot.name,
            sure,
        )
        assert step.startswith(("*Do this next:* ", "*Check next:* ")), (shot.name, step)
        readings = [b for b in blocks[2:] if b["type"] == "section"]
        assert len(readings) <= 1 and all(
            len(r["text"]["text"].split("\n")) <= 3 for r in readings
        ), shot.name
        checked += 1
    assert checked >= 7, checked
