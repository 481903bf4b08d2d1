"""The alias table is knowledge: a curator's mistakes name file, entry and field."""

from __future__ import annotations

import shutil

import pytest

from rlmap_bot.knowledge.loader import KnowledgeError
from rlmap_bot.runs.aliases import QUANTITIES, load_aliases
from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from support import KNOWLEDGE
from support import runlogs as rl


@pytest.fixture
def metrics_copy(tmp_path):
    root = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE / "metrics", root / "metrics")
    return root


def test_the_bundled_table_loads():
    table = load_aliases(KNOWLEDGE)
    assert {"verl", "trl", "openrlhf", "areal", "slime", "prime-rl", "generic"} <= set(
        table.frameworks
    )
    assert {a.entry.quantity for a in table.aliases} <= set(QUANTITIES)
    assert [a.label for a in table.lookup("val-core/openai/gsm8k/reward/mean@4")] == ["verl 2025+"]
    assert table.lookup("actor/ppo_kl") == []  # old-vs-new policy KL is not the reference KL


@pytest.mark.parametrize(
    "old, new, entry, field, problem",
    [
        (
            "{metric: actor/entropy, quantity: entropy,",
            "{metric: actor/entropy, quantity: entropie,",
            "actor/entropy",
            "quantity",
            "unknown quantity",
        ),
        (
            "{metric: actor/grad_norm, quantity: grad_norm, unit: norm,",
            "{metric: actor/grad_norm, quantity: grad_norm, unit: furlongs,",
            "actor/grad_norm",
            "unit",
            "unknown unit",
        ),
        (
            "{metric: response_length/clip_ratio, quantity: truncation, unit: fraction,",
            "{metric: response_length/clip_ratio, quantity: truncation, unit: tokens,",
            "response_length/clip_ratio",
            None,
            "does not fit quantity 'truncation'",
        ),
        (
            "{metric: actor/pg_loss, quantity: policy_loss, unit: loss,",
            "{metric: actor/pg_loss, quantity: policy_loss, unit: loss, colour: red,",
            "actor/pg_loss",
            "colour",
            "unknown field",
        ),
        (
            "{metric: actor/pg_clipfrac, quantity: clip_fraction,",
            "{metric: actor pg clipfrac, quantity: clip_fraction,",
            "actor pg clipfrac",
            "metric",
            "String should match pattern",
        ),
    ],
)
def test_errors_name_file_entry_and_field(metrics_copy, old, new, entry, field, problem):
    path = metrics_copy / "metrics" / "verl.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(KnowledgeError) as err:
        load_aliases(metrics_copy)
    exc = err.value
    assert exc.path == "knowledge/metrics/verl.yaml" and exc.entry == entry and exc.field == field
    assert problem in exc.problem
    assert str(exc).startswith(f"knowledge/metrics/verl.yaml: entry '{entry}'")


def test_file_level_problems(metrics_copy):
    bad = metrics_copy / "metrics" / "bad.yaml"
    bad.write_text(
        "framework: bad\ntitle: Bad\nsources: [x]\naliases: [{metric: a, quantity: entropy, unit: "
        "nats}"
    )
    with pytest.raises(KnowledgeError, match=r"knowledge/metrics/bad.yaml: not valid YAML at line"):
        load_aliases(metrics_copy)
    bad.write_text(
        "framework: verl\ntitle: Again\nsources: [x]\naliases: [{metric: a, quantity: entropy, "
        "unit: nats}]\n"
    )
    with pytest.raises(KnowledgeError) as err:
        load_aliases(metrics_copy)
    assert err.value.field == "framework" and "already described" in err.value.problem
    bad.write_text(
        "framework: bad\ntitle: Bad\naliases: [{metric: a, quantity: entropy, unit: nats}]\n"
    )
    with pytest.raises(KnowledgeError) as err:
        load_aliases(metrics_copy)
    assert (
        err.value.entry is None and err.value.field == "sources" and "missing" in err.value.problem
    )
    bad.write_text(
        "framework: bad\ntitle: Bad\nsources: [x]\naliases:\n  - {metric: a, quantity: entropy, "
        "unit: nats}\n  - {metric: a, quantity: entropy, unit: nats}\n"
    )
    with pytest.raises(KnowledgeError) as err:
        load_aliases(metrics_copy)
    assert (
        err.value.entry == "a"
        and err.value.field == "metric"
        and "listed twice" in err.value.problem
    )


def test_a_curator_adds_a_framework_without_python(metrics_copy, tmp_path):
    (metrics_copy / "metrics" / "myrl.yaml").write_text(
        "framework: myrl\ntitle: Our in-house trainer\nsources: [trainer/logging.py]\naliases:\n"
        "  - {metric: rl/success, quantity: task_reward, unit: reward}\n"
        "  - {metric: rl/wait_pct, quantity: trainer_idle, unit: percent}\n"
        '  - {metric: "rl/eval/*", quantity: heldout_score, unit: score}\n'
    )
    table = load_aliases(metrics_copy)
    records = [
        (s, {"rl/success": r["reward"], "rl/wait_pct": 62.0})
        for s, r in rl.curves("healthy")
        if s > 0
    ]
    run = read_source(rl.write_jsonl(tmp_path / "run.jsonl", records), aliases=table)
    d = derive_signals(run, table)
    assert d.run.framework == "myrl"
    assert d.signals["rollout_wait_fraction"] == pytest.approx(0.62)
    assert d.signals["proxy_reward_trend"] == "rising"


def test_a_missing_folder(tmp_path):
    with pytest.raises(KnowledgeError, match="metric alias folder not found"):
        load_aliases(tmp_path)
