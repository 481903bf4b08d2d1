"""What may be read of runs, one home: the :class:`Access` a reader gets (allow-lists and
credentials), the run-root policy for paths, and the two kinds of access a front-end hands in.

In a terminal the person reads with their own environment (:func:`local_access`): any W&B entity
or MLflow host, and the credentials the trackers' own variables hold (``WANDB_API_KEY``,
``MLFLOW_TRACKING_TOKEN``, ...).  A workspace reads only what the settings allow
(:func:`workspace_access`: ``RLMAP_RUN_ROOTS``, ``RLMAP_WANDB_ENTITIES``, ``RLMAP_MLFLOW_HOSTS``)
with the credentials an admin sealed for that workspace; the process's own ``WANDB_API_KEY`` or
MLflow token is never lent to a workspace.  ``diagnose --run`` and a watch get their access from
the front-end that runs them, never from a name.

Paths on the bot's machine: a path is resolved (``..`` and every symlink, as the operating system
would follow them) before it is compared with the roots, and again before every read of a watch,
so a link that leads out of a root, or a folder later swapped for one, is refused.  A refusal never
says whether the path outside exists; a missing path is reported only when it lies inside a root.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from rlmap_bot.errors import UsageError
from rlmap_bot.runs.errors import RunReadError

if TYPE_CHECKING:
    from rlmap_bot.settings import Settings
    from rlmap_bot.state.store import StateStore

ANY = "*"  # an allow-list entry that allows everything (the terminal's own access)
#: Where each tracker is, as its own tools name it (never secrets).
TRACKER_ENVIRON = ("MLFLOW_TRACKING_URI", "TRACKIO_DIR", "HF_HOME", "WANDB_BASE_URL")
#: The credentials each tracker's own client reads from the environment.
TRACKER_CREDENTIALS = (
    "WANDB_API_KEY",
    "MLFLOW_TRACKING_TOKEN",
    "MLFLOW_TRACKING_USERNAME",
    "MLFLOW_TRACKING_PASSWORD",
)
#: What `/rlmap credentials set TRACKER` stores, by tracker.
CREDENTIAL_NAMES = {"wandb": "WANDB_API_KEY", "mlflow": "MLFLOW_TRACKING_TOKEN"}


@dataclass(frozen=True)
class Access:
    """What a terminal or a workspace may read and with which credentials.

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


#: The access of a watch's team, as the front-end that schedules watches hands it in.
AccessFor = Callable[[str], Access]


# -- the two kinds of access ---------------------------------------------------------------------
def _pick(environ: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str]:
    return {name: environ[name] for name in names if environ.get(name)}


def local_access(environ: Mapping[str, str] | None = None) -> Access:
    """A terminal's access: its own environment's trackers and credentials, no allow-list."""
    env = os.environ if environ is None else environ
    return Access(
        wandb_entities=(ANY,),
        mlflow_hosts=(ANY,),
        credentials=_pick(env, TRACKER_CREDENTIALS),
        environ=_pick(env, TRACKER_ENVIRON),
    )


def workspace_access(
    settings: Settings, store: StateStore, team: str, environ: Mapping[str, str] | None = None
) -> Access:
    """What workspace ``team`` may read, with its own sealed credentials (none without an
    encryption key), and the trackers' locations of this process's environment."""
    return workspace_access_for(settings, store, environ)(team)


def terminal_access_for() -> AccessFor:
    """A terminal's watches: every one read with the terminal's own access."""
    return lambda _team: local_access()


def workspace_access_for(
    settings: Settings, store: StateStore, environ: Mapping[str, str] | None = None
) -> AccessFor:
    """The access of each workspace of a chat front-end: the allow-lists of its settings (read
    once, as settings are) and, asked for each time, the credentials the workspace sealed."""
    env = os.environ if environ is None else environ
    roots = tuple(settings.run_roots)
    allowed = Access(
        run_roots=roots,
        paths=bool(roots),
        wandb_entities=settings.wandb_entities,
        mlflow_hosts=settings.mlflow_hosts,
        environ=_pick(env, TRACKER_ENVIRON),
    )
    key = settings.rlmap_encryption_key

    def access(team: str) -> Access:
        if key is None:
            return allowed
        from rlmap_bot.crypto import TokenCipher

        cipher = TokenCipher.from_setting(key.get_secret_value())
        credentials, problems = store.credentials.open_all(team, cipher)
        unopened = {name: str(exc) for name, exc in problems.items()}
        return replace(allowed, credentials=credentials, unopened=unopened)

    return access


# -- allow-lists -----------------------------------------------------------------------------------
def allowed(name: str, allow: Iterable[str]) -> bool:
    """``name`` (a host, ``host:port`` or a W&B entity) is on an allow-list (``*`` allows all)."""
    listed = {a.strip().lower() for a in allow}
    return ANY in listed or name.lower() in listed


# -- run roots -------------------------------------------------------------------------------------
WATCHING_OFF = (
    f"Watching runs is off: it needs RLMAP_RUN_ROOTS, the folders whose logs may be watched "
    f"(several separated by '{os.pathsep}'), in the environment the bot runs in (a bot already "
    f"serving Slack sees it after a restart)"
)


class PathRefused(UsageError):
    """The path lands outside RLMAP_RUN_ROOTS (or there are none); nothing was read."""


def under_roots(path: Path, roots: Iterable[Path]) -> bool:
    """Whether ``path`` resolves (links followed, as a read would) inside one of ``roots``."""
    real = path.expanduser().resolve()
    return any(real.is_relative_to(root.expanduser().resolve()) for root in roots)


def within(path: Path, roots: list[Path]) -> bool:
    """Whether an already resolved ``path`` is one of ``roots`` or lies below one."""
    return any(path == root or root in path.parents for root in roots)


def check_path(path: Path, access: Access) -> None:
    """RunReadError unless ``path`` may be read with ``access``: paths allowed at all, and inside
    one of its run roots (none set: no limit)."""
    if not access.paths:
        raise RunReadError(
            f"{path}: files on the bot's machine are read only inside the folders RLMAP_RUN_ROOTS "
            f"names, and it names none; nothing is read"
        )
    if access.run_roots and not under_roots(path, access.run_roots):
        raise RunReadError(
            f"{path}: outside the folders runs may be read from (RLMAP_RUN_ROOTS); nothing is read"
        )


def check_store(path: Path, access: Access, setting: str, source: str) -> None:
    """RunReadError unless a tracker's store at ``path`` (placed by ``setting``) lies inside one of
    ``access``'s run roots (none set: no limit), naming the ``source`` as typed."""
    if access.run_roots and not under_roots(path, access.run_roots):
        raise RunReadError(
            f"{source}: {setting} names a store outside the folders runs may be read from "
            f"(RLMAP_RUN_ROOTS); nothing is read"
        )


#: What a refusal says was not done, by the command refused (a refusal names the command used).
NOT_DONE = {
    "watch": "watched",
    "compare": "compared",
    "forecast": "forecast",
    "diagnose": "diagnosed",
}


def _refused_for(command: str) -> tuple[str, str]:
    """Who may read, and what was not done: "this bot may watch ... nothing is watched" for a
    watch, "compare may read runs from ... nothing is compared" for compare."""
    if command == "watch":
        return "this bot may watch", "nothing is watched"
    return f"{command} may read runs from", f"nothing is {NOT_DONE.get(command, 'read')}"


def resolve_run_path(text: str, roots: list[Path], command: str = "watch") -> Path:
    """The real path ``text`` names, if it lies under a root and is a file or folder.

    Relative paths are looked up under each root in turn.  Raises :class:`PathRefused`
    for anything that resolves outside the roots (naming ``command``, the one used), and
    :class:`UsageError` for a path inside them that does not exist or is not a regular file or
    folder.
    """
    if not roots:
        raise PathRefused(WATCHING_OFF)
    raw = str(text).strip().strip("`\"'")
    if not raw or "\x00" in raw:
        raise UsageError("give the path of a training log or run folder")
    given = Path(raw)
    candidates = [given] if given.is_absolute() else [root / given for root in roots]
    inside = [c.resolve(strict=False) for c in candidates]
    inside = [p for p in inside if within(p, roots)]
    if not inside:
        shown = os.pathsep.join(str(r) for r in roots)
        who, undone = _refused_for(command)
        raise PathRefused(
            f"{raw} is outside the folders {who} (RLMAP_RUN_ROOTS: {shown}); {undone}"
        )
    for path in inside:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
            return path
        raise UsageError(f"{raw} is neither a log file nor a folder")
    raise UsageError(f"no such file or folder under RLMAP_RUN_ROOTS: {raw}")


def check_folder(folder: Path, roots: list[Path], command: str = "watch") -> None:
    """Refuse a folder holding a link that leads outside the roots (its contents would be read)."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            entry = Path(dirpath) / name
            if entry.is_symlink() and not within(entry.resolve(strict=False), roots):
                raise PathRefused(
                    f"{folder} holds a link that leads outside RLMAP_RUN_ROOTS; {command} a log "
                    f"file, or a folder without such links"
                )


def check_source(source: str, access: Access, command: str = "diagnose") -> str:
    """A run's source as ``access`` lets it be read: a tracker run as it is (its reader checks
    the allow-lists); a path as it is where paths are not limited (a terminal), else resolved as
    a watch's is (inside RLMAP_RUN_ROOTS, links never followed out, nothing said about what lies
    outside) and refused in one line without roots; a refusal names ``command``, the one used."""
    from rlmap_bot.runs.sources import is_tracker

    if is_tracker(source) or (access.paths and not access.run_roots):
        return source
    roots = list(access.run_roots)
    if not roots:
        raise UsageError(
            "Files on the bot's machine are not read from chat: an admin names the folders runs "
            "may be read from in RLMAP_RUN_ROOTS. A tracker run (wandb:, mlflow:, trackio:) or a "
            "log uploaded to the thread works without it."
        )
    path = resolve_run_path(source, roots, command)
    if path.is_dir():
        check_folder(path, roots, command)
    return str(path)
