"""Write a run with a tracker's own SDK, for benchmarks/watch_sources.py.  Not part of the tests.

    python benchmarks/tracker_writer.py KIND DIR

KIND is wandb, mlflow, trackio or tensorboard; DIR the folder the run is written in (the W&B
``WANDB_DIR``, the MLflow SQLite store's folder, ``TRACKIO_DIR``, the TensorBoard log folder).
Commands come one a line on stdin, and each is answered ``ok`` on stdout once what it wrote is on
disk (the run finished, the batch committed, the writer flushed):

    log START COUNT   steps START .. START+COUNT-1 (a new run at START 0, a resumed one after)
    quit

The environment (``WANDB_MODE=offline``, ``MLFLOW_TRACKING_URI``, ``TRACKIO_DIR``) is set by the
caller.  Every run logs the same four verl metrics a step (:func:`row`), one SDK call a step
(W&B, Trackio), 250 steps a ``log_batch`` (MLflow's limit is 1,000 metrics a batch), one event a
step (TensorBoard).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

RUN = "bench1"  # the run's id (W&B), name (Trackio, MLflow)
PROJECT = "bench"


def row(step: int) -> dict[str, float]:
    """A healthy run's four metrics at ``step`` (the alias table reads each of them)."""
    phase = (step % 1000) / 1000
    return {
        "critic/score/mean": 0.4 + 0.3 * phase,
        "response_length/mean": 300.0 + step % 7,
        "actor/grad_norm": 0.3 + 0.01 * (step % 3),
        "actor/entropy": 0.5 - 0.1 * phase,
    }


class Wandb:
    """The wandb SDK offline: one run id, each ``log`` command a run started or resumed, then
    finished (the only way the SDK says everything is written)."""

    def __init__(self, folder: Path):
        import wandb

        self.wandb = wandb
        self.started = 0.0

    def log(self, start: int, count: int) -> None:
        # A run folder's name carries its start second: a resume starts in a later second.
        while int(time.time()) == int(self.started):
            time.sleep(0.05)
        self.started = time.time()
        run = self.wandb.init(project=PROJECT, id=RUN, resume="allow")
        for step in range(start, start + count):
            run.log(row(step), step=step)
        run.finish()


class Mlflow:
    """MLflow's client over the SQLite store ``MLFLOW_TRACKING_URI`` names."""

    def __init__(self, folder: Path):
        import mlflow

        self.client = mlflow.MlflowClient()
        self.id_file = folder / "run_id"
        if self.id_file.exists():
            self.run_id = self.id_file.read_text().strip()
        else:
            experiment = self.client.create_experiment(PROJECT)
            self.run_id = self.client.create_run(experiment, run_name=RUN).info.run_id
            self.id_file.write_text(self.run_id)

    def log(self, start: int, count: int) -> None:
        from mlflow.entities import Metric

        stamp = int(time.time() * 1000)
        batch: list[Metric] = []
        for step in range(start, start + count):
            batch += [Metric(k, v, stamp + step, step) for k, v in row(step).items()]
            if len(batch) >= 1000:
                self.client.log_batch(self.run_id, metrics=batch)
                batch = []
        if batch:
            self.client.log_batch(self.run_id, metrics=batch)


class Trackio:
    """The trackio SDK over its local store (``TRACKIO_DIR``); a run resumed by its name."""

    def __init__(self, folder: Path):
        import trackio

        self.trackio = trackio
        self.first = not any(folder.glob("*.db"))

    def log(self, start: int, count: int) -> None:
        self.trackio.init(project=PROJECT, name=RUN, resume="never" if self.first else "must")
        self.first = False
        for step in range(start, start + count):
            self.trackio.log(row(step), step=step)
        self.trackio.finish()


class Tensorboard:
    """tensorboard's own record writer, one event file a run, appended to as a live writer does."""

    def __init__(self, folder: Path):
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.make = EventFileWriter

    def log(self, start: int, count: int) -> None:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.summary.writer.record_writer import RecordWriter

        files = sorted(self.folder.glob("events.out.tfevents.*"))
        writer = None if files else self.make(str(self.folder))
        # The run's event file grows, as it does while its writer is open: appended to with
        # tensorboard's own record writer (EventFileWriter always starts a new file).
        f = open(files[-1], "ab") if files else None
        records = RecordWriter(f) if f is not None else None
        for step in range(start, start + count):
            values = [
                summary_pb2.Summary.Value(tag=k, simple_value=v) for k, v in row(step).items()
            ]
            event = event_pb2.Event(
                step=step, wall_time=1.7e9 + step, summary=summary_pb2.Summary(value=values)
            )
            if writer is not None:
                writer.add_event(event)
            elif records is not None:
                records.write(event.SerializeToString())
        if writer is not None:
            writer.close()
        if f is not None:
            f.close()


WRITERS = {"wandb": Wandb, "mlflow": Mlflow, "trackio": Trackio, "tensorboard": Tensorboard}


def main(argv: list[str]) -> int:
    kind, folder = argv[0], Path(argv[1])
    writer = WRITERS[kind](folder)
    print("ok", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        writer.log(int(words[1]), int(words[2]))
        print("ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
