"""A broken knowledge file names file, entry and field, and the old store stays in use."""

from __future__ import annotations

import sqlite3

import pytest

from rlmap_bot.knowledge.loader import KnowledgeError, load_catalog
from rlmap_bot.knowledge.store import KnowledgeStore
from rlmap_bot.search.index import build_store
from support.cli import invoke as run_cli

PPO = "papers/ppo.yaml"


def _edit(root, rel, old, new):
    path = root / rel
    text = path.read_text()
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    "rel, old, new, expect",
    [
        (PPO, "year: 2017", "year: twenty", ("papers/ppo.yaml", "entry 'ppo'", "field 'year'")),
        (PPO, "kind: paper", "kind: papr", ("papers/ppo.yaml", "entry 'ppo'", "field 'kind'")),
        (
            PPO,
            "stages:",
            "stagez:",
            ("papers/ppo.yaml", "entry 'ppo'", "field 'stagez'", "unknown field"),
        ),
        (
            PPO,
            "verification: verified",
            "verification: maybe",
            ("entry 'ppo'", "field 'verification'"),
        ),
        (PPO, 'arxiv: "1707.06347"', 'arxiv: "not-an-id"', ("entry 'ppo'", "field 'arxiv'")),
        (
            "stages/reward.yaml",
            "id: reward",
            "id: rewards",
            ("stages/reward.yaml", "entry 'rewards'", "field 'id'"),
        ),
        (
            "signals/clip_fraction.yaml",
            "type: fraction",
            "type: percent",
            ("entry 'clip_fraction'", "field 'type'"),
        ),
    ],
)
def test_bad_field_names_file_entry_and_field(knowledge_copy, rel, old, new, expect):
    _edit(knowledge_copy, rel, old, new)
    with pytest.raises(KnowledgeError) as info:
        load_catalog(knowledge_copy)
    message = str(info.value)
    assert "\n" not in message
    for part in expect:
        assert part in message


def test_missing_required_field(knowledge_copy):
    path = knowledge_copy / PPO
    path.write_text(
        "\n".join(line for line in path.read_text().splitlines() if not line.startswith("title:"))
    )
    with pytest.raises(
        KnowledgeError, match=r"papers/ppo.yaml: entry 'ppo': field 'title': missing"
    ):
        load_catalog(knowledge_copy)


def test_link_to_unknown_id(knowledge_copy):
    _edit(knowledge_copy, PPO, "related: [", "related: [no-such-paper, ")
    with pytest.raises(
        KnowledgeError, match=r"entry 'ppo': field 'related': links to unknown id 'no-such-paper'"
    ):
        load_catalog(knowledge_copy)


def test_duplicate_id(knowledge_copy):
    (knowledge_copy / "papers" / "zz-copy.yaml").write_text((knowledge_copy / PPO).read_text())
    with pytest.raises(
        KnowledgeError, match=r"zz-copy.yaml: entry 'ppo': field 'id': duplicate id"
    ):
        load_catalog(knowledge_copy)


def test_yaml_syntax_error_names_line(knowledge_copy):
    (knowledge_copy / "papers" / "broken.yaml").write_text("id: x\nkind: paper\ntitle: [unclosed\n")
    with pytest.raises(KnowledgeError, match=r"papers/broken.yaml: not valid YAML at line \d+"):
        load_catalog(knowledge_copy)


def test_rule_naming_an_unknown_signal(knowledge_copy):
    path = knowledge_copy / "signals" / "clip_fraction.yaml"
    text = path.read_text()
    text = text.replace('when: "clip_fraction', 'when: "clip_fractoin', 1)
    path.write_text(text)
    with pytest.raises(
        KnowledgeError,
        match=r"entry 'clip_fraction': field 'rules\[\d+\]\.when': names unknown signal "
        r"'clip_fractoin'",
    ):
        load_catalog(knowledge_copy)


def test_rule_with_code_is_refused(knowledge_copy):
    path = knowledge_copy / "signals" / "clip_fraction.yaml"
    text = path.read_text()
    import re

    text = re.sub(r"when: .*", "when: __import__('os').system('true')", text, count=1)
    path.write_text(text)
    with pytest.raises(KnowledgeError, match=r"field 'rules\[0\]\.when'"):
        load_catalog(knowledge_copy)


def test_bad_setting(knowledge_copy):
    _edit(knowledge_copy, "catalog.yaml", "search_floor:", "search_flor:")
    with pytest.raises(
        KnowledgeError,
        match=r"catalog.yaml: entry 'settings': field 'search_flor': unknown setting",
    ):
        load_catalog(knowledge_copy)


@pytest.mark.parametrize(
    "old, new, field, problem",
    [
        (
            "first: heldout_score_trend.overoptimization",
            "first: heldout_score_trend.overoptimisation",
            r"diagnosis\.precedence\[0\]\.first",
            "no rule 'heldout_score_trend.overoptimisation'",
        ),
        (
            "explains: [entropy_trend]",
            "explains: [entropy_trnd]",
            r"diagnosis\.precedence\[0\]\.explains",
            "no rule 'entropy_trnd'",
        ),
        (
            "source: reward-model-overoptimization\n      why: >-\n        Proxy",
            "source: nowhere\n      why: >-\n        Proxy",
            r"diagnosis\.precedence\[0\]\.source",
            "not a paper",
        ),
    ],
)
def test_a_precedence_naming_nothing_is_refused(knowledge_copy, old, new, field, problem):
    _edit(knowledge_copy, "catalog.yaml", old, new)
    with pytest.raises(KnowledgeError, match=rf"entry 'settings': field '{field}'") as err:
        load_catalog(knowledge_copy)
    assert problem in str(err.value)


def test_answer_words_for_no_choice_are_refused(knowledge_copy):
    _edit(knowledge_copy, "catalog.yaml", "    widening: [", "    widenning: [")
    with pytest.raises(
        KnowledgeError, match=r"entry 'settings': field 'diagnosis\.answer_words\.widenning'"
    ) as err:
        load_catalog(knowledge_copy)
    assert "'widenning' is no choice of any signal" in str(err.value) and "widening" in str(
        err.value
    )


@pytest.mark.parametrize(
    "new, problem",
    [
        # a number: no complaint's words give one
        ("states: {length_growth: 3}", "'length_growth' is a number: a complaint states only"),
        # a word the question does not offer
        ("states: {proxy_reward_trend: climbing}", "not one of rising, flat, falling"),
        # a signal the complaint does not list, so a verdict reading it would not explain it
        ("states: {entropy_trend: stable}", "which the complaint's signals do not list"),
        # a list that rules nothing out says nothing
        ("states: {proxy_reward_trend: [rising, flat, falling]}", "rule out at least one"),
    ],
)
def test_a_complaint_stating_what_its_words_cannot_is_refused(knowledge_copy, new, problem):
    _edit(
        knowledge_copy,
        "catalog.yaml",
        "states: {proxy_reward_trend: rising, heldout_score_trend: [flat, falling]}",
        new,
    )
    with pytest.raises(
        KnowledgeError, match=r"entry 'settings': field 'diagnosis\.complaints\[0\]\.states\."
    ) as err:
        load_catalog(knowledge_copy)
    assert problem in str(err.value) and "\n" not in str(err.value)


def test_failed_build_keeps_the_old_store(knowledge_copy, tmp_path):
    db = tmp_path / "kb.db"
    build_store(knowledge_copy, db)
    before = db.read_bytes()
    _edit(knowledge_copy, PPO, "year: 2017", "year: soon")
    with pytest.raises(KnowledgeError):
        build_store(knowledge_copy, db)
    assert db.read_bytes() == before
    assert not list(tmp_path.glob(".kb.db.*.tmp")), "a temporary file was left behind"
    store = KnowledgeStore(db)
    assert store.get("ppo").year == 2017


def test_cli_build_failure_is_one_line_and_keeps_store(knowledge_copy, env, tmp_path):
    env["RLMAP_KNOWLEDGE"] = str(knowledge_copy)
    ok = run_cli(["kb", "build"], env)
    assert ok.returncode == 0, ok.stderr
    _edit(knowledge_copy, PPO, "year: 2017", "year: soon")
    bad = run_cli(["kb", "build"], env)
    assert bad.returncode == 1
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in bad.stderr
    assert (
        "papers/ppo.yaml: entry 'ppo': field 'year'" in lines[0]
        and "previous store is unchanged" in lines[0]
    )
    check = run_cli(["kb", "check"], env)
    assert check.returncode == 1 and "field 'year'" in check.stderr
    # The bot keeps answering from the old store, with a warning.
    ask = run_cli(["ask", "--json", "the PPO paper"], env)
    assert ask.returncode == 0
    assert '"id": "ppo"' in ask.stdout
    assert "previous knowledge store" in ask.stderr
    with sqlite3.connect(env["RLMAP_DB"]) as conn:
        assert conn.execute("select count(*) from entries where id='ppo'").fetchone()[0] == 1
