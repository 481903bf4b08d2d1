"""Search quality on the project's own question set (tests/questions.yaml).

Fails when top-3 accuracy on covered questions or rejection of off-topic
questions drops below 0.9.  The same set feeds benchmarks/run.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

QUESTIONS = yaml.safe_load((Path(__file__).parent / "questions.yaml").read_text())


def evaluate(core, items):
    hits, misses, rejected, leaked = 0, [], 0, []
    for item in items:
        ids = [r.id for r in core.ask(item["q"], limit=3).results]
        if item["expect"]:
            if set(ids[:3]) & set(item["expect"]):
                hits += 1
            else:
                misses.append((item["q"], item["expect"], ids))
        elif not ids:
            rejected += 1
        else:
            leaked.append((item["q"], ids))
    return hits, misses, rejected, leaked


def test_question_set_is_big_and_varied():
    assert len(QUESTIONS) >= 60
    types = {item["type"] for item in QUESTIONS}
    assert {"typo", "british", "alias", "arxiv", "author", "natural", "offtopic"} <= types
    assert sum(1 for i in QUESTIONS if not i["expect"]) >= 10


def test_expected_ids_exist(core):
    for item in QUESTIONS:
        for entry_id in item["expect"]:
            assert core.get(entry_id) is not None, f"{item['q']!r} expects unknown id {entry_id}"


def test_top3_accuracy_and_offtopic_rejection(core):
    covered = [i for i in QUESTIONS if i["expect"]]
    offtopic = [i for i in QUESTIONS if not i["expect"]]
    hits, misses, rejected, leaked = evaluate(core, QUESTIONS)
    accuracy = hits / len(covered)
    rejection = rejected / len(offtopic)
    report = "\n".join(f"  miss: {q!r} expected {e} got {g}" for q, e, g in misses)
    report += "\n" + "\n".join(f"  leak: {q!r} -> {g}" for q, g in leaked)
    assert accuracy >= 0.9, f"top-3 accuracy {accuracy:.3f}\n{report}"
    assert rejection >= 0.9, f"off-topic rejection {rejection:.3f}\n{report}"


@pytest.mark.parametrize(
    "question, expected",
    [
        ("rewrad hacking", {"reward-model-overoptimization", "reward", "reward-overoptimization", "reward-hacking-definition"}),
        ("optimisaton", {"optimization"}),
        ("R1", {"deepseek-r1"}),
        ("the PPO paper", {"ppo"}),
        ("2210.10760", {"reward-model-overoptimization"}),
        ("Hafner's paper", {"dreamerv3"}),
        ("our grader says 90% solved but spot checks disagree, where do I look?", {"reward"}),
    ],
)
def test_examples_from_the_issue(core, question, expected):
    ids = [r.id for r in core.ask(question, limit=3).results]
    assert set(ids) & expected, ids


def test_results_say_why(core):
    hit = core.ask("Hafner's paper").results[0]
    assert any("hafner" in why.lower() for why in hit.why)
    fixed = core.ask("rewrad hacking")
    assert fixed.corrections == {"rewrad": "reward"}
