"""Watching a run where it is tracked: a W&B run folder, or a tracker (``wandb:``, ``mlflow:``,
``trackio:``), read through :mod:`rlmap_bot.runs.sources` with a :class:`Cursor` kept per watch.

A plain log file or folder keeps the path route of :mod:`rlmap_bot.watch.check` (its own
incremental reader, in bounded pieces).  Everything else goes through the run source's
``read_new``: the cursor it returns is stored in the watch's tracking JSON and passed back at the
next check, so a check reads only what was logged since, whatever the run's length.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from rlmap_bot.errors import UsageError
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import RunData

if TYPE_CHECKING:
    from rlmap_bot.runs.aliases import AliasTable
    from rlmap_bot.runs.sources import SourceRef
    from rlmap_bot.runs.sources.access import Access
    from rlmap_bot.state.models import Tracking


def ref_of(text: str) -> SourceRef:
    from rlmap_bot.runs.sources import parse_source

    return parse_source(text)


def is_wandb_folder(path: Path) -> bool:
    from rlmap_bot.runs.sources import wandb_file

    return wandb_file.locate(path) is not None


def check_readable(text: str, access: Access) -> None:
    """Open the source and ask it which metrics the run has, keeping none of their values (a
    one-line UsageError when this install or workspace cannot read it: not allowed, no such run or
    store, a tracker that does not answer).
    """
    from rlmap_bot.runs.sources import Cursor, open_source

    ref = ref_of(text)
    # W&B pages the whole history from a cursor of None: one past any step asks for the run alone.
    # The others list the run's metrics (MLflow) or walk its rows keeping no values (Trackio).
    cursor = (
        Cursor(kind="wandb", data={"step": 2**62, "names": []}) if ref.kind == "wandb" else None
    )
    try:
        open_source(ref, access).read_new(cursor, lambda _name: False)
    except RunReadError as exc:
        raise UsageError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - a tracker client's own error: one line
        raise UsageError(f"{text}: cannot read: {type(exc).__name__}: {exc}") from None


class Chunk(NamedTuple):
    run: RunData
    cursor: dict


def read_new(text: str, tracking: Tracking, aliases: AliasTable, access: Access) -> Chunk:
    """What the source logged since the cursor in ``tracking``, and the cursor to store next.

    Any failure of the reader is a RunReadError (one line): a tracker's client may raise its own
    errors for a server that is down, which a watch reports and retries, never as a traceback.
    """
    from rlmap_bot.runs.read import keeper
    from rlmap_bot.runs.sources import Cursor, open_source

    ref = ref_of(text)
    cursor = Cursor.model_validate(tracking.cursor) if tracking.cursor else None
    try:
        source = open_source(ref, access)
        run, after = source.read_new(cursor, keeper(aliases, ()))
    except (RunReadError, OSError):
        raise
    except Exception as exc:  # noqa: BLE001 - a tracker client's own error: one line, retried
        raise RunReadError(f"{ref.text}: cannot read: {type(exc).__name__}: {exc}") from None
    return Chunk(run, after.model_dump(mode="json"))
