"""The population the verdict benchmark is judged on (tests/support/population.py): the same seed
gives the same runs, and each class's files read back, through the product's own reader, with the
shape its truth says. What the product concludes from them is the benchmark's business
(benchmarks/population.py), not this module's."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rlmap_bot.runs.aliases import load_aliases
from rlmap_bot.runs.sources import read_source
from support import KNOWLEDGE
from support import population as pop

SEED = 7  # neither the tuning nor the held-out seed


@pytest.fixture(scope="module")
def aliases():
    return load_aliases(KNOWLEDGE)


def _series(run: pop.PopRun, names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(global steps, values) of the first of ``names`` the run logs."""
    pairs = [(s, row[n]) for s, row in run.rows for n in names if n in row]
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs], dtype=float)


REWARD = ("critic/score/mean", "train/reward")
LENGTH = ("response_length/mean", "train/completions/mean_length")
ENTROPY = ("actor/entropy", "train/entropy")
GRAD = ("actor/grad_norm", "train/grad_norm")
LOSS = ("actor/pg_loss", "train/loss")


def _heldout(run: pop.PopRun) -> tuple[np.ndarray, np.ndarray]:
    return _series(run, (run.eval_set.verl_name, "eval/reward"))


def _solve_rate(run: pop.PopRun, values: np.ndarray) -> np.ndarray:
    return (values + 1) / 2 if run.params["score_pm1"] else values


def test_the_same_seed_gives_the_same_runs_and_another_seed_others():
    for kind in pop.CLASSES:
        a, b, c = (pop.make_run(kind, 3, s) for s in (SEED, SEED, SEED + 1))
        assert a.truth == b.truth and a.format == b.format and a.steps == b.steps
        assert repr(a.rows) == repr(b.rows)  # repr: NaN == NaN, as the files hold them
        assert repr(a.rows) != repr(c.rows)
    names = [r.name for r in pop.population(SEED, per_class=2)]
    assert len(names) == 2 * len(pop.CLASSES) == len(set(names))


def test_the_fixed_seeds_give_at_least_150_runs_across_formats_and_frameworks():
    runs = pop.population(pop.HELDOUT_SEED)
    assert len(runs) >= 150
    assert {r.format for r in runs} == set(pop.FORMATS)
    assert {r.framework for r in runs} == {"verl", "trl"}
    assert {r.eval_set.problems for r in runs} >= {30, 500, 1319}


@pytest.mark.parametrize("fmt", pop.FORMATS)
def test_a_run_written_whole_or_grown_reads_back_as_written(tmp_path, aliases, fmt):
    run = dataclasses.replace(pop.make_run("noisy_skipped", 0, SEED), format=fmt)
    whole = run.write(tmp_path / f"whole{run.suffix}")
    grown = tmp_path / f"grown{run.suffix}"
    cuts = [run.cut(s) for s in (0.3, 0.6, 1.0)]
    run.write(grown, upto=cuts[0])
    run.append(grown, after=cuts[0], upto=cuts[1])
    run.append(grown, after=cuts[1])
    assert grown.read_bytes() == whole.read_bytes()
    read = read_source(whole, aliases)
    steps, values = _series(run, REWARD)
    got = read.series["critic/score/mean"]
    assert got.steps.tolist() == steps.tolist()
    assert np.allclose(got.values, values)
    bad = [s for s, row in run.rows if not math.isfinite(row.get("actor/grad_norm", 0.0))]
    assert len(bad) == 1 and read.nonfinite == {"actor/grad_norm": bad}
    h_steps, h_values = _heldout(run)
    assert h_steps[0] == 0 and h_steps[-1] == run.steps  # before training and at the last step
    assert np.allclose(read.series[run.eval_set.verl_name].values, h_values)


def test_a_trl_run_is_a_wandb_export_whose_evaluations_are_rows_of_their_own(tmp_path, aliases):
    run = next(r for r in pop.population(SEED, per_class=4) if r.framework == "trl")
    read = read_source(run.write(tmp_path / "export.csv"), aliases)
    assert read.format == "wandb-csv"
    logged = [s for s, row in run.rows if "train/reward" in row]
    evals = [s for s, row in run.rows if "eval/reward" in row]
    assert len(read.series["train/reward"].values) == len(logged)
    assert len(read.series["eval/reward"].values) == len(evals)
    # _step counts W&B log calls: an evaluation takes one, so steps run past the global step.
    assert read.series["train/reward"].steps[-1] == len(run.rows) - 1 - (evals[-1] == run.steps)


def _shape(run: pop.PopRun) -> None:
    """What the class's truth says of its curves, read from the rows the files hold."""
    t = run.truth
    steps, reward = _series(run, REWARD)
    rate = _solve_rate(run, reward)
    h_steps, heldout = _heldout(run)
    _, length = _series(run, LENGTH)
    _, entropy = _series(run, ENTROPY)
    _, grad = _series(run, GRAD)
    _, loss = _series(run, LOSS)
    n = len(reward)
    head, tail = slice(0, max(2, n // 10)), slice(n - max(2, n // 10), n)
    after = steps > (t.visible or 0)
    if t.group == "healthy":
        assert t.stage is None and t.fault is None and t.onset is None
        assert 0.05 < np.median(rate[tail]) <= 0.85
        assert np.median(reward[tail]) > np.median(reward[head])
        # The held-out rises, though on a 30-problem set it may rise less than its noise: it does
        # not end below its start by more than two standard errors of one evaluation.
        ev = run.eval_set
        se = math.sqrt(0.25 / (ev.problems * ev.samples))
        assert np.mean(heldout[-3:]) > heldout[0] - 2 * se
        assert not np.isnan(loss).any()
        if run.kind == "noisy_skipped":
            assert (~np.isfinite(grad)).sum() == 1
        else:
            assert np.isfinite(grad).all()
        return
    assert t.stage is not None and t.onset is not None and 1 <= t.onset <= run.steps
    if run.kind == "rollout_bound":
        _, gen = _series(run, ("timing_s/gen",))
        _, step = _series(run, ("timing_s/step",))
        assert np.median(gen / step) >= 0.5
    elif run.kind == "overoptimization":
        peak = h_steps[np.argmax(heldout)]
        assert abs(peak - t.onset) <= 0.25 * run.steps
        assert heldout[-1] < heldout.max() and reward[tail].mean() > reward[head].mean()
    elif run.kind == "entropy_collapse":
        assert np.median(entropy[tail]) < 0.1 * np.median(entropy[head])
    elif run.kind == "length_explosion":
        assert np.median(length[tail]) > 2 * np.median(length[steps <= t.onset])
    elif t.fault == "collapse":
        assert np.median(length[after]) < 0.2 * np.median(length[steps < t.onset])
        assert np.median(rate[after]) < 0.5 * np.median(rate[steps < t.onset])
    elif t.fault == "nan":
        assert np.isnan(loss[steps >= t.onset]).all() and np.isfinite(loss[steps < t.onset]).all()
    elif run.kind == "too_easy":
        assert np.median(rate[steps >= t.onset]) > 0.9
    elif run.kind == "too_hard":
        assert np.median(rate) < 0.05


@pytest.mark.parametrize("kind", list(pop.CLASSES))
def test_each_class_reads_back_with_its_truths_shape(tmp_path, aliases, kind):
    for i in range(3):
        run = pop.make_run(kind, i, SEED)
        _shape(run)
        read = read_source(run.write(tmp_path / f"{i}{run.suffix}"), aliases)
        name = next(n for n in REWARD if n in read.series)
        assert len(read.series[name].values) == len(_series(run, REWARD)[1])
        if run.truth.fault == "nan":  # every NaN loss written is read as one
            loss = next(n for n in LOSS if n in read.nonfinite)
            assert len(read.nonfinite[loss]) == np.isnan(_series(run, LOSS)[1]).sum() > 0
