"""Which paths may be watched: only those under the folders in ``RLMAP_RUN_ROOTS``.

A path is resolved (``..`` and every symlink, as the operating system would follow
them) before it is compared with the roots, and again before every check, so a
link that leads out of a root, or a folder later swapped for one, is refused.
A refusal never says whether the path outside exists; a missing path is reported
only when it lies inside a root.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rlmap_bot.errors import UsageError
from rlmap_bot.settings import parse_roots

__all__ = [
    "PathRefused",
    "WATCHING_OFF",
    "check_folder",
    "parse_roots",
    "resolve_watch_path",
    "within",
]

WATCHING_OFF = (
    "Watching runs is off: it needs RLMAP_RUN_ROOTS, the folders whose logs may be watched "
    f"(several separated by '{os.pathsep}'), in the environment the bot runs in (a bot "
    "already serving Slack sees it after a restart)"
)


class PathRefused(UsageError):
    """The path lands outside RLMAP_RUN_ROOTS (or watching is off); nothing was watched."""


def within(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _shown_roots(roots: list[Path]) -> str:
    return os.pathsep.join(str(r) for r in roots)


def resolve_watch_path(text: str, roots: list[Path]) -> Path:
    """The real path ``text`` names, if it lies under a root and is a file or folder.

    Relative paths are looked up under each root in turn.  Raises :class:`PathRefused`
    for anything that resolves outside the roots, and :class:`UsageError` for a path
    inside them that does not exist or is not a regular file or folder.
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
        raise PathRefused(
            f"{raw} is outside the folders this bot may watch (RLMAP_RUN_ROOTS: "
            f"{_shown_roots(roots)}); nothing is watched"
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


def check_folder(folder: Path, roots: list[Path]) -> None:
    """Refuse a folder holding a link that leads outside the roots (its contents would be read)."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            entry = Path(dirpath) / name
            if entry.is_symlink() and not within(entry.resolve(strict=False), roots):
                raise PathRefused(
                    f"{folder} holds a link that leads outside RLMAP_RUN_ROOTS; watch a log "
                    "file, or a folder without such links"
                )
