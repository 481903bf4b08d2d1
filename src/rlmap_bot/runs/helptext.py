"""What the help of ``diagnose --run`` says about logs before any is read: the formats it
reads, what it looks for, the recent window.  Kept free of heavy imports: the command line
builds its help from these."""

from __future__ import annotations

FORMATS = (
    "verl-console",
    "verl-jsonl",
    "trl-state",
    "wandb-csv",
    "wandb-json",
    "tensorboard",
    "mlflow-db",
    "mlflow-files",
    "csv",
    "jsonl",
)
LOOKED_FOR = (
    'verl console (step:N - key:value), verl JSONL ({"step", "data"}), TRL trainer_state.json, '
    "W&B CSV/JSON export (_step), TensorBoard events, MLflow (mlflow.db or mlruns/), "
    "CSV or JSONL with a step column"
)

# The default recent window is the deriver's: the last 25% of logged points, at least 20
# (runs/stats.py, RECENT_SHARE and RECENT_MIN).
WINDOW_HELP = (
    "the recent window trends are judged on: N steps, or a share like 25% (default: the last 25% "
    "of logged points, at least 20)"
)
