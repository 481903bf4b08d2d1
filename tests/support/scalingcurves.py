"""Generated runs with a known ceiling and efficiency, for the scaling tests: ScaleRL's sigmoid
(``r0 + (a - r0) / (1 + (c_mid / step) ** b)``) plus Gaussian noise, written as plain JSONL logs
when a command should read them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Truth:
    a: float
    b: float
    c_mid: float
    r0: float = 0.1

    def __call__(self, x):
        x = np.asarray(x, dtype=float)
        return self.r0 + (self.a - self.r0) / (1 + (self.c_mid / np.maximum(x, 1e-9)) ** self.b)


def run(truth: Truth, steps: int, noise: float = 0.02, seed: int = 0):
    """Steps 1..steps and the noisy metric."""
    rng = np.random.default_rng(seed)
    x = np.arange(1, steps + 1, dtype=float)
    return x, truth(x) + rng.normal(0.0, noise, x.size)


def write_log(path: Path, x, y, heldout_every: int = 0, step_seconds: float | None = None) -> Path:
    """A TRL-style JSONL log: ``reward`` every step (and ``eval_reward`` every ``heldout_every``
    steps, ``step_time`` when given)."""
    with path.open("w", encoding="utf-8") as f:
        for step, value in zip(x, y, strict=False):
            row = {"step": int(step), "reward": float(value), "loss": 0.1, "grad_norm": 1.0}
            if step_seconds is not None:
                row["step_time"] = step_seconds
            f.write(json.dumps(row) + "\n")
    return path
