"""A question naming two entries returns both (they used to score each other down)."""

import pytest


@pytest.mark.parametrize(
    "question, both",
    [
        ("PPO vs GRPO, what's the difference?", {"ppo", "deepseekmath-grpo"}),
        ("how does IMPALA compare to SEED RL", {"impala", "seed-rl"}),
        ("Chinchilla or Kaplan scaling laws?", {"chinchilla", "kaplan-scaling-laws"}),
        ("DAPO versus Dr. GRPO", {"dapo", "dr-grpo"}),
        ("difference between the reward stage and the evaluation stage", {"reward", "evaluation"}),
    ],
)
def test_both_named_entries_are_in_the_top_five(core, question, both):
    ids = [h.id for h in core.ask(question, limit=5).results]
    assert both <= set(ids), ids


def test_each_named_entry_says_it_was_named(core):
    hits = {h.id: h for h in core.ask("PPO vs GRPO").results}
    assert "also known as 'PPO'" in hits["ppo"].why
    assert "also known as 'GRPO'" in hits["deepseekmath-grpo"].why
