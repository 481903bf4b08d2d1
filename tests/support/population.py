"""A population of generated RL runs whose truth is known: what the verdict benchmark is judged on.

Each run belongs to a class (:data:`CLASSES`): healthy runs that saturate, still rise, or are
noisy with a few spikes and one step the trainer skipped; a run whose trainer waits on its
rollouts; and runs that go wrong (reward overoptimization, entropy collapse, length explosion,
an output collapse early or late, a loss that stays NaN, tasks too easy or too hard).  A class
says which stage binds (or none), which fault it is (or none) and from which step, with the
source that justifies it.

The curves come from a small model of what a trainer measures, not from hand-drawn shapes, so
their noise has the size real logs show:

* the training reward is the mean over a batch of ``B`` prompts, each sampled ``G`` times, of
  prompts drawn from a pool whose solve probabilities follow a Beta distribution; learning moves
  every prompt's log-odds by the same shift.  The zero-advantage share is the share of prompts
  whose ``G`` samples all scored the same (the catalog's ``p^G + (1-p)^G``, measured);
* the held-out score is a fixed evaluation set of ``n`` problems (30 for AIME, 500 for
  MATH-500, 1,319 for GSM8K) sampled ``m`` times each, every ``eval_every`` steps and at the
  last step (verl evaluates then), so a 30-problem pass@1 moves in steps of 3.3 points;
* entropy, response length, gradient norm, loss, KL and timings carry step-to-step noise of the
  size the real-log bank shows (measured on each log's second half as the spread of successive
  differences over the level: entropy 3-8% in the easyr1 and gpt-oss runs, 17% in a Tinker one;
  length 5-6%, up to 20-30% in the Tinker and hand-written countdown runs; gradient norm 18%).
  The generator draws 2-6% for entropy, 3-8% for length (doubled in the noisy class) and 10-30%
  for the gradient norm: the quieter half of what the bank shows.

Runs are written in formats users have: verl's file logger (``{"step": N, "data": {...}}``), a
verl console log, and a W&B history CSV export (``_step`` plus one column a metric) of a verl or
of a TRL run (TRL's W&B keys carry ``train/`` and ``eval/``; its ``_step`` counts log calls, so an
evaluation is a row of its own).  :meth:`PopRun.write` writes a run cut at a step and
:meth:`PopRun.append` adds the steps after it, as a trainer grows its log.

Tests (``tests/test_population.py``) and the benchmark (``benchmarks/population.py``) both use
this module; it imports nothing of the bot, so it judges the product from outside.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from support import runlogs as rl

#: The seeds the benchmark fixes: tune on the first, report the second first.
TUNING_SEED = 3601
HELDOUT_SEED = 3602
#: Runs per class and seed: 12 classes x 13 = 156 runs a seed (the issue asks for at least 150).
PER_CLASS = 13
FORMATS = ("verl-jsonl", "verl-console", "wandb-csv")
Group = Literal["healthy", "bound", "faulty"]


@dataclass(frozen=True)
class Kind:
    """A class of runs and its truth."""

    name: str
    group: Group  # healthy: nothing to say; bound: a stage binds from the start; faulty: goes bad
    stage: str | None  # the stage that binds once it shows
    fault: str | None  # the fault family: "nan", "collapse" (None: a stage, not a fault)
    #: Fault names of the product that name it (a ``collapse`` in any name also does).
    named_by: tuple[str, ...]
    onset: tuple[float, float] | None  # where in the run it begins (shares); None: from step 1
    #: Share of the run after onset by which it can be seen: a gradual change needs about a tenth
    #: of the run (the product's windows are a fifth to a quarter), an abrupt one a few steps.
    visible: float
    frameworks: tuple[str, ...]
    source: str


CLASSES: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            name="saturating",
            group="healthy",
            stage=None,
            fault=None,
            named_by=(),
            onset=None,
            visible=0.0,
            frameworks=("verl", "trl"),
            source=(
                "Training reward and held-out score both rise and level off, the held-out more "
                "slowly and on its own scale: a run learning as it should (the real-log bank's "
                "easyr1-geo3k and verl-csv-ppo runs). Gao et al. 2022 (catalog "
                "reward-model-overoptimization) define overoptimization by a held-out score that "
                "falls after a peak, which this never does."
            ),
        ),
        Kind(
            name="rising",
            group="healthy",
            stage=None,
            fault=None,
            named_by=(),
            onset=None,
            visible=0.0,
            frameworks=("verl", "trl"),
            source=(
                "Reward and held-out still climbing when the log ends "
                "(tinker-rlvr-qwen30b-instruct in the bank): nothing binds yet."
            ),
        ),
        Kind(
            name="noisy_skipped",
            group="healthy",
            stage=None,
            fault=None,
            named_by=(),
            onset=None,
            visible=0.0,
            frameworks=("verl",),
            source=(
                "A healthy run with a small batch (noisier curves), two to four isolated gradient "
                "spikes and one step whose gradient norm was NaN or inf: verl's actor skips that "
                "update (dp_actor: 'grad_norm is not finite', zero_grad instead of step) and goes "
                "on, so it is a note, not divergence (issue 36; training-logs.md: spikes are "
                "judged against a rolling median)."
            ),
        ),
        Kind(
            name="rollout_bound",
            group="bound",
            stage="rollouts",
            fault=None,
            named_by=(),
            onset=None,
            visible=0.1,
            frameworks=("verl",),
            source=(
                "Learning is healthy but generation takes 55-85% of every synchronous step, the "
                "trainer idle meanwhile: OpenRLHF's 'about 80% of the time on sample generation' "
                "(domain-facts B13); the catalog's rollout_wait_fraction rule reads half or more "
                "as the rollouts stage."
            ),
        ),
        Kind(
            name="overoptimization",
            group="faulty",
            stage="reward",
            fault=None,
            named_by=(),
            onset=(0.35, 0.6),
            visible=0.15,
            frameworks=("verl", "trl"),
            source=(
                "The training (proxy) reward keeps rising while the held-out score peaks and then "
                "falls, in Gao et al.'s best-of-n form d(a - b d) in the proxy's progress "
                "(domain-facts A12 and 'Proxy reward keeps rising while gold or held-out reward "
                "peaks and then falls'); the KL to the reference grows faster. Onset: the peak."
            ),
        ),
        Kind(
            name="entropy_collapse",
            group="faulty",
            stage="optimization",
            fault=None,
            named_by=("zero_entropy",),
            onset=(0.1, 0.4),
            visible=0.1,
            frameworks=("verl", "trl"),
            source=(
                "Entropy falls to 1-5% of its level within a tenth of the run while reward and "
                "held-out stop improving: Cui et al. 2025 (catalog: entropy-mechanism, R = -a e^H "
                "+ b) and DAPO's clip-higher (domain-facts 'Entropy collapses early while "
                "validation plateaus'). Onset: where the fall starts."
            ),
        ),
        Kind(
            name="length_explosion",
            group="faulty",
            stage="optimization",
            fault=None,
            named_by=("length_explosion", "shift"),
            onset=(0.3, 0.6),
            visible=0.1,
            frameworks=("verl", "trl"),
            source=(
                "Responses grow 3-6x and more of them hit the length limit while reward and "
                "held-out stall: Dr. GRPO's length bias and DAPO's overlong truncation "
                "(domain-facts 'Incorrect responses grow steadily longer; truncation rates rise'). "
                "Onset: where the growth starts."
            ),
        ),
        Kind(
            name="output_collapse",
            group="faulty",
            stage="optimization",
            fault="collapse",
            named_by=("zero_entropy", "reward_collapse", "shift"),
            onset=(0.25, 0.45),
            visible=0.03,
            frameworks=("verl", "trl"),
            source=(
                "Within a few steps responses shrink to a tenth (about 100 to 10 tokens), entropy "
                "goes to about 0 (or jumps on the tiny outputs), reward and held-out fall to the "
                "floor and the gradient vanishes: the RAGEN run of issue 36 (length 100 -> 10 at "
                "step 336, entropy 1.3 -> 0.02) and the bank's verl-agent-opd-60 and -262. Onset: "
                "the collapse's first step."
            ),
        ),
        Kind(
            name="late_collapse",
            group="faulty",
            stage="optimization",
            fault="collapse",
            named_by=("zero_entropy", "reward_collapse", "shift"),
            onset=(0.55, 0.7),
            visible=0.03,
            frameworks=("verl", "trl"),
            source=(
                "The same output collapse 55-70% of the way through, the run logging on at the "
                "floor afterwards (issue 36: never named once the run has gone on)."
            ),
        ),
        Kind(
            name="nan_sustained",
            group="faulty",
            stage="optimization",
            fault="nan",
            named_by=("nan", "divergence"),
            onset=(0.3, 0.8),
            visible=0.03,
            frameworks=("verl", "trl"),
            source=(
                "From one step on the loss and gradient norm are NaN at every step: under verl "
                "every update is skipped and learning stops; under TRL the weights go NaN and the "
                "reward falls to 0. The catalog's loss_divergence reading (optimization, "
                "decisive). Onset: the first NaN step."
            ),
        ),
        Kind(
            name="too_easy",
            group="faulty",
            stage="environments",
            fault=None,
            named_by=("zero_variance",),
            onset=None,
            visible=0.1,
            frameworks=("verl", "trl"),
            source=(
                "Train solve rate 0.93-0.99 over many passes, most groups all-correct: DAPO drops "
                "such groups, ScaleRL stops re-drawing mastered prompts (domain-facts 'The share "
                "of tasks that are all-solved or never-solved rises'; the catalog's saturated and "
                "exhausted rules). Onset: where the solve rate passes 0.9."
            ),
        ),
        Kind(
            name="too_hard",
            group="faulty",
            stage="environments",
            fault=None,
            named_by=("zero_variance",),
            onset=None,
            visible=0.1,
            frameworks=("verl", "trl"),
            source=(
                "Train solve rate under 0.04 throughout, nearly every group all-wrong, a small "
                "gradient: DAPO's all-0 groups, the catalog's too_hard and beyond_reach rules (the "
                "bank's trl-tb-countdown never earns its task reward)."
            ),
        ),
    )
}


@dataclass(frozen=True)
class EvalSet:
    """A held-out benchmark as verl names it: its size and the samples a problem."""

    source: str
    problems: int
    samples: int

    @property
    def verl_name(self) -> str:
        return f"val-core/{self.source}/reward/mean@{self.samples}"


#: Real evaluation sets: AIME 2024 (30 problems; one problem is 3.3 points, domain-facts B,
#: Hochlehnert 2025), MATH-500, GSM8K's test split (1,319; domain-facts B21 gives 1K, the split
#: has 1,319) and a 100-problem in-house split.
EVAL_SETS = (
    EvalSet("aime_2024", 30, 1),
    EvalSet("aime_2024", 30, 8),
    EvalSet("HuggingFaceH4/MATH-500", 500, 1),
    EvalSet("openai/gsm8k", 1319, 1),
    EvalSet("inhouse/holdout", 100, 4),
)


@dataclass(frozen=True)
class Truth:
    """What a reader should say of a run, and from which step."""

    kind: str
    group: Group
    stage: str | None
    fault: str | None
    onset: int | None  # the first step it holds (None: a healthy run)
    visible: int | None  # the first step a check must see it at

    def at(self, step: int) -> Literal["healthy", "early", "bad"]:
        """The truth of the run as logged up to ``step``: nothing wrong yet, just begun (a
        check there is not scored), or there to be seen."""
        if self.onset is None or step < self.onset:
            return "healthy"
        return "early" if self.visible is not None and step < self.visible else "bad"


@dataclass
class PopRun:
    """One generated run: its rows as the trainer logs them, how it is written, and its truth."""

    name: str
    seed: int
    framework: str  # verl or trl
    format: str  # verl-jsonl, verl-console or wandb-csv
    steps: int
    rows: list[rl.Record]  # (global step, metrics) in the framework's names
    truth: Truth
    eval_set: EvalSet
    params: dict[str, float]

    @property
    def kind(self) -> str:
        return self.truth.kind

    @property
    def suffix(self) -> str:
        return {"verl-jsonl": ".jsonl", "verl-console": ".log", "wandb-csv": ".csv"}[self.format]

    def cut(self, share: float) -> int:
        """The global step at ``share`` of the run."""
        return max(1, round(self.steps * share))

    def _rows(self, after: int, upto: int | None) -> list[rl.Record]:
        return [r for r in self.rows if after < r[0] and (upto is None or r[0] <= upto)]

    def write(self, path: Path, upto: int | None = None) -> Path:
        """The log as it stands at step ``upto`` (the whole run by default)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(self._head())
            f.write(self._text(self._rows(-1, upto), start=0))
        return path

    def append(self, path: Path, after: int, upto: int | None = None) -> None:
        """Add the steps after ``after`` up to ``upto``, as the trainer writes them."""
        start = sum(1 for r in self.rows if r[0] <= after)
        with open(path, "a", encoding="utf-8", newline="") as f:
            f.write(self._text(self._rows(after, upto), start=start))

    def _columns(self) -> list[str]:
        cols: dict[str, None] = {}
        for _, row in self.rows:
            cols.update(dict.fromkeys(row))
        return list(cols)

    def _head(self) -> str:
        if self.format == "verl-console":
            return (
                f"(TaskRunner pid=2817) Using LocalLogger is deprecated.\n(TaskRunner pid=2817) "
                f"{{'trainer': {{'total_training_steps': {self.steps}}}}}\n"
            )
        if self.format == "wandb-csv":
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow(
                ["_step", *self._columns(), "_runtime", "_timestamp"]
            )
            return buf.getvalue()
        return ""

    def _text(self, rows: list[rl.Record], start: int) -> str:
        if self.format == "verl-jsonl":
            return "".join(json.dumps({"step": s, "data": r}) + "\n" for s, r in rows)
        if self.format == "verl-console":
            return "".join(rl.verl_console_lines(rows))
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        cols = self._columns()
        for i, (step, row) in enumerate(rows, start):
            # verl logs to W&B at its global step; TRL's Trainer lets W&B count its log calls.
            wstep = step if self.framework == "verl" else i
            w.writerow(
                [
                    wstep,
                    *[_csv_value(row[c]) if c in row else "" for c in cols],
                    round(step * self.params["step_time"], 2),
                    1.75e9 + step * self.params["step_time"],
                ]
            )
        return buf.getvalue()


def _csv_value(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if math.isinf(value) else repr(value))


# -- the model ---------------------------------------------------------------------------------


def _sig(z):
    return 1.0 / (1.0 + np.exp(-z))


class Pool:
    """Tasks with Beta-distributed solve probabilities; learning shifts every task's log-odds."""

    def __init__(self, rng: np.random.Generator, mean: float, kappa: float, size: int):
        p = np.clip(rng.beta(mean * kappa, (1 - mean) * kappa, size), 1e-4, 1 - 1e-4)
        self.z = np.log(p / (1 - p))
        self._grid = np.linspace(-12, 12, 161)
        self._means = _sig(self.z[None, :] + self._grid[:, None]).mean(axis=1)

    def shift_for(self, mean):
        """The log-odds shift that gives the pool this mean solve rate."""
        return np.interp(np.clip(mean, 1e-4, 1 - 1e-4), self._means, self._grid)

    def batches(self, rng, shift: np.ndarray, prompts: int, group: int):
        """One batch a step: the mean reward, and the share of groups whose ``group`` samples all
        scored the same (all solved or all failed)."""
        idx = rng.integers(0, self.z.size, (shift.size, prompts))
        k = rng.binomial(group, _sig(self.z[idx] + shift[:, None]))
        return k.mean(axis=1) / group, ((k == 0) | (k == group)).mean(axis=1)

    def evaluate(self, rng, shift: float, samples: int) -> float:
        """The whole set, each problem sampled ``samples`` times (mean@samples)."""
        return float(rng.binomial(samples, _sig(self.z + shift)).mean() / samples)


def _saturating(x, tau):
    return (1 - np.exp(-x / tau)) / (1 - np.exp(-1 / tau))


def _phi(z):
    return 0.5 * np.vectorize(math.erfc)(-np.asarray(z, dtype=float) / math.sqrt(2))


def _truncated(length, max_len, sigma: float = 0.6):
    """Mean logged length and share truncated when lengths are lognormal (log-sd ``sigma``)
    with mean ``length`` and cut at ``max_len`` (verl's response_length/mean and clip_ratio)."""
    mu = np.log(length) - sigma**2 / 2
    z = (np.log(max_len) - mu) / sigma
    mean = length * _phi(z - sigma) + max_len * (1 - _phi(z))
    return mean, 1 - _phi(z)


def _curves(kind: Kind, rng: np.random.Generator, steps: int, framework: str) -> dict:
    """Per-step arrays in neutral names, the evaluations, the onset step and the parameters."""
    n = steps
    t = np.arange(1, n + 1, dtype=float)
    x = t / n
    u = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    name = kind.name
    noisy = name == "noisy_skipped"
    # A small batch is what makes a run noisy; real recipes use 32-256 prompts of 4-16 samples.
    prompts = int(rng.choice([16, 32] if noisy else [32, 64, 128, 256]))
    group = int(rng.choice([4, 8, 16]))
    kappa = u(1.5, 6.0)
    onset = round(n * u(*kind.onset)) if kind.onset is not None else None
    before = t < (onset or n + 1)
    stops = name in ("entropy_collapse", "length_explosion") or (
        name == "nan_sustained" and framework == "verl"
    )  # learning stops at the onset (no exploration, no gain from length, every update skipped)

    # -- the training solve rate: healthy runs stay between 0.1 and 0.8 (the catalog's lines for
    # a pool too easy or too hard are 0.9 and 0.05)
    mu0, tau = u(0.1, 0.45), u(0.08, 0.35)
    mu1 = min(0.8, mu0 + u(0.15, 0.45))
    shape = _saturating(x, tau)
    if name == "rising":
        mu1, shape = min(0.8, mu0 + u(0.15, 0.4)), x ** u(0.7, 1.2)
    elif name == "overoptimization":
        shape = x ** u(0.8, 1.1)  # the proxy rises to the end
    elif name == "too_easy":
        mu0, mu1, kappa = u(0.8, 0.93), u(0.95, 0.99), u(1.0, 3.0)
    elif name == "too_hard":
        mu0, kappa = u(0.003, 0.02), u(0.5, 2.0)
        mu1, shape = mu0 + u(0.0, 0.015), x
    pool = Pool(rng, mu0, kappa, 2000)
    s0, s1 = pool.shift_for(mu0), pool.shift_for(mu1)
    shift = s0 + (s1 - s0) * shape
    if stops:
        shift = np.where(before, shift, shift[onset - 1])
    width = int(rng.integers(3, 11))  # a collapse takes a few steps
    ramp = np.clip((t - (onset or n + 1) + 1) / width, 0, 1)
    floor_reward = u(0.0, 0.1)
    if kind.fault == "collapse":
        shift = shift + (pool.shift_for(floor_reward) - shift) * ramp
    reward, zero = pool.batches(rng, shift, prompts, group)
    if name == "nan_sustained" and framework == "trl":  # NaN weights: every answer wrong
        reward[~before], zero[~before] = 0.0, 1.0
    if name == "too_easy":
        solved = _sig(pool.z[None, :] + shift[:, None]).mean(axis=1) >= 0.9
        onset = int(np.argmax(solved)) + 1 if solved.any() else n

    # -- the held-out set: its own problems; part of the progress transfers, more slowly
    ev = EVAL_SETS[int(rng.integers(len(EVAL_SETS)))]
    # AIME-like sets start low (R1-Zero's base: 15.6% on AIME-24, domain-facts B); others anywhere
    hold = Pool(rng, u(0.05, 0.35) if ev.problems == 30 else u(0.2, 0.75), u(1.0, 4.0), ev.problems)
    reach = min(1.5, u(0.4, 1.0) * (s1 - s0))
    if name == "too_hard":  # nothing learnt on the pool transfers to anything else either
        reach = u(0.0, 0.3)
    if name == "rising":
        h_shift = reach * x ** u(0.8, 1.3)
    elif name == "overoptimization":
        h_shift = _gao(rng, hold, ev, (shift - s0) / max(s1 - s0, 1e-9), onset)
    else:
        h_shift = reach * _saturating(x, min(1.0, tau * u(1.5, 3.0)))
    if stops:
        h_shift = np.where(before, h_shift, h_shift[onset - 1])
    if kind.fault == "collapse" or (name == "nan_sustained" and framework == "trl"):
        h_shift = h_shift - u(3.0, 6.0) * (ramp if kind.fault == "collapse" else ~before)
    eval_steps = sorted({0, *range(0, n + 1, int(rng.choice([5, 10, 20, 25]))), n})
    evals = {
        int(s): hold.evaluate(rng, float(np.interp(s, t, h_shift, left=0.0)), ev.samples)
        for s in eval_steps
    }

    # -- the other curves
    e0 = u(0.25, 1.3)
    entropy = e0 * (1 - u(0.05, 0.35) * x)
    length0 = float(np.exp(rng.uniform(np.log(120), np.log(3000))))
    length = length0 * (1 + u(-0.25, 0.35) * x)
    max_len = length0 * u(2.6, 5.0)
    kl = float(np.exp(rng.uniform(np.log(0.001), np.log(0.02)))) * x**0.7
    if name == "entropy_collapse":
        floor, span = e0 * u(0.01, 0.05), max(3.0, n * u(0.03, 0.1))
        entropy = np.where(
            before, entropy, floor + (entropy[onset - 1] - floor) * np.exp(-(t - onset) / span)
        )
    elif name == "length_explosion":
        late = np.clip((t - onset) / max(1, n - onset), 0, 1)
        grown = length[onset - 1] * (1 + (u(3.0, 6.0) - 1) * late**1.5)
        length, max_len = np.where(before, length, grown), length[onset - 1] * u(3.0, 5.0)
    elif name == "overoptimization":
        kl = kl * u(3, 10)
        if rng.random() < 0.5:  # half of them also answer at growing length
            length = length * (1 + u(0.3, 1.0) * x)
    length, truncation = _truncated(length, max_len)
    learning = np.sqrt(np.clip(1 - zero, 0.02, 1))  # uniform groups carry no gradient
    grad = float(np.exp(rng.uniform(np.log(0.05), np.log(2.0)))) * learning
    grad = grad * np.exp(rng.normal(0, u(0.1, 0.3), n))
    loss = rng.normal(0, u(0.005, 0.03), n) * learning
    if kind.fault == "collapse":
        length = length * (1 - (1 - u(0.05, 0.15)) * ramp)  # about 100 -> 10 tokens
        if rng.random() < 0.75:  # RAGEN: entropy to about 0.02
            entropy = entropy * (1 - (1 - u(0.01, 0.05)) * ramp)
        else:  # verl-agent-opd-60: entropy rises on the tiny outputs
            entropy = entropy * (1 + u(0.5, 1.0) * ramp)
        burst = (~before) & (t < onset + width)
        grad = np.where(burst, grad * u(3, 10), np.where(ramp >= 1, grad * u(0.01, 0.1), grad))
        truncation = truncation * (1 - ramp)
        kl = kl + kl.max() * u(3, 15) * ramp

    share = u(0.55, 0.85) if name == "rollout_bound" else u(0.12, 0.45)
    step_time = float(np.exp(rng.uniform(np.log(20), np.log(600))))
    passes = u(4, 20) if name == "too_easy" else u(0.3, 3.0)
    rel = 2.0 if noisy else 1.0
    gen = share * step_time * np.exp(rng.normal(0, 0.03, n))
    total = gen / share * np.exp(rng.normal(0, 0.02, n))
    total = total + np.isin(t, eval_steps) * u(0.2, 1.0) * step_time  # the timer holds validation
    curves = {
        "reward": reward,
        "entropy": entropy * np.exp(rng.normal(0, u(0.02, 0.06) * rel, n)),
        "length": length * np.exp(rng.normal(0, u(0.03, 0.08) * rel, n)),
        "truncation": np.clip(truncation * np.exp(rng.normal(0, 0.2, n)), 0, 1),
        "gen_time": gen,
        "step_time": total,
        "grad_norm": grad,
        "clip": np.abs(rng.normal(u(0.0005, 0.005), 0.0005, n)),
        "zero_std": zero,
        "pg_loss": loss,
        "kl": np.abs(kl * np.exp(rng.normal(0, 0.1, n))),
        "epoch_frac": passes * x,
    }
    if noisy:
        for k in rng.choice(np.arange(n // 10, n), int(rng.integers(2, 5)), replace=False):
            curves["grad_norm"][k] *= u(5, 15)  # isolated spikes
        bad = int(rng.integers(int(0.2 * n), int(0.97 * n)))
        curves["grad_norm"][bad - 1] = math.nan if rng.random() < 0.6 else math.inf
    if name == "nan_sustained":
        curves["pg_loss"][~before] = math.nan
        curves["grad_norm"][~before] = math.nan
        if framework == "trl":
            curves["entropy"][~before] = math.nan
    # The solve rate is the evidence of too easy and too hard; read from a [-1, 1] score it needs
    # the score's scale, which the logs do not carry, so those classes keep a 0/1 reward.
    pm1 = framework == "verl" and rng.random() < 0.3 and name not in ("too_easy", "too_hard")
    if pm1:  # a score of -1 for a wrong answer and 1 for a right one, as many verl reward functions
        curves["reward"] = 2 * curves["reward"] - 1
    params = {
        "prompts": prompts,
        "group": group,
        "kappa": kappa,
        "mu0": mu0,
        "mu1": mu1,
        "share": share,
        "step_time": step_time,
        "passes": passes,
        "length0": length0,
        "score_pm1": float(pm1),
    }
    return {"curves": curves, "evals": evals, "eval_set": ev, "onset": onset, "params": params}


def _gao(rng, hold: Pool, ev: EvalSet, progress: np.ndarray, onset: int) -> np.ndarray:
    """The held-out log-odds shift of an overoptimized run: up to a peak at ``onset``, then down.

    Gao et al.'s best-of-n form is a parabola in the distance travelled, d (a - b d): here the
    proxy's progress, rising to the peak and falling after it to ``1 - drop`` of the peak's gain.
    The drop is at least 2.5 standard errors of one evaluation (the binomial spread of the set's
    problems x samples), so the fall is there to be seen on the set this run evaluates on.
    """
    gain, drop = float(rng.uniform(0.6, 1.5)), float(rng.uniform(0.5, 1.0))
    peak = max(progress[onset - 1], 1e-6)
    w = progress / peak
    tail = max(1e-6, progress[-1] / peak - 1)
    while True:
        fall = drop * ((w - 1) / tail) ** 2
        shape = np.where(w <= 1, 1 - (1 - w) ** 2, 1 - fall)
        top, end = (float(_sig(hold.z + gain * v).mean()) for v in (1.0, 1 - drop))
        se = math.sqrt(max(top * (1 - top), 1e-4) / (ev.problems * ev.samples))
        if top - end >= 2.5 * se or drop > 3:
            return gain * shape
        drop *= 1.25


# -- names as the frameworks log them ----------------------------------------------------------

#: TRL's GRPOTrainer logs these (trl/trainer/grpo_trainer.py, "Logged metrics"); transformers'
#: W&B callback prefixes them with ``train/`` (integration_utils.rewrite_logs).
TRL_NAMES = {
    "reward": "train/reward",
    "entropy": "train/entropy",
    "length": "train/completions/mean_length",
    "truncation": "train/completions/clipped_ratio",
    "grad_norm": "train/grad_norm",
    "clip": "train/clip_ratio/region_mean",
    "zero_std": "train/frac_reward_zero_std",
    "pg_loss": "train/loss",
    "kl": "train/kl",
}


def _verl_rows(c: dict, steps: int) -> list[rl.Record]:
    curves, evals, ev = c["curves"], c["evals"], c["eval_set"]
    neutral: list[rl.Record] = [(0, {"heldout": evals[0]})]
    for i in range(steps):
        row = {k: float(v[i]) for k, v in curves.items() if k != "zero_std"}
        row["kl_coef"], row["lr"] = 0.001, 1e-6
        row["throughput"] = float(1500 * c["params"]["length0"] / 1000)
        if i + 1 in evals:
            row["heldout"] = evals[i + 1]
        neutral.append((i + 1, row))
    out = []
    for step, row in rl.named(neutral, "verl"):
        name = rl.NAMES["verl"]["heldout"]
        if name in row:
            row[ev.verl_name] = row.pop(name)
        out.append((step, row))
    return out


def _trl_rows(c: dict, steps: int, rng: np.random.Generator) -> list[rl.Record]:
    """TRL logs the mean of each metric over ``logging_steps`` steps, and its evaluations apart."""
    curves, evals = c["curves"], c["evals"]
    every = int(rng.choice([1, 5, 10]))
    names = dict(TRL_NAMES)
    if rng.random() < 0.5:  # TRL logs the KL only when beta != 0, and its default beta is 0
        names.pop("kl")
    out: list[rl.Record] = []
    for end in range(every, steps + 1, every):
        window = slice(end - every, end)
        row = {}
        for key, name in names.items():
            part = curves[key][window]
            row[name] = float(np.mean(part))  # a NaN in the window makes the mean NaN, as torch
        row["train/learning_rate"] = 1e-6
        row["train/epoch"] = round(float(curves["epoch_frac"][end - 1]), 4)
        row["train/global_step"] = float(end)
        out.append((end, row))
        if end in evals:
            out.append(
                (
                    end,
                    {
                        "eval/reward": evals[end],
                        "train/epoch": row["train/epoch"],
                        "train/global_step": float(end),
                    },
                )
            )
    return out


def make_run(kind: str, index: int, seed: int) -> PopRun:
    """Run ``index`` of class ``kind`` for ``seed``: the same arguments give the same run."""
    spec = CLASSES[kind]
    order = list(CLASSES).index(kind)
    rng = np.random.default_rng([seed, order, index])
    framework = str(rng.choice(spec.frameworks)) if len(spec.frameworks) > 1 else spec.frameworks[0]
    if framework == "trl" and rng.random() < 0.5 and kind not in ("too_easy", "too_hard"):
        framework = "verl"  # TRL runs are a quarter of most classes, half where zero_std matters
    fmt = "wandb-csv" if framework == "trl" else FORMATS[int(rng.integers(len(FORMATS)))]
    steps = int(rng.integers(150, 401))
    c = _curves(spec, rng, steps, framework)
    rows = _verl_rows(c, steps) if framework == "verl" else _trl_rows(c, steps, rng)
    onset = c["onset"]
    if spec.group == "bound" or kind == "too_hard":
        onset = 1
    visible = None
    if onset is not None:
        visible = min(steps, onset + max(3, round(spec.visible * steps)))
    truth = Truth(kind, spec.group, spec.stage, spec.fault, onset, visible)
    return PopRun(
        name=f"{kind}-{index:02d}",
        seed=seed,
        framework=framework,
        format=fmt,
        steps=steps,
        rows=rows,
        truth=truth,
        eval_set=c["eval_set"],
        params=c["params"],
    )


def population(seed: int, per_class: int = PER_CLASS) -> list[PopRun]:
    """Every class's ``per_class`` runs for ``seed``, class by class."""
    return [make_run(kind, i, seed) for kind in CLASSES for i in range(per_class)]
