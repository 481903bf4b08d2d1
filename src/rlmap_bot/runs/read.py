"""Reading one discovered run (:func:`read_candidate`), what is kept of it (:func:`keeper`), and
the check that something was (:func:`check_read`); :func:`rlmap_bot.runs.sources.read_source`
reads a run whole through them."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Callable, Iterable

from rlmap_bot import wording
from rlmap_bot.runs.aliases import AliasTable
from rlmap_bot.runs.detect import Candidate
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.formats import mlflow, tensorboard, trl
from rlmap_bot.runs.formats.lines import LINE_FORMATS, Csv, JsonLines, LineParser
from rlmap_bot.runs.helptext import LOOKED_FOR
from rlmap_bot.runs.model import Collector, RunData
from rlmap_bot.runs.quantities import reward_part
from rlmap_bot.runs.textio import is_json_array, iter_lines, open_binary

#: Above this many names the "no recognised metrics" message lists only the first ones.
NAMES_SHOWN = 25


def keeper(aliases: AliasTable, extra_metrics: Iterable[str]) -> Callable[[str], bool]:
    """The names a reader keeps: the alias table's, those asked for, and a reward's parts (the
    task's pass rate may be one of them: ``quantities.reward_part``)."""
    extra = set(extra_metrics)
    return lambda name: name in extra or aliases.wants(name) or reward_part(name) is not None


def read_lines(
    path: Path, parser: LineParser, c: Collector, offset: int = 0, max_bytes: int | None = None
) -> tuple[int, int, bytes | None]:
    """Feed whole lines from ``offset``; returns (offset after
    the last whole line, bytes read, the last line when it had no newline, else None).

    With ``max_bytes``, stop after the first whole line that reaches that many bytes past
    ``offset`` (a watcher reads a huge log in bounded pieces).
    """
    stream, counter = open_binary(path, offset)
    overlong = [0]
    position = offset
    partial: bytes | None = None
    try:
        feed = parser.feed
        for raw, whole in iter_lines(stream, overlong):
            if not whole:
                partial = raw
                break
            position += len(raw)
            if feed(raw):
                c.records += 1
            else:
                c.skipped += 1
            if max_bytes is not None and position - offset >= max_bytes:
                break
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
        if not c.records:
            raise RunReadError(f"{path}: cannot read: {exc}") from None
        c.warnings.append(f"stopped reading at byte {position}: {exc}; earlier records kept")
    finally:
        stream.close()
    if overlong[0]:
        c.warnings.append(f"{wording.counted(overlong[0], 'overlong line')} skipped")
    return position, counter.count, partial


def _whole_json(raw: bytes) -> bool:
    """Whether ``raw`` is one whole JSON value (a line a writer left without its newline)."""
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


def _read_json_array(path: Path, parser: JsonLines, c: Collector) -> int:
    stream, counter = open_binary(path)
    try:
        data = json.load(stream)
    except ValueError as exc:
        raise RunReadError(f"{path}: not valid JSON ({exc}); is the file cut short?") from None
    finally:
        stream.close()
    if not isinstance(data, list):
        raise RunReadError(f"{path}: a JSON document that is not a list of records")
    for obj in data:
        if parser.record(obj):
            c.records += 1
    return counter.count


def read_candidate(cand: Candidate, c: Collector) -> tuple[int, list[str]]:
    """Read one discovered run into the collector; returns (bytes read, warnings)."""
    warnings: list[str] = []
    fmt = cand.format
    if fmt in LINE_FORMATS:
        parser = LINE_FORMATS[fmt](c)
        if isinstance(parser, Csv) and isinstance(cand.extra, str):
            parser.run = cand.extra  # one run's columns of a W&B web-UI export
        if isinstance(parser, JsonLines) and is_json_array(cand.location):
            return _read_json_array(cand.location, parser, c), warnings
        _, nbytes, tail = read_lines(cand.location, parser, c)
        # A JSON object closes itself, so a last line that parses as one was written whole (a
        # writer that ends no line with a newline); a CSV row or a console line cut short can
        # still parse, with its last value cut, so those are left out and the user told why.
        if tail is not None and isinstance(parser, JsonLines) and parser.feed(tail):
            c.records += 1
        elif tail is not None and isinstance(parser, JsonLines) and _whole_json(tail):
            c.skipped += 1  # whole, but no record (a closing summary): as any such line
        elif tail is not None:
            warnings.append(
                "the last line has no newline (cut short, or still being written) and was "
                "ignored; if the file is complete, end it with a newline"
            )
        return nbytes, warnings
    if fmt == "trl-state":
        return trl.read_trl_state(cand.location, c), warnings
    if fmt == "tensorboard":
        return tensorboard.read_event_files(cand.files, c), warnings
    if fmt == "mlflow-db":
        assert isinstance(cand.extra, mlflow.MlflowRun), (
            "discover() attaches the MlflowRun to each mlflow-db run"
        )
        return mlflow.read_db_run(cand.location, cand.extra, c), warnings
    if fmt == "mlflow-files":
        return mlflow.read_file_run(cand.location, c), warnings
    raise RunReadError(f"unknown format '{fmt}'")


def check_read(run: RunData, aliases: AliasTable) -> RunData:
    """``run`` when it holds a metric some signal can be read from; else RunReadError, one line.

    A series is kept when the alias table, a ``--map`` or a name rule (:mod:`rlmap_bot.runs.guess`)
    wants it; a run with none of those lists its metric names and how to map one.
    """
    where = run.path
    if not run.metrics:
        raise RunReadError(
            f"{where}: no metric records found reading it as {run.format}; looked for {LOOKED_FOR}"
        )
    if not run.series:
        shown = ", ".join(run.metrics[:NAMES_SHOWN])
        more = len(run.metrics) - NAMES_SHOWN
        raise RunReadError(
            f"{where}: none of its {len(run.metrics)} metrics is in the alias table or reads as a "
            f"reward, score, length, entropy, KL, loss or gradient norm by its name: {shown}"
            + (f" and {more} more" if more > 0 else "")
            + "; map one with --map SIGNAL=METRIC, or add the names to knowledge/metrics/"
        )
    return run
