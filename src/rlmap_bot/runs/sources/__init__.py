"""Where a run is read from: a file or folder, or a
tracker (W&B, MLflow, Trackio), behind one argument.

``diagnose --run SOURCE`` and ``watch SOURCE`` take the same text. :func:`parse_source` reads it
into a :class:`SourceRef`; :func:`open_source` gives the :class:`RunSource` that reads it, either
whole (``read_all``) or only what is new since a :class:`Cursor` (``read_new``), so a watch check
costs the same at step 1,000 and at step 1,000,000.

Each reader module registers itself in :data:`OPENERS` under its kind; a kind whose optional
client is not installed says so in one line (``RunReadError``).  What may be read, and with which
credentials, is the :class:`~rlmap_bot.runs.sources.access.Access` the caller hands in.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Literal, Protocol

from pydantic import BaseModel, Field

from rlmap_bot.errors import UsageError
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import RunData
from rlmap_bot.runs.sources.access import Access

if TYPE_CHECKING:
    from rlmap_bot.runs.aliases import AliasTable

Kind = Literal["path", "wandb", "mlflow", "trackio"]
#: A tracker source that names several runs: a W&B project or group, an MLflow experiment, a
#: Trackio project (``compare`` reads them; a command that takes one run says so).
Collection = Literal["project", "group", "experiment"]
#: The trackers, each named by its prefix (``wandb:E/P/ID``); anything else is a path.
TRACKERS: tuple[Kind, ...] = ("wandb", "mlflow", "trackio")
KINDS: tuple[Kind, ...] = ("path", *TRACKERS)


class SourceRef(BaseModel):
    """One run's location as typed: ``kind`` and what follows its prefix (a path for ``path``)."""

    kind: Kind
    target: str = Field(description="path, ENTITY/PROJECT/RUN_ID, RUN_ID, or PROJECT/RUN_NAME")
    text: str = Field(description="the argument as the person typed it")
    format: str | None = Field(
        None, description="path only: the log format when the content cannot tell it"
    )
    run_id: str | None = Field(
        None, description="path only: which run, when the path holds several"
    )
    collection: Collection | None = Field(
        None, description="tracker only: the source names several runs (a project, ...)"
    )
    group: str | None = Field(None, description="W&B only: the group named after group:")

    @property
    def shown(self) -> str:
        return self.text


class Cursor(BaseModel):
    """Where the last read of a source stopped; stored as JSON between watch checks."""

    kind: Kind
    data: dict = Field(
        default_factory=dict, description="reader-specific: offsets, last step per metric, ..."
    )


class RunSource(Protocol):
    """A readable run. ``keep`` says which metric names
    to keep as series (every name is still listed).
    """

    ref: SourceRef

    def read_all(self, keep: Callable[[str], bool]) -> RunData: ...

    def read_new(
        self, cursor: Cursor | None, keep: Callable[[str], bool]
    ) -> tuple[RunData, Cursor]:
        """What was logged after ``cursor`` (everything
        when None) and the cursor to pass next time.
        """
        ...


Opener = Callable[[SourceRef, Access], RunSource]
OPENERS: dict[str, Opener] = {}


def register(kind: Kind) -> Callable[[Opener], Opener]:
    def add(opener: Opener) -> Opener:
        OPENERS[kind] = opener
        return opener

    return add


def parse_source(text: str, format: str | None = None, run_id: str | None = None) -> SourceRef:
    """``wandb:E/P/ID``, ``mlflow:ID``, ``trackio:P/NAME``, or a path (anything else); or a
    source of several runs: ``wandb:E/P`` (a project), ``wandb:E/P/group:G`` (a group),
    ``mlflow:experiment:NAME`` (an experiment, by name or id), ``trackio:P`` (a project).

    ``format`` and ``run_id`` (``--format``, ``--run-id``) apply to paths only.
    """
    raw = text.strip()
    prefix, sep, rest = raw.partition(":")
    if not is_tracker(raw):
        return SourceRef(kind="path", target=raw, text=raw, format=format, run_id=run_id)
    kind, rest = prefix.lower(), rest.strip()
    if not rest:
        raise RunReadError(f"{raw}: say which run after '{prefix}:' (e.g. {_EXAMPLES[kind]})")
    ref = SourceRef(kind=kind, target=rest, text=raw)
    if kind == "wandb":
        path, marked, group = rest.partition("/group:")
        if marked:
            if not group.strip():
                raise RunReadError(f"{raw}: say the group's name after 'group:'")
            ref.target, ref.collection, ref.group = path.strip("/"), "group", group.strip()
        elif len([p for p in rest.split("/") if p]) == 2:
            ref.target, ref.collection = rest.strip("/"), "project"
    elif kind == "mlflow" and rest.lower().startswith(EXPERIMENT):
        name = rest[len(EXPERIMENT) :].strip()
        if not name:
            raise RunReadError(f"{raw}: say the experiment's name or id after 'experiment:'")
        ref.target, ref.collection = name, "experiment"
    elif kind == "trackio" and "/" not in rest:
        ref.collection = "project"
    return ref


EXPERIMENT = "experiment:"


def is_tracker(text: str) -> bool:
    """Whether ``text`` names a tracker run by its prefix: ``wandb:``, ``mlflow:``, ``trackio:``."""
    prefix, sep, _ = text.strip().partition(":")
    return bool(sep) and prefix.lower() in TRACKERS


_EXAMPLES = {
    "wandb": "wandb:my-team/my-project/abc123",
    "mlflow": "mlflow:3f2a...",
    "trackio": "trackio:project/run",
}


#: How one run of each tracker is written, for a refusal of a source that names several.
ONE_RUN = {
    "wandb": "wandb:ENTITY/PROJECT/RUN_ID",
    "mlflow": "mlflow:RUN_ID",
    "trackio": "trackio:PROJECT/RUN_NAME",
}


def open_source(ref: SourceRef, access: Access) -> RunSource:
    """The reader for ``ref`` (RunReadError, one line, when its kind cannot be read here, or when
    it names several runs)."""
    if ref.collection is not None:
        raise RunReadError(
            f"{ref.text} names {describe(ref)}, not one run: give one run ({ONE_RUN[ref.kind]}); "
            f"compare reads every run of it"
        )
    _load_readers()
    opener = OPENERS.get(ref.kind)
    if opener is None:
        raise RunReadError(f"{ref.text}: {ref.kind} runs cannot be read by this install")
    return opener(ref, access)


def _load_readers() -> None:
    """Import the reader modules (each registers itself); lazy, so a plain ask imports none. The
    optional clients (wandb) are imported by their readers only when a run of theirs is read."""
    from rlmap_bot.runs.sources import local, mlflow, trackio, wandb_api, wandb_file  # noqa: F401


def read_source(
    source: str | Path,
    aliases: AliasTable | None = None,
    format: str | None = None,
    run_id: str | None = None,
    extra_metrics: Iterable[str] = (),
    access: Access | None = None,
) -> RunData:
    """The run at ``source`` (a path, ``wandb:E/P/ID``, ``mlflow:ID``, ``trackio:P/NAME``), read
    whole through :func:`open_source`, keeping the series ``aliases`` (or ``extra_metrics``, or a
    name rule) want (the configured knowledge folder's table when none is given); RunReadError
    (one line) on bad input."""
    import os

    from rlmap_bot.runs.aliases import default_aliases
    from rlmap_bot.runs.guess import guesser
    from rlmap_bot.runs.read import check_read, keeper

    ref = parse_source(str(source), format, run_id)
    if ref.kind != "path" and (format or run_id):
        raise UsageError(
            f"--format and --run-id apply to a log file or folder, not to {ref.kind}: sources"
        )
    reader = open_source(ref, access or Access(environ=dict(os.environ)))
    aliases = aliases or default_aliases()
    known, guess = keeper(aliases, extra_metrics), guesser()
    run = reader.read_all(lambda name: known(name) or guess(name))
    return check_read(run, aliases)


def is_wandb_folder(path: Path) -> bool:
    """Whether ``path`` is a W&B run folder, ``latest-run``, a ``wandb/`` folder or a ``.wandb``
    file (read through its transaction log, not the file readers)."""
    from rlmap_bot.runs.sources import wandb_file

    return wandb_file.locate(path) is not None


def check_readable(text: str, access: Access) -> None:
    """Open the source and ask it which metrics the run has, keeping none of their values (a
    one-line UsageError when this install or workspace cannot read it: not allowed, no such run or
    store, a tracker that does not answer)."""
    ref = parse_source(text)
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


def read_new(
    text: str, cursor: dict | None, aliases: AliasTable, access: Access
) -> tuple[RunData, dict]:
    """What the source ``text`` logged since ``cursor`` (a stored :class:`Cursor`'s JSON; None:
    everything), keeping the series ``aliases`` want, and the cursor to store next.

    Any failure of the reader is a RunReadError (one line): a tracker's client may raise its own
    errors for a server that is down, which a watch reports and retries, never as a traceback.
    """
    from rlmap_bot.runs.read import keeper

    ref = parse_source(text)
    after = Cursor.model_validate(cursor) if cursor else None
    try:
        run, after = open_source(ref, access).read_new(after, keeper(aliases, ()))
    except (RunReadError, OSError):
        raise
    except Exception as exc:  # noqa: BLE001 - a tracker client's own error: one line, retried
        raise RunReadError(f"{ref.text}: cannot read: {type(exc).__name__}: {exc}") from None
    return run, after.model_dump(mode="json")


# -- sources of several runs -----------------------------------------------------------------------
#: Judgement: a comparison card, its chart and a terminal table stay readable with eight curves,
#: and each run is a read of its own (a tracker's whole history): the most recent eight are read.
MAX_RUNS = 8


class ListedRun(BaseModel):
    """One run of a source of several: the source that reads it alone, and its name."""

    source: str = Field(description="the run as one source: wandb:E/P/ID, mlflow:ID, trackio:P/N")
    name: str = Field(description="what the tracker shows it as (W&B's display name, ...)")
    state: str | None = Field(None, description="running, finished, ... when the tracker says")


class RunList(BaseModel):
    """The runs a project, group or experiment holds: the most recent first, at most a cap."""

    source: str = Field(description="the source as typed")
    what: str = Field(description="the collection in words: the W&B project team/grpo")
    runs: list[ListedRun]
    total: int = Field(description="how many runs it holds that could be listed")
    which: str = Field(description="which runs are listed: 'finished or running', 'logged'")


Lister = Callable[[SourceRef, Access, int], RunList]
LISTERS: dict[str, Lister] = {}


def register_lister(kind: Kind) -> Callable[[Lister], Lister]:
    def add(lister: Lister) -> Lister:
        LISTERS[kind] = lister
        return lister

    return add


def describe(ref: SourceRef) -> str:
    """The collection ``ref`` names, in words: "the W&B project team/grpo", ..."""
    if ref.collection == "group":
        return f"the W&B group {ref.group} of the project {ref.target}"
    tracker = {"wandb": "W&B", "mlflow": "MLflow", "trackio": "Trackio"}[ref.kind]
    return f"the {tracker} {ref.collection} {ref.target}"


def list_runs(ref: SourceRef, access: Access, limit: int = MAX_RUNS) -> RunList:
    """The most recent runs (at most ``limit``) of the project, group or experiment ``ref`` names,
    read with ``access`` (the same allow-lists and credentials as one run of it); RunReadError,
    one line, when it cannot be listed."""
    _load_readers()
    lister = LISTERS.get(ref.kind)
    if ref.collection is None or lister is None:
        raise RunReadError(f"{ref.text}: not a source of several runs")
    try:
        return lister(ref, access, limit)
    except (RunReadError, UsageError):
        raise
    except Exception as exc:  # noqa: BLE001 - a tracker client's own error: one line
        raise RunReadError(f"{ref.text}: cannot list its runs: {type(exc).__name__}") from None
