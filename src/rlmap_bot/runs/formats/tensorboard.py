"""TensorBoard event files, read with the ``tensorboard`` package (no TensorFlow).

Why not ``EventAccumulator``: it keeps every point of every tag as Python
objects (with ``size_guidance={"scalars": 0}``; by default it samples 10,000 a
tag), so memory grows with the whole log.  We use ``RawEventFileLoader`` from the
same package, the record reader ``EventAccumulator`` itself sits on (it checks
each record's CRC), and parse each ``Event`` with the package's own protobuf
classes.  Events stream past once and only tags that map to a signal are kept.
Both the TF1 ``simple_value`` and the TF2 scalar ``tensor`` encodings are read.
"""

from __future__ import annotations

import logging
from pathlib import Path

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import Collector

EVENT_MARK = "tfevents"


def event_files(run_dir: Path) -> list[Path]:
    """The event files directly in ``run_dir``, oldest first (the name carries the start time)."""
    return sorted((p for p in run_dir.iterdir() if EVENT_MARK in p.name and p.is_file()),
                  key=lambda p: (_start_time(p), p.name))


def _start_time(path: Path) -> float:
    parts = path.name.split(".")
    try:
        return float(parts[3])  # events.out.tfevents.<time>.<host>...
    except (IndexError, ValueError):
        return 0.0


def read_event_files(files: list[Path], c: Collector) -> int:
    """Feed every scalar of the given files; returns bytes in them."""
    logging.getLogger("tensorboard").setLevel(logging.ERROR)  # no "TensorFlow not found" chatter
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2
    from tensorboard.util import tensor_util

    total = 0
    for path in files:
        total += path.stat().st_size
        try:
            for record in RawEventFileLoader(str(path)).Load():
                event = event_pb2.Event.FromString(record)
                if not event.HasField("summary"):
                    continue
                c.records += 1
                step = int(event.step)
                for value in event.summary.value:
                    if not c.wants(value.tag):
                        continue
                    kind = value.WhichOneof("value")
                    if kind == "simple_value":
                        c.add(value.tag, step, float(value.simple_value))
                    elif kind == "tensor":
                        array = tensor_util.make_ndarray(value.tensor)
                        if array.size == 1 and array.dtype.kind in "fiu":
                            c.add(value.tag, step, float(array.reshape(-1)[0]))
        except Exception as exc:  # noqa: BLE001 - the record reader raises its own types on corrupt data
            if c.records == 0:
                raise RunReadError(f"{path}: not a readable TensorBoard event file ({type(exc).__name__})") from None
            c.warnings.append(f"{path.name}: stopped at a corrupt record ({type(exc).__name__}); earlier events kept")
    return total
