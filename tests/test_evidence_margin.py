"""Evidence weighed by its margin (issue 36, item 2): a trend just past its noise band is weak
evidence and says so; a held-out score's noise comes from its evaluation set's size; the
overoptimization rule compares the two curves' shapes, not "rising" against "flat" on two scales.

The runs are written in real formats (verl's JSONL file logger, an MLflow store) and read by the
product as ``diagnose --run`` reads them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlmap_bot.knowledge.loader import KnowledgeError, load_catalog
from rlmap_bot.runs import stats
from rlmap_bot.runs.diagnose import diagnose_run
from rlmap_bot.runs.signals.evaluation import eval_noise, trials_of
from support import KNOWLEDGE
from support import runlogs as rl

HELDOUT = "val-core/openai/gsm8k/reward/mean@1"  # the name runlogs gives; its size is not in it


def _run(
    seed: int,
    problems: int,
    reward_shape,
    heldout_shape,
    steps: int = 300,
    every: int = 10,
    batch: int = 256,
):
    """A verl run whose training reward is a batch pass rate following ``reward_shape`` and whose
    held-out score is a pass rate over ``problems`` problems following ``heldout_shape`` (both
    functions of the run's progress, 0-1); the other curves are runlogs' healthy ones."""
    rng = np.random.default_rng(seed)
    records = rl.curves("healthy", steps=steps, seed=seed, eval_every=every)
    t = np.arange(1, steps + 1) / steps
    reward = rng.binomial(batch, reward_shape(t)) / batch
    out = []
    for step, row in records:
        row = dict(row)
        if step > 0:
            row["reward"] = float(reward[step - 1])
        if "heldout" in row:
            row["heldout"] = float(rng.binomial(problems, heldout_shape(step / steps)) / problems)
        out.append((step, row))
    return rl.named(out, "verl")


def _saturating(start: float, gain: float, tau: float):
    return lambda x: start + gain * (1 - np.exp(-np.asarray(x) / tau))


def _diagnose(core, tmp_path, records, kind="verl-jsonl"):
    path = rl.write_format(kind, tmp_path, records)
    return diagnose_run(core.engine, KNOWLEDGE, path)


# -- the words: the margin said in the evidence line ---------------------------------------------


def test_a_trend_says_its_margin_against_its_band():
    steps = np.arange(40)
    before, after = np.full(20, 0.5), np.full(20, 0.534)
    t = stats.judge_trend(steps[:20], before, steps[20:], after, np.r_[before, after], noise=0.032)
    assert t.direction == "rising"
    assert "+0.034 against a flat band of \u00b10.032: just past it" in t.describe()
    far = stats.judge_trend(
        steps[:20], before, steps[20:], after + 0.1, np.r_[before, after + 0.1], noise=0.032
    )
    assert "far past it" in far.describe() and far.margin > stats.MARGIN_FAR


# -- a held-out score's noise from its evaluation set's size -------------------------------------


def test_the_number_of_trials_is_read_from_the_scores():
    rng = np.random.default_rng(4)
    aime = rng.binomial(30, 0.3, 12) / 30  # pass@1 over 30 problems: multiples of 1/30
    mean_at_8 = rng.binomial(240, 0.3, 12) / 240  # mean@8 over the same 30
    assert trials_of(aime) == 30
    assert trials_of(mean_at_8) == 240
    assert trials_of(rng.uniform(0.2, 0.6, 12)) is None  # a mean reward on no lattice
    assert trials_of(np.array([1.5, 2.5, 3.0, 4.0])) is None  # not a 0-1 pass rate
    # printed to 3 decimals: on the lattice of 1/1000 whatever the set, so no size is read
    assert trials_of(np.round(rng.uniform(0.5, 0.8, 12), 3)) is None
    assert trials_of(rng.binomial(500, 0.7, 12) / 500) == 500  # MATH-500: 3 decimals, its own
    sigma, words = eval_noise(aime, 0.25)
    # one problem of 30 is 3.3 points; the binomial standard error at 25% is 7.9 points
    assert sigma == pytest.approx(math.sqrt(0.25 * 0.75 / 30)) and "30 trials" in words


# -- shapes, not scales ----------------------------------------------------------------------------

#: Healthy runs whose training reward and held-out score both rise and level off, the held-out
#: more slowly (the issue's run, and its family: sets of 30, 100 and 500 problems, slower and
#: faster saturation).  Gao et al.'s overoptimization is a held-out score that falls after a
#: peak; none of these has one.
SATURATING = {
    "aime-sized, held-out 2.5x slower": (30, _saturating(0.25, 0.45, 0.45), 0.2, 0.25, 1.1),
    "100 problems, held-out 2x slower": (100, _saturating(0.3, 0.4, 0.4), 0.35, 0.2, 0.8),
    "500 problems, held-out 3x slower": (500, _saturating(0.2, 0.5, 0.35), 0.4, 0.15, 1.05),
}


@pytest.mark.parametrize("member", sorted(SATURATING))
def test_runs_that_saturate_at_different_rates_are_not_reward_bound(core, tmp_path, member):
    problems, reward, h0, h_gain, h_tau = SATURATING[member]
    said = []
    for seed in range(6):
        records = _run(seed, problems, reward, _saturating(h0, h_gain, h_tau))
        d = _diagnose(core, tmp_path / f"s{seed}", records)
        said.append((seed, d.binding_stage, d.signals.get("heldout_score_trend")))
    assert [s for s in said if s[1] == "reward"] == [], said


def test_the_issues_run_from_mlflow_is_not_reward_bound(core, tmp_path):
    problems, reward, h0, h_gain, h_tau = SATURATING["aime-sized, held-out 2.5x slower"]
    records = _run(0, problems, reward, _saturating(h0, h_gain, h_tau))
    d = _diagnose(core, tmp_path, records, kind="mlflow-db")
    assert d.binding_stage != "reward"
    proxy = d.signal_sources["proxy_reward_trend"].detail
    assert "against a flat band of \u00b1" in proxy  # its margin is said either way


def test_a_held_out_score_rising_inside_a_small_sets_noise_is_not_overoptimization(core, tmp_path):
    """A training reward still climbing and a 30-problem held-out score climbing slowly inside
    its noise (a problem is 3.3 points): "flat" or "falling" there is noise, not Goodhart."""
    said = []
    for seed in range(6):
        records = _run(
            seed, 30, lambda x: 0.3 + 0.4 * np.asarray(x), lambda x: 0.15 + 0.1 * np.asarray(x)
        )
        d = _diagnose(core, tmp_path / f"r{seed}", records)
        said.append((seed, d.binding_stage, d.signals.get("heldout_score_trend")))
    assert [s for s in said if s[1] == "reward"] == [], said


@pytest.mark.parametrize("problems, level", [(30, 0.03), (40, 0.04), (30, 0.06)])
def test_a_held_out_score_at_the_floor_of_a_small_set_has_not_collapsed(
    core, tmp_path, problems, level
):
    """A hard set where the model solves one problem or none (AIME at 3%): a level at a quarter
    of the first one is one problem less, inside the set's noise, not a fall past a peak."""
    said = []
    for seed in range(5):
        records = _run(seed, problems, lambda x: 0.2 + 0.4 * np.asarray(x), lambda x: level)
        d = _diagnose(core, tmp_path / f"f{seed}", records)
        said.append((seed, d.binding_stage, d.signals.get("heldout_score_trend")))
    assert [s for s in said if s[1] == "reward"] == [], said


def test_a_held_out_score_far_past_its_peak_is_overoptimization_and_says_so(core, tmp_path):
    """Gao et al.'s shape on a 500-problem set: the proxy rises to the end, the held-out peaks
    halfway and loses 30 points; the verdict is reward, the evidence line says how far past."""

    def peaked(x):
        x = np.asarray(x)
        return np.where(x <= 0.5, 0.4 + 0.6 * x, 0.7 - 0.6 * (x - 0.5))

    d = _diagnose(core, tmp_path, _run(2, 500, lambda x: 0.3 + 0.5 * np.asarray(x), peaked))
    assert d.signals["heldout_score_trend"] == "falling"
    source = d.signal_sources["heldout_score_trend"]
    assert source.margin is not None and source.margin >= stats.MARGIN_FAR
    assert "past its peak at step" in source.detail and "far past it" in source.detail
    assert "500 trials" in source.detail
    assert d.binding_stage == "reward" and d.confidence >= 0.7


# -- the weighing, in the scoring ------------------------------------------------------------------


def test_a_reading_counts_by_its_margin(core):
    engine = core.engine
    values = {"proxy_reward_trend": "rising", "heldout_score_trend": "falling"}

    def reward_score(margins):
        verdict = engine.diagnose(values, margins=margins)
        return next(r.score for r in verdict.ranking if r.stage == "reward"), verdict

    full, said = reward_score(None)  # a person's answers: no band, in full
    far, _ = reward_score({"proxy_reward_trend": 4.0, "heldout_score_trend": 3.5})
    edge, weak = reward_score({"proxy_reward_trend": 4.0, "heldout_score_trend": 1.0})
    assert full == far > edge > 0

    # the engine's own probability of the stage falls with the weight (the confidence said on a
    # run goes through the calibration map, a person's does not, so those two are not compared)
    def p_reward(v):
        return next(r.probability for r in v.ranking if r.stage == "reward")

    assert said.binding_stage == "reward" and p_reward(weak) < p_reward(said)
    rule = next(e for e in weak.evidence if e.rule == "heldout_score_trend.overoptimization")
    assert rule.points["reward"] < 5  # the evidence carries what it counted for
    # a held-out score that did not fall short of following the reward: the onset rule is unfired
    flat = {"proxy_reward_trend": "rising", "heldout_score_trend": "flat"}
    inside = engine.diagnose(flat, margins={"proxy_reward_trend": 4.0, "heldout_score_trend": 0.4})
    assert "heldout_score_trend.divergence_onset" not in {e.rule for e in inside.evidence}
    assert "heldout_score_trend.divergence_onset" in {
        e.rule for e in engine.diagnose(flat).evidence
    }


def test_weighed_by_must_name_a_signal_the_rule_reads(knowledge_copy):
    path = knowledge_copy / "signals" / "heldout_score_trend.yaml"
    text = path.read_text()
    old = "weighed_by: [heldout_score_trend]"
    assert old in text
    path.write_text(text.replace(old, "weighed_by: [entropy_trend]", 1))
    with pytest.raises(KnowledgeError, match=r"weighed_by.*does not read 'entropy_trend'"):
        load_catalog(knowledge_copy)


# -- how sure a verdict on a run says it is (item 1) -----------------------------------------------


def test_the_calibration_map_is_read_and_applied_to_verdicts_on_runs(knowledge_copy, tmp_path):
    """knowledge/calibration.yaml maps the engine's probability of what a verdict states to how
    often such verdicts were right; a verdict on a run is said through it, a person's answers
    keep the engine's own probability."""
    from rlmap_bot.diagnosis.engine import Engine

    (knowledge_copy / "calibration.yaml").write_text(
        "method: test\nfitted_on: test\ncommand: test\nknots:\n  stage: [[0.5, 0.3], [0.9, "
        "0.6]]\n  none: [[0.4, 0.8]]\nsupport:\n  stage: [0.0, 1.0]\n  none: [0.0, 1.0]\n"
    )
    engine = Engine(load_catalog(knowledge_copy))
    values = {"proxy_reward_trend": "rising", "heldout_score_trend": "falling"}
    answered = engine.diagnose(values)
    on_a_run = engine.diagnose(values, margins={})
    assert answered.binding_stage == on_a_run.binding_stage == "reward"
    raw = answered.confidence
    assert 0.5 < raw < 0.99
    expected = 0.3 + 0.3 * (min(raw, 0.9) - 0.5) / 0.4
    assert on_a_run.confidence == pytest.approx(expected, abs=1e-3)
    # "No single stage" said on a reading that moved a stage, though not far enough to bind; a
    # reading that moves none abstains and states no percentage at all.
    none = engine.diagnose({"entropy_trend": "rising"}, margins={})
    assert none.binding_stage is None and not none.tied
    assert none.confidence == pytest.approx(0.8)
    assert engine.diagnose({"entropy_trend": "stable"}, margins={}).confidence is None


def test_below_what_it_was_fitted_on_the_map_never_raises_a_verdict(knowledge_copy):
    """A map fitted on plain verdicts only (the engine said 0.80 or more of each) has seen no
    verdict on one weak reading: one the engine gives 40% is said at 40%, not at the 95% of the
    block above (a rollouts verdict on one measurement read as 95% before)."""
    from rlmap_bot.knowledge.settings import Calibration

    fitted = Calibration(
        method="test",
        fitted_on="test",
        command="test",
        knots={"stage": [(0.9, 0.95)], "none": [(0.5, 0.4)]},
        support={"stage": (0.8, 0.99), "none": (0.3, 0.7)},
    )
    assert fitted.stated(0.40, "stage") == pytest.approx(0.40)
    assert fitted.stated(0.85, "stage") == pytest.approx(0.95)  # inside: the block's frequency
    assert fitted.stated(0.99, "stage") == pytest.approx(0.95)
    # below its support a map whose first block is surer than right says its block, not more
    assert fitted.stated(0.2, "none") == pytest.approx(0.2)
    assert fitted.stated(0.35, "none") == pytest.approx(0.4)
    assert fitted.stated(0.29, "none") == pytest.approx(0.29)
    with pytest.raises(ValueError, match="support must hold its knots"):
        Calibration(
            method="t",
            fitted_on="t",
            command="t",
            knots={"stage": [(0.5, 0.6)]},
            support={"stage": (0.6, 0.9)},
        )


def test_a_verdict_on_one_measurement_read_from_a_run_states_no_percentage(knowledge_copy):
    """The verl PPO benchmark's one reading (the trainer waits for rollouts 60% of each step) is a
    verdict the engine gives about 40%; a map fitted on plain verdicts said it at 95%, and the
    engine's own 40% is no measured frequency either (on generated runs such a verdict is right
    by construction). Read from a run, it names the stage as a lead with no percentage; a
    person's answer keeps the engine's own probability; two readings go through the map."""
    from rlmap_bot.diagnosis.engine import Engine
    from rlmap_bot.wording import abstains, verdict_headline
    from rlmap_bot.wording.verdicts import opening

    (knowledge_copy / "calibration.yaml").write_text(
        "method: test\nfitted_on: test\ncommand: test\nknots:\n  stage: [[0.3, 0.95]]\n"
        "support:\n  stage: [0.0, 1.0]\n"
    )
    engine = Engine(load_catalog(knowledge_copy))
    one = {"rollout_wait_fraction": 0.6}
    by_a_person, on_a_run = engine.diagnose(one), engine.diagnose(one, margins={})
    assert on_a_run.binding_stage == "rollouts" and on_a_run.one_measurement
    assert on_a_run.confidence is None and by_a_person.confidence < 0.6
    said = " ".join(opening(on_a_run)[:2]) + " " + verdict_headline(on_a_run)
    assert "Rollout generation may bind" in said and "no percentage" in said and "%" not in said
    assert not abstains(on_a_run)  # a lead, not an abstention: it names its stage
    two = {"rollout_wait_fraction": 0.6, "length_tail_ratio": 6}
    firm = engine.diagnose(two, margins={})
    assert firm.binding_stage == "rollouts" and not firm.one_measurement
    assert firm.confidence == pytest.approx(0.95)


def test_a_calibration_map_must_be_monotone(knowledge_copy):
    (knowledge_copy / "calibration.yaml").write_text(
        "method: test\nfitted_on: test\ncommand: test\nknots:\n  stage: [[0.5, 0.7], [0.9, 0.6]]\n"
    )
    with pytest.raises(KnowledgeError, match="non-decreasing"):
        load_catalog(knowledge_copy)


def test_pool_adjacent_violators_gives_a_monotone_map_that_never_says_certain():
    import sys

    sys.path.insert(0, str(KNOWLEDGE.parent / "benchmarks"))
    from calibrate import isotonic

    # stated 0.4 and right 9 in 10; stated 0.9 and right 7 in 10: one pooled block, 16/20
    pairs = [(0.4, i < 9) for i in range(10)] + [(0.9, i < 7) for i in range(10)]
    knots = isotonic(pairs)
    assert len(knots) == 1 and knots[0][1] == pytest.approx(16.5 / 21, abs=1e-4)
    rising = isotonic([(0.2, False)] * 5 + [(0.5, i < 3) for i in range(5)] + [(0.8, True)] * 5)
    ys = [y for _, y in rising]
    assert ys == sorted(ys) and 0 < ys[0] and ys[-1] < 1


def test_a_level_far_above_its_start_is_said_in_times_not_thousands_of_percent():
    """A reward that started near zero and rose to 0.55 read "now 0.547 (7000% of it)"."""
    import numpy as np

    from rlmap_bot.runs import stats

    steps = np.arange(1, 101)
    far = stats.level(np.linspace(0.008, 0.55, 100))
    near = stats.level(np.linspace(0.5, 0.6, 100))
    assert far is not None and near is not None
    said = far.describe(steps)
    assert "times it)" in said and "%" not in said, said
    assert f"({far.ratio:,.0f} times it)" in said
    assert near.describe(steps).endswith(f"({near.ratio:.0%} of it)")
