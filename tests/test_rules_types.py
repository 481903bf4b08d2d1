"""`kb check` type-checks rule conditions and checks what rules and complaints point at.

Each mistake is refused with one line naming the file, the entry and the field.
"""

from __future__ import annotations

import re

import pytest

from rlmap_bot.knowledge.expr import UNKNOWN, ExprError, ValueType, parse
from rlmap_bot.knowledge.loader import KnowledgeError, load_catalog
from support.cli import run_cli

CLIP = "signals/clip_fraction.yaml"


def set_first_when(root, rel: str, when: str) -> None:
    path = root / rel
    path.write_text(re.sub(r'when: ".*"', f'when: "{when}"', path.read_text(), count=1))


@pytest.mark.parametrize(
    "when, problem",
    [
        ("clip_fraction == 'high'", "compares number signal 'clip_fraction' with the word 'high'"),
        (
            "entropy_trend == 'falling'",
            "'falling' is not one of choice signal 'entropy_trend''s choices",
        ),
        ("grad_norm_spikes == 1", "compares yes/no signal 'grad_norm_spikes' with number"),
        ("proxy_reward_trend * 2 > 1", "arithmetic on a non-number"),
        ("clip_fraction > 'low'", "compare numbers"),
        ("clip_fraction and grad_norm_spikes", "not a condition"),
        ("clip_fraction + 1", "must be true or false"),
        ("sqrt(entropy_trend) > 1", "sqrt() takes numbers"),
        ("entropy_trend in ('collapsing', 'shrinking')", "'shrinking' is not one of"),
    ],
)
def test_ill_typed_rule_is_refused_naming_file_entry_and_field(knowledge_copy, when, problem):
    set_first_when(knowledge_copy, CLIP, when)
    with pytest.raises(KnowledgeError) as info:
        load_catalog(knowledge_copy)
    message = str(info.value)
    assert "signals/clip_fraction.yaml: entry 'clip_fraction': field 'rules[0].when'" in message
    assert problem in message and "\n" not in message


def test_well_typed_conditions_pass():
    types = {
        "c": ValueType("number"),
        "b": ValueType("bool"),
        "e": ValueType("choice", frozenset({"up", "down"})),
    }
    for ok in (
        "c >= 0.1 and b",
        "e == 'up' or not b",
        "abs(c) < 2 * c * sqrt(2 / c)",
        "e in ('up', 'down')",
        "e != 'down' and min(c, 1) > 0",
    ):
        parse(ok).check(types)
    with pytest.raises(ExprError):
        parse("e == c").check(types)


def test_unknown_signals_are_unknown_not_false():
    expr = parse("a == 'x' or b > 1")
    assert expr.holds({"b": 2})  # one known true branch is enough for 'or'
    assert not expr.holds({"b": 0})  # 'a' unknown: cannot tell
    assert expr.value({"b": 0}) is UNKNOWN
    assert not parse("a == 'x' and b > 1").holds({"b": 2})
    assert parse("not b").value({}) is UNKNOWN
    assert parse("a == 'x' and b > 1").contradicted({"b": 0})
    assert not parse("a == 'x' and b > 1").contradicted({"b": 2})


def test_fact_index_must_exist(knowledge_copy):
    path = knowledge_copy / CLIP
    path.write_text(
        path.read_text().replace(
            "    source: ppo\n    fact: 0\n", "    source: ppo\n    fact: 42\n", 1
        )
    )
    with pytest.raises(
        KnowledgeError,
        match=r"clip_fraction.yaml: entry 'clip_fraction': field 'rules\[0\]\.fact': "
        r"'ppo' has facts 0 to \d+; there is no fact 42",
    ):
        load_catalog(knowledge_copy)


def test_rule_needs_a_fact_or_a_judgement(knowledge_copy):
    path = knowledge_copy / "signals" / "entropy_trend.yaml"
    text = path.read_text()
    # The plateau rule cites fact 3 of its source and carries no judgement: drop the fact.
    text = text.replace(
        "    source: entropy-mechanism\n    fact: 3\n", "    source: entropy-mechanism\n", 1
    )
    path.write_text(text)
    with pytest.raises(
        KnowledgeError, match=r"entry 'entropy_trend': field 'rules\[\d+\]': .*'fact'.*'judgement'"
    ):
        load_catalog(knowledge_copy)


def test_override_must_name_a_rule(knowledge_copy):
    path = knowledge_copy / CLIP
    path.write_text(
        path.read_text().replace(
            "overrides: [high, moderate, policy_lag_steps.stale]",
            "overrides: [high, moderate, policy_lag_steps.stael]",
            1,
        )
    )
    with pytest.raises(
        KnowledgeError, match=r"field 'rules\[\d+\]\.overrides': no rule 'policy_lag_steps.stael'"
    ):
        load_catalog(knowledge_copy)


def test_complaint_must_name_signals(knowledge_copy):
    path = knowledge_copy / "catalog.yaml"
    path.write_text(
        path.read_text().replace(
            "signals: [rollout_wait_fraction,", "signals: [rollout_wait_fractoin,", 1
        )
    )
    with pytest.raises(
        KnowledgeError,
        match=r"catalog.yaml: entry 'settings': field 'diagnosis.complaints\[\d+\]\.signals': "
        r"names unknown signal 'rollout_wait_fractoin'",
    ):
        load_catalog(knowledge_copy)


def test_kb_check_reports_a_type_error_in_one_line(knowledge_copy, env):
    set_first_when(knowledge_copy, CLIP, "clip_fraction == 'high'")
    env["RLMAP_KNOWLEDGE"] = str(knowledge_copy)
    out = run_cli(["kb", "check"], env)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert "field 'rules[0].when'" in lines[0] and "'high'" in lines[0]
