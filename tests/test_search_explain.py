"""Answers say why they matched in plain words."""


def why(core, question, entry_id):
    return next(h.why for h in core.ask(question, limit=10).results if h.id == entry_id)


def test_names_bylines_fields_and_curated_questions_are_named(core):
    assert "also known as 'PPO'" in why(core, "the PPO paper", "ppo")
    assert "title matches 'Chinchilla'" not in why(
        core, "Chinchilla", "chinchilla"
    )  # an alias, not the title
    assert "also known as 'Chinchilla'" in why(core, "Chinchilla", "chinchilla")
    assert "title matches 'Let's Verify Step by Step'" in why(
        core, "Let's Verify Step by Step", "verify-step-by-step"
    )
    assert "by Schulman" in why(core, "papers by Schulman", "ppo")
    reasons = why(core, "entropy collapse and clip-higher", "dapo")
    assert any(
        r.startswith("mentions") and "'entropy'" in r and " in its " in r for r in reasons
    ), reasons
    reasons = why(core, "how many samples per prompt should we use for GRPO?", "group_size")
    assert any(r.startswith("close to a curated question: ") for r in reasons), reasons
    assert "arXiv id 2210.10760" in why(core, "2210.10760", "reward-model-overoptimization")


def test_a_number_or_a_word_against_the_map_is_never_quoted_as_a_reason(core):
    """ "mentions 'stuck' and '2'" and "mentions '3'
    and 'better'" made good matches look accidental.
    """
    for question, unquoted in [
        ("the score jumped 10 points overnight, suspicious", "'10'"),
        ("training is stuck at step 2 and gets no better", "'2'"),
        ("training is stuck at step 2 and gets no better", "'gets'"),
        ("we ran 3 seeds and the best one is much better", "'3'"),
    ]:
        answer = core.ask(question, limit=10)
        reasons = [r for h in answer.shown for r in h.why if r.startswith("mentions")]
        assert reasons and not any(unquoted in r for r in reasons), (question, reasons)


def test_a_rare_word_the_catalog_writes_is_still_quoted(core):
    """Its evidence is 0 (used too rarely to count for or against), yet it is what matched."""
    reasons = why(core, "bayesian reward models with megatron overhead", "env_time_fraction")
    assert any("'overhead'" in r for r in reasons), reasons
