"""Where a run is read from: a file or folder, or a
tracker (W&B, MLflow, Trackio), behind one argument.

``diagnose --run SOURCE`` and ``watch SOURCE`` take the same text. :func:`parse_source` reads it
into a :class:`SourceRef`; :func:`open_source` gives the :class:`RunSource` that reads it, either
whole (``read_all``) or only what is new since a :class:`Cursor` (``read_new``), so a watch check
costs the same at step 1,000 and at step 1,000,000.

Each reader module registers itself in :data:`OPENERS` under its kind; a kind whose optional
client is not installed says so in one line (``RunReadError``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal, Protocol

from pydantic import BaseModel, Field

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import RunData

Kind = Literal["path", "wandb", "mlflow", "trackio"]
KINDS: tuple[Kind, ...] = ("path", "wandb", "mlflow", "trackio")


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

    @property
    def shown(self) -> str:
        return self.text


class Cursor(BaseModel):
    """Where the last read of a source stopped; stored as JSON between watch checks."""

    kind: Kind
    data: dict = Field(
        default_factory=dict, description="reader-specific: offsets, last step per metric, ..."
    )


@dataclass(frozen=True)
class Access:
    """What a workspace may read and with which credentials; from settings and the state store.

    ``credentials`` maps a name (``WANDB_API_KEY``, ``MLFLOW_TRACKING_TOKEN``, ...) to its value,
    already unsealed for this workspace; readers never log or echo them.
    """

    run_roots: tuple[Path, ...] = ()
    wandb_entities: tuple[str, ...] = ()
    mlflow_hosts: tuple[str, ...] = ()
    credentials: dict[str, str] = field(default_factory=dict)
    #: Whether paths on this machine may be read at all: a terminal's person may; a workspace only
    #: when RLMAP_RUN_ROOTS names folders (and then only inside them).
    paths: bool = True
    environ: dict[str, str] = field(
        default_factory=dict
    )  # MLFLOW_TRACKING_URI, TRACKIO_DIR, WANDB_BASE_URL
    #: Credentials the workspace has that do not open (name -> the one line saying what and
    #: whose): a reader that needs one says so instead of reading without it.
    unopened: dict[str, str] = field(default_factory=dict)


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


def under_roots(path: Path, roots: tuple[Path, ...]) -> bool:
    """Whether ``path`` resolves (links followed, as a read would) inside one of ``roots``."""
    real = path.expanduser().resolve()
    return any(real.is_relative_to(root.expanduser().resolve()) for root in roots)


Opener = Callable[[SourceRef, Access], RunSource]
OPENERS: dict[str, Opener] = {}


def register(kind: Kind) -> Callable[[Opener], Opener]:
    def add(opener: Opener) -> Opener:
        OPENERS[kind] = opener
        return opener

    return add


def parse_source(text: str, format: str | None = None, run_id: str | None = None) -> SourceRef:
    """``wandb:E/P/ID``, ``mlflow:ID``, ``trackio:P/NAME``, or a path (anything else).

    ``format`` and ``run_id`` (``--format``, ``--run-id``) apply to paths only.
    """
    raw = text.strip()
    prefix, sep, rest = raw.partition(":")
    if sep and prefix.lower() in KINDS and prefix.lower() != "path":
        if not rest.strip():
            raise RunReadError(
                f"{raw}: say which run after '{prefix}:' (e.g. {_EXAMPLES[prefix.lower()]})"
            )
        return SourceRef(kind=prefix.lower(), target=rest.strip(), text=raw)
    return SourceRef(kind="path", target=raw, text=raw, format=format, run_id=run_id)


_EXAMPLES = {
    "wandb": "wandb:my-team/my-project/abc123",
    "mlflow": "mlflow:3f2a...",
    "trackio": "trackio:project/run",
}


def open_source(ref: SourceRef, access: Access) -> RunSource:
    """The reader for ``ref`` (RunReadError, one line, when its kind cannot be read here)."""
    _load_readers()
    opener = OPENERS.get(ref.kind)
    if opener is None:
        raise RunReadError(f"{ref.text}: {ref.kind} runs cannot be read by this install")
    return opener(ref, access)


def _load_readers() -> None:
    """Import the reader modules (each registers itself); lazy, so a plain ask imports none. The
    optional clients (wandb) are imported by their readers only when a run of theirs is read."""
    from rlmap_bot.runs.sources import local, mlflow, trackio, wandb_api, wandb_file  # noqa: F401
