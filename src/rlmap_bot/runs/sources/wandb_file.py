"""A local W&B run read from its transaction log, ``run-<id>.wandb``, without the wandb package.

While a run goes, the transaction log is the only copy of its history on disk
(``wandb-summary.json`` holds the last values only, written at the end).  Its layout, as the
W&B SDK writes it (``core/pkg/leveldb`` and ``core/internal/transactionlog`` in wandb's source):

- a 7-byte file header: ``:W&B``, the magic 0xBEE1 (little-endian), a version byte;
- then LevelDB's log format: 32 KiB blocks (the first one 7 bytes short) of chunks, each with a
  7-byte header (a little-endian CRC, a 2-byte length, a type: 1 full, 2 first, 3 middle,
  4 last) and its payload; a block's tail shorter than a header is zero padding;
- the CRC covers the type byte and the payload.  The SDK writes it as CRC-32 (IEEE, ``zlib``),
  not LevelDB's masked CRC-32C; both its writers and its reader use IEEE;
- each record is a protobuf ``Record`` (``wandb/proto/wandb_internal.proto``): field 2 is a
  ``HistoryRecord`` (repeated ``HistoryItem`` items = 1, a ``HistoryStep`` = 2 whose field 1 is
  the step), an item is ``key`` = 1 or ``nested_key`` = 2 (repeated) and ``value_json`` = 16;
  field 17 is the ``RunRecord`` (``run_id`` = 1).

Only those few fields are read, by a minimal protobuf wire-format decoder below (the wandb
package is not needed at run time, and offers no supported reader of this file).

A run still writing leaves a half-written last record: reading stops before it, and the cursor
(a byte offset at a record boundary, per folder) resumes there.  A chunk whose CRC fails is
skipped with the rest of its block, with a warning (LevelDB's own recovery).  ``_step`` is the
step; a step logged again keeps its latest value.

A run folder is any folder holding ``run-<id>.wandb``, whatever its name: ``scp -r`` and archives
copy the ``latest-run`` link as a folder, and people rename folders.  A resumed run is several
sibling folders holding the same ``run-<id>.wandb``, read in order of the start time in their
names (``offline-run-<time>-<id>``, with ``-1``, ``-2`` added by the SDK when the name is taken),
else of their log's last write; two folders holding copies of one log are read once.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import struct
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from rlmap_bot import wording
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import Collector, RunData, to_float
from rlmap_bot.runs.sources import Cursor, SourceRef

BLOCK = 32 * 1024
CHUNK_HEADER = 7
FILE_HEADER = b":W&B" + struct.pack("<H", 0xBEE1)
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
#: ``run-20250101_120000-abc123`` or ``offline-run-...``, maybe with ``-1``: the start time, then
#: the run id and that suffix (told apart by the run id of the log inside).
RUN_FOLDER = re.compile(r"^(?:offline-)?run-(\d{8}_\d{6})-(.+)$")
#: Bytes compared to tell a copy of a log from another log of the same run: a log opens with the
#: run's record (its id and start time), so two logs with the same first 64 KiB are one log.
SAME_HEAD = 64 * 1024
FORMAT = "wandb-run"


@dataclass(frozen=True)
class WandbRun:
    """A run's folders under one ``wandb/`` folder:
    its id and its transaction logs, oldest first.
    """

    root: Path
    run_id: str
    files: tuple[Path, ...]


def _log_of(folder: Path) -> Path | None:
    logs = sorted(folder.glob("run-*.wandb"))
    return logs[0] if logs else None


def run_id_of(log: Path) -> str:
    return log.stem.removeprefix("run-")


def _started(folder: Path, run_id: str, log: Path) -> tuple[str, int, int, str]:
    """When a folder of a run began: the start time in its name and the SDK's suffix, or for a
    folder named otherwise (a copy, a rename) its log's last write, after named ones."""
    m = RUN_FOLDER.match(folder.name)
    rest = m.group(2) if m else ""
    if m and (
        rest == run_id or rest.startswith(f"{run_id}-") and rest[len(run_id) + 1 :].isdigit()
    ):
        return m.group(1), 0, int(rest[len(run_id) + 1 :] or 0), folder.name
    stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(log.stat().st_mtime))
    return stamp, 1, 0, folder.name


def _head(log: Path) -> bytes:
    with open(log, "rb") as f:
        return f.read(SAME_HEAD)


def run_files(root: Path, run_id: str) -> tuple[Path, ...]:
    """Every transaction log of ``run_id`` in the folders under ``root``, oldest first; of
    several copies of one log (same head), the longest."""
    found: dict[bytes, tuple[tuple, Path]] = {}
    for child in root.iterdir() if root.is_dir() else ():
        log = child / f"run-{run_id}.wandb"
        if child.is_symlink() or not child.is_dir() or not log.is_file():
            continue
        try:
            key, size = _head(log), log.stat().st_size
        except OSError:
            continue
        kept = found.get(key)
        if kept is None or size > kept[1].stat().st_size:
            found[key] = (_started(child, run_id, log), log)
    return tuple(log for _, log in sorted(found.values()))


def locate(path: Path) -> WandbRun | None:
    """The W&B run ``path`` names, or None when it is no W&B run folder (the file readers take it).

    A ``.wandb`` file, a folder holding one (a run folder, whatever its name), or the ``wandb/``
    folder above run folders: its ``latest-run``, else its newest run folder.
    """
    if path.is_file() and path.suffix == ".wandb":
        folder, run_id = path.parent.resolve(), run_id_of(path)
        return WandbRun(folder.parent, run_id, run_files(folder.parent, run_id) or (path,))
    if not path.is_dir():
        return None
    folder = path.resolve()
    log = _log_of(folder)
    if log is not None:
        run_id = run_id_of(log)
        return WandbRun(folder.parent, run_id, run_files(folder.parent, run_id) or (log,))
    latest = folder / "latest-run"
    if latest.is_dir() and (found := locate(latest)) is not None:
        return found
    runs = sorted(
        (_started(child, run_id_of(log), log), run_id_of(log))
        for child in folder.iterdir()
        if child.is_dir() and not child.is_symlink() and (log := _log_of(child)) is not None
    )
    if runs:
        return WandbRun(folder, runs[-1][1], run_files(folder, runs[-1][1]))
    return None


# -- protobuf wire format (https://protobuf.dev/programming-guides/encoding/) -------------------


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    b = buf[i] if i < len(buf) else 0x80
    if b < 0x80:  # one byte: most tags and lengths
        return b, i + 1
    value = shift = 0
    while True:
        if i >= len(buf):
            raise ValueError("varint runs past the message")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _skip(buf: bytes, i: int, wire: int) -> int:
    """The position after a field's value of wire type ``wire`` starting at ``i``."""
    if wire == 0:
        return _varint(buf, i)[1]
    if wire == 2:
        size, i = _varint(buf, i)
        return i + size
    if wire == 1:
        return i + 8
    if wire == 5:
        return i + 4
    raise ValueError(f"wire type {wire} is not used by proto3")


def fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of a message: an int for varint and fixed fields, bytes for
    length-delimited ones.  ValueError on a malformed message."""
    i, end = 0, len(buf)
    while i < end:
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield number, value
        elif wire == 2:
            size, i = _varint(buf, i)
            if i + size > end:
                raise ValueError("a field runs past the message")
            yield number, buf[i : i + size]
            i += size
        elif wire == 1:
            yield number, int.from_bytes(buf[i : i + 8], "little")
            i += 8
        elif wire == 5:
            yield number, int.from_bytes(buf[i : i + 4], "little")
            i += 4
        else:
            raise ValueError(f"wire type {wire} is not used by proto3")


# -- the log ----------------------------------------------------------------------------------


@dataclass
class LogRead:
    """Records of one transaction log from an offset, and where the next read starts."""

    records: list[bytes]
    offset: int
    bytes_read: int
    corrupt: int = 0


def read_records(path: Path, offset: int = 0) -> LogRead:
    """Whole records from ``offset`` (0: the file's start, header checked) to the last whole one.

    The file is memory-mapped (``mmap``): only the pages from ``offset`` on are touched.
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size <= max(offset, CHUNK_HEADER - 1):
                return LogRead([], offset, 0)  # nothing new (or not even the header yet)
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return _walk(path, buf, size, offset)
    except OSError as exc:
        raise RunReadError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _walk(path: Path, buf: mmap.mmap, size: int, offset: int) -> LogRead:
    if offset == 0:
        if buf[:6] != FILE_HEADER:
            raise RunReadError(f"{path}: not a W&B transaction log (no ':W&B' header)")
        offset = CHUNK_HEADER
    out = LogRead([], offset, 0)
    parts: list[bytes] = []
    pos = record_start = offset
    while True:
        block_end = pos - pos % BLOCK + BLOCK
        if block_end - pos < CHUNK_HEADER:
            pos = block_end  # a block's tail too short for a chunk header is zero padding
            continue
        if pos + CHUNK_HEADER > size:
            break
        crc, length, kind = struct.unpack_from("<IHB", buf, pos)
        if crc == 0 and length == 0 and kind == 0:
            if size > block_end:  # the rest of a finished block is zeros
                pos = block_end
                continue
            break  # the writer has not got further
        end = pos + CHUNK_HEADER + length
        if end > block_end or kind not in (FULL, FIRST, MIDDLE, LAST):
            ok = False
        elif end > size:
            break  # half-written: the next read starts again at its record's first chunk
        else:
            data = buf[pos + CHUNK_HEADER : end]
            ok = zlib.crc32(data, zlib.crc32(bytes((kind,)))) == crc
        if not ok:  # a corrupt chunk: skip the rest of its block, and the record it was part of
            out.corrupt += 1
            parts, pos = [], block_end
            record_start = pos
            continue
        if kind == FULL:
            out.records.append(data)
            parts = []
        elif kind == FIRST:
            parts = [data]
            record_start = pos
        elif parts:
            parts.append(data)
            if kind == LAST:
                out.records.append(b"".join(parts))
                parts = []
        pos = end
        if not parts:
            record_start = pos
    out.offset = record_start
    out.bytes_read = max(0, min(pos, size) - offset)
    return out


_ITEM, _STEP, _KEY, _NESTED, _VALUE = (
    0x0A,
    0x12,
    0x0A,
    0x12,
    (0x82, 0x01),
)  # tags: field << 3 | wire 2


def history(record: bytes) -> tuple[int | None, list[tuple[str, bytes]]] | None:
    """A history record's step and (key, value_json) items; None for any other record.

    The tags of the fields read are matched as bytes (a history is most of a run's records, with
    tens of items each); any other field is skipped by its wire type.
    """
    body = None
    for number, value in fields(record):
        if number == 2 and isinstance(value, bytes):
            body = value
            break
    if body is None:
        return None
    step: int | None = None
    items: list[tuple[str, bytes]] = []
    i, end = 0, len(body)
    while i < end:
        tag = body[i]
        if tag == _ITEM or tag == _STEP:
            size, j = _varint(body, i + 1)
            if j + size > end:
                raise ValueError("a field runs past the message")
            if tag == _ITEM:
                items.append(list_item(body, j, j + size))
            else:
                for n, v in fields(body[j : j + size]):
                    if n == 1 and isinstance(v, int):
                        step = v
            i = j + size
        else:
            key, i = _varint(body, i)
            i = _skip(body, i, key & 7)
    return step, items


def list_item(buf: bytes, i: int, end: int) -> tuple[str, bytes]:
    key = b""
    nested: list[str] = []
    raw = b""
    while i < end:
        tag = buf[i]
        if tag == _KEY or tag == _NESTED:
            size, j = _varint(buf, i + 1)
            if tag == _KEY:
                key = buf[j : j + size]
            else:
                nested.append(buf[j : j + size].decode("utf-8", "replace"))
            i = j + size
        elif tag == _VALUE[0] and i + 1 < end and buf[i + 1] == _VALUE[1]:
            size, j = _varint(buf, i + 2)
            raw = buf[j : j + size]
            i = j + size
        else:
            field, i = _varint(buf, i)
            i = _skip(buf, i, field & 7)
    if i > end:
        raise ValueError("a field runs past the message")
    return (key.decode("utf-8", "replace") if key else "/".join(nested)), raw


def _flat(name: str, value: object) -> Iterator[tuple[str, float]]:
    if isinstance(value, dict):
        if "_type" in value:  # media, histograms, tables: not scalars
            return
        for key, inner in value.items():
            yield from _flat(f"{name}/{key}", inner)
        return
    number = to_float(value)
    if number is not None:
        yield name, number


def feed(record: bytes, c: Collector) -> bool:
    """One record into the collector; True when it was a history record."""
    try:
        found = history(record)
    except ValueError:
        c.skipped += 1
        return False
    if found is None:
        return False
    step, items = found
    for key, raw in items:
        if key == "_step":
            number = to_float(_json(raw))
            if number is not None:
                step = int(number)
    if step is None:
        c.skipped += 1
        return False
    c.records += 1
    for key, raw in items:
        if not key or key.startswith("_"):
            continue
        value = None
        if c.wants(key):
            value = _json(raw)
        elif raw[:1] == b"{":  # a nested dict logged as one item: its inner names may be kept
            value = _json(raw)
            if not isinstance(value, dict):
                continue
        else:
            continue
        for name, number in _flat(key, value):
            if name == key or c.wants(name):
                c.add(name, step, number)
    return True


def _json(raw: bytes) -> object:
    try:
        return json.loads(raw)  # the standard library reads NaN and Infinity as W&B writes them
    except ValueError:
        return None


class WandbFileSource:
    """A local W&B run (all its folders), read from its transaction logs."""

    def __init__(self, ref: SourceRef, run: WandbRun):
        self.ref = ref
        self.run = run

    def _files(self) -> tuple[Path, ...]:
        files = run_files(self.run.root, self.run.run_id) or self.run.files
        if not files:
            raise RunReadError(
                f"{self.ref.text}: the W&B run {self.run.run_id} has no run-*.wandb file"
            )
        return files

    def read_all(self, keep: Callable[[str], bool]) -> RunData:
        return self.read_new(None, keep)[0]

    def read_new(
        self, cursor: Cursor | None, keep: Callable[[str], bool]
    ) -> tuple[RunData, Cursor]:
        data = dict(cursor.data) if cursor is not None and cursor.kind == "path" else {}
        switched = data.get("run_id") not in (None, self.run.run_id)
        if switched:  # the wandb/ folder's newest run is another run now
            before, data = data.get("run_id"), {}
        offsets: dict[str, int] = dict(data.get("offsets", {}))
        c = Collector(keep)
        c._last.update(data.get("last_steps", {}))
        total = corrupt = 0
        files = self._files()
        for path in files:
            name = path.parent.name
            start = offsets.get(name, 0)
            if start and path.stat().st_size < start:
                c.warnings.append(
                    f"{name}: the transaction log shrank below what was read; read again"
                )
                start = 0
            got = read_records(path, start)
            for record in got.records:
                feed(record, c)
            offsets[name] = got.offset
            total += got.bytes_read
            corrupt += got.corrupt
        if corrupt:
            c.warnings.append(
                f"{wording.counted(corrupt, 'corrupt chunk')} failed the checksum; the rest of "
                f"each such block was skipped"
            )
        if len(files) > 1 and cursor is None:
            c.warnings.append(
                f"a resumed run: {len(files)} folders with run id {self.run.run_id}, read in order"
            )
        run = c.finish(
            path=str(files[-1].parent),
            format=FORMAT,
            run_id=self.run.run_id,
            runs=[self.run.run_id],
            bytes_read=total,
            reset=switched,
        )
        if switched:
            run.warnings.insert(
                0,
                f"the newest run here is now {self.run.run_id} (was {before}); read from its start",
            )
        return run, Cursor(
            kind="path",
            data={
                "mode": "wandb",
                "run_id": self.run.run_id,
                "offsets": offsets,
                "last_steps": {**data.get("last_steps", {}), **c._last},
            },
        )
