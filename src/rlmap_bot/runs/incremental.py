"""Incremental reading of line-based logs, for a watcher that checks a growing log now and then.

``RunReader(path).read_new()`` returns only what was appended since the last
call, reading only those bytes (plus the first 4 KiB, to notice a replaced
file).  ``.state`` is a small serialisable model; a watcher stores it between
checks and passes it back.  A file shorter than the saved offset, a different
inode, or a changed head means the log was truncated or rotated: the reader
starts again from byte 0 and marks the result ``reset``.  A last line without
its newline is left for the next call.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Iterable

from pydantic import BaseModel, Field

from rlmap_bot.runs.aliases import AliasTable, default_aliases
from rlmap_bot.runs.detect import detect_file
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.formats.lines import LINE_FORMATS
from rlmap_bot.runs.model import Collector, RunData
from rlmap_bot.runs.read import keeper, read_lines
from rlmap_bot.runs.textio import is_gzip

#: Bytes of the file's start fingerprinted to notice a replaced file.  Judgement: 4 KiB
#: covers the first lines (a verl preamble, a CSV header), costs one page to re-read.
HEAD_BYTES = 4096


class ReaderState(BaseModel):
    """Where an incremental reader stopped; store it as JSON between checks."""

    path: str
    format: str
    offset: int = 0
    inode: int | None = None
    head_len: int = 0
    head_sha256: str = ""
    parser: dict = Field(default_factory=dict, description="format state, e.g. the CSV header")
    last_steps: dict[str, int] = Field(
        default_factory=dict, description="last step per kept metric (restarts)"
    )


class RunReader:
    """Reads a line-based log in pieces; see the module docstring."""

    def __init__(
        self,
        path: Path | str,
        format: str | None = None,
        extra_metrics: Iterable[str] = (),
        aliases: AliasTable | None = None,
        state: ReaderState | dict | None = None,
        keep: Callable[[str], bool] | None = None,
    ):
        self.path = Path(path)
        if state is not None and not isinstance(state, ReaderState):
            state = ReaderState.model_validate(state)
        if not self.path.is_file():
            raise RunReadError(f"{self.path}: incremental reading needs a log file")
        if is_gzip(self.path):
            raise RunReadError(
                f"{self.path}: a gzip file cannot be read as it grows; give the uncompressed log, "
                f"or read it once with diagnose --run"
            )
        fmt = format or (state.format if state else None) or detect_file(self.path)
        if fmt not in LINE_FORMATS:
            raise RunReadError(
                f"{self.path}: {fmt} is not line-based; incremental reading supports "
                f"{', '.join(LINE_FORMATS)} (read the rest whole with read_source)"
            )
        self._keep = keep or keeper(aliases or default_aliases(), extra_metrics)
        self._state = state or ReaderState(path=str(self.path), format=fmt)
        self.bytes_read = 0  # over this reader's lifetime

    @property
    def state(self) -> ReaderState:
        return self._state.model_copy(deep=True)

    def _head(self, n: int) -> tuple[bytes, int]:
        with open(self.path, "rb") as f:
            data = f.read(n)
        return data, len(data)

    def _replaced(self) -> str | None:
        st = self._state
        try:
            info = self.path.stat()
        except OSError as exc:
            raise RunReadError(f"{self.path}: cannot open: {exc.strerror or exc}") from None
        if info.st_size < st.offset:
            return (
                f"the file shrank below the saved offset ({info.st_size} < {st.offset} bytes): "
                f"truncated or rotated"
            )
        if st.inode is not None and info.st_ino != st.inode:
            return "the file was replaced (a new inode): rotated"
        if st.head_len:
            head, n = self._head(st.head_len)
            self._last_count += n
            if hashlib.sha256(head).hexdigest() != st.head_sha256:
                return "the first bytes of the file changed: rotated or rewritten"
        return None

    def read_new(self, max_bytes: int | None = None) -> RunData:
        """What was appended since the last call (everything on the first call).

        ``max_bytes`` bounds one call (whole lines, so it may go one line over): call
        again while ``state.offset`` moved by at least that much to reach the end in bounded pieces.
        """
        self._last_count = 0
        st = self._state
        why = self._replaced()
        reset = why is not None
        if reset:
            st.offset, st.head_len, st.head_sha256, st.parser, st.last_steps = 0, 0, "", {}, {}
        c = Collector(self._keep)
        c._last.update(st.last_steps)  # restarts across calls are still restarts
        parser = LINE_FORMATS[st.format](c)
        parser.restore(st.parser)
        offset, count, _ = read_lines(self.path, parser, c, st.offset, max_bytes)
        self._last_count += count
        st.offset = offset
        st.parser = parser.state()
        st.inode = self.path.stat().st_ino
        if st.head_len < HEAD_BYTES and offset > st.head_len:
            head, n = self._head(min(offset, HEAD_BYTES))
            self._last_count += n
            st.head_len, st.head_sha256 = n, hashlib.sha256(head).hexdigest()
        st.last_steps = {**st.last_steps, **c._last}
        self.bytes_read += self._last_count
        run = c.finish(
            path=str(self.path), format=st.format, bytes_read=self._last_count, reset=reset
        )
        if reset:
            run.warnings.insert(0, f"{why}; read again from the start")
        return run
