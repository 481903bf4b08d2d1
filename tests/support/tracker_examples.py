"""The user guide's examples of `compare` over a tracker's project, group or experiment, run for
real and printed as the guide shows them:

    .venv/bin/python tests/support/tracker_examples.py

The runs are generated ScaleRL sigmoids (``scalingcurves``) with known ceilings, written where
the trackers keep them: the W&B API stand-in (the real wandb client reads it), an MLflow store
written by MLflow's own client, and a project written by the trackio SDK. Needs the test extras
(wandb, mlflow, trackio)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script, this folder would come first on the path and its http.py would hide the
# standard library's http package: the tests folder takes its place.
sys.path[0] = str(HERE.parent)

from support.scalingcurves import Truth, run  # noqa: E402
from support.sweeps import mlflow_experiment, trackio_project  # noqa: E402
from support.wandb_standin import WandbStandIn  # noqa: E402

KEY = "wandbkey" + "0123456789abcdef" * 2
STEPS = 200


def curve(ceiling: float, c_mid: float, seed: int) -> list[tuple[int, float]]:
    x, y = run(Truth(ceiling, 1.5, c_mid), STEPS, noise=0.02, seed=seed)
    return [(int(s), round(float(v), 5)) for s, v in zip(x, y, strict=True)]


#: A learning-rate sweep in one W&B project: three runs in the group lr-sweep (one crashed) and
#: one outside it. Name, run id, ceiling, midpoint step, state, group.
WANDB_RUNS = [
    ("grpo-lr1e-6", "x0k2m0", 0.62, 60, "finished", "lr-sweep"),
    ("grpo-lr3e-6", "x1k2m1", 0.74, 40, "finished", "lr-sweep"),
    ("grpo-lr5e-6", "x2k2m2", 0.70, 30, "crashed", "lr-sweep"),
    ("grpo-lr2e-6", "x3k2m3", 0.70, 50, "finished", None),
]


def show(args: list[str], env: dict[str, str]) -> None:
    exe = str(Path(sys.executable).with_name("rlmap-bot"))
    done = subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=300)
    print(f"$ rlmap-bot {' '.join(args)}")
    print((done.stdout + done.stderr).rstrip())
    print()


def main() -> None:
    server = WandbStandIn(KEY, entity="my-team").start()
    try:
        for day, (name, run_id, ceiling, c_mid, state, group) in enumerate(WANDB_RUNS):
            rows = [{"_step": s, "train/reward": v} for s, v in curve(ceiling, c_mid, seed=day)]
            created = f"2026-01-{day + 1:02d}T00:00:00"
            server.add_run(
                "grpo", run_id, rows, state=state, group=group, name=name, created=created
            )
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            env = {**os.environ, "WANDB_API_KEY": KEY, "WANDB_BASE_URL": server.origin}
            for name in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR"):
                env[name] = str(folder / name.lower())
            mlflow_runs = [
                ("kl-0.01", curve(0.60, 45, 11), "FINISHED"),
                ("kl-0.001", curve(0.66, 45, 12), "FINISHED"),
                ("kl-0.1", curve(0.40, 45, 13), "FAILED"),
            ]
            env["MLFLOW_TRACKING_URI"] = f"sqlite:///{folder}/mlflow.db"
            mlflow_experiment(env["MLFLOW_TRACKING_URI"], "grpo-kl", mlflow_runs)
            trackio_runs = [("seed-1", curve(0.70, 45, 21)), ("seed-2", curve(0.70, 80, 22))]
            env["TRACKIO_DIR"] = str(folder / "trackio")
            trackio_project(folder / "trackio", "grpo-seeds", trackio_runs)
            show(["compare", "wandb:my-team/grpo"], env)
            show(["compare", "wandb:my-team/grpo/group:lr-sweep"], env)
            show(["compare", "mlflow:experiment:grpo-kl"], env)
            show(["compare", "trackio:grpo-seeds"], env)
            show(["forecast", "wandb:my-team/grpo"], env)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
