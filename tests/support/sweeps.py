"""Runs written where a tracker keeps them, by the tracker's own SDK in a fresh Python, as a
training job would: an MLflow experiment (one ``train/reward`` curve a run, with its end status)
and a Trackio project (one ``train/reward`` curve a run)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from support import python_says

MLFLOW = """
    import json, mlflow
    from mlflow.entities import Metric
    experiment, runs = json.loads(ARGS)
    client = mlflow.MlflowClient()
    exp = client.create_experiment(experiment)
    for name, points, status in runs:
        run = client.create_run(exp, run_name=name).info.run_id
        batch = [Metric("train/reward", v, 0, s) for s, v in points]
        client.log_batch(run, metrics=batch)
        client.set_terminated(run, status=status)
    print("OUT=ok")
"""

TRACKIO = """
    import json, trackio
    project, runs = json.loads(ARGS)
    for name, points in runs:
        trackio.init(project=project, name=name)
        for s, v in points:
            trackio.log({"train/reward": v}, step=s)
        trackio.finish()
    print("OUT=ok")
"""


def _with(script: str, args: list) -> str:
    return textwrap.dedent(script).replace(
        "json.loads(ARGS)", f"json.loads({json.dumps(json.dumps(args))})"
    )


def mlflow_experiment(uri: str, experiment: str, runs: list) -> str:
    """``runs``: (name, [(step, value), ...], status) each, status FINISHED, FAILED, ..."""
    return python_says(_with(MLFLOW, [experiment, runs]), {"MLFLOW_TRACKING_URI": uri})


def trackio_project(trackio_dir: Path, project: str, runs: list) -> str:
    """``runs``: (name, [(step, value), ...]) each, logged in this order."""
    env = {"TRACKIO_DIR": str(trackio_dir), "HF_HUB_OFFLINE": "1"}
    return python_says(_with(TRACKIO, [project, runs]), env)
