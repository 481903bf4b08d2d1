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
import struct
from pathlib import Path

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import Collector

EVENT_MARK = "tfevents"


def event_files(run_dir: Path) -> list[Path]:
    """The event files directly in ``run_dir``, oldest first (the name carries the start time)."""
    return sorted(
        (p for p in run_dir.iterdir() if EVENT_MARK in p.name and p.is_file()),
        key=lambda p: (_start_time(p), p.name),
    )


def _start_time(path: Path) -> float:
    parts = path.name.split(".")
    try:
        return float(parts[3])  # events.out.tfevents.<time>.<host>...
    except (IndexError, ValueError):
        return 0.0


def _feed(record: bytes, c: Collector) -> None:
    """One serialized ``Event``: its scalar summaries into the collector."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.util import tensor_util

    event = event_pb2.Event.FromString(record)
    if not event.HasField("summary"):
        return
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


def read_event_files(files: list[Path], c: Collector) -> int:
    """Feed every scalar of the given files; returns bytes in them."""
    logging.getLogger("tensorboard").setLevel(logging.ERROR)  # no "TensorFlow not found" chatter
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader

    total = 0
    for path in files:
        total += path.stat().st_size
        try:
            for record in RawEventFileLoader(str(path)).Load():
                _feed(record, c)
        except Exception as exc:  # noqa: BLE001 - the record reader raises its own types on corrupt data
            if c.records == 0:
                raise RunReadError(
                    f"{path}: not a readable TensorBoard event file ({type(exc).__name__})"
                ) from None
            c.warnings.append(
                f"{path.name}: stopped at a corrupt record ({type(exc).__name__}); earlier events "
                f"kept"
            )
    return total


#: A TFRecord frame: an 8-byte length and its 4-byte masked CRC-32C, the data, its 4-byte CRC.
_FRAME_HEAD, _FRAME_TAIL = 12, 4


def read_event_file_from(path: Path, offset: int, c: Collector) -> tuple[int, int]:
    """Feed the whole records of one event file from byte ``offset``.

    Returns (the offset after the last whole record, bytes read).  A record still being
    written is left for the next call.  The package's own record reader cannot start at an
    offset (its compat reader refuses ``start_offset``), so the frames are walked here, checked
    with the package's ``masked_crc32c``; a record whose data fails its check is skipped with a
    warning, a frame whose length fails its check ends the read (nothing after it can be framed).
    """
    logging.getLogger("tensorboard").setLevel(logging.ERROR)
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    nread = 0
    with open(path, "rb") as f:
        f.seek(offset)
        while True:
            head = f.read(_FRAME_HEAD)
            nread += len(head)
            if len(head) < _FRAME_HEAD:
                return offset, nread
            (length,) = struct.unpack("<Q", head[:8])
            if masked_crc32c(head[:8]) != struct.unpack("<I", head[8:])[0]:
                c.warnings.append(
                    f"{path.name}: a corrupt record frame at byte {offset}; the rest of the file "
                    f"is not read"
                )
                return offset, nread
            body = f.read(length + _FRAME_TAIL)
            nread += len(body)
            if len(body) < length + _FRAME_TAIL:
                return offset, nread  # still being written
            data = body[:length]
            offset += _FRAME_HEAD + length + _FRAME_TAIL
            if masked_crc32c(data) != struct.unpack("<I", body[length:])[0]:
                c.warnings.append(f"{path.name}: a record failed its checksum and was skipped")
                continue
            try:
                _feed(data, c)
            except Exception as exc:  # noqa: BLE001 - protobuf raises its own DecodeError types
                c.warnings.append(
                    f"{path.name}: an undecodable event was skipped ({type(exc).__name__})"
                )
