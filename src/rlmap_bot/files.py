"""Folders the bot writes to (its stores, logs, charts), with one plain line when it cannot."""

from __future__ import annotations

import os
from pathlib import Path

from rlmap_bot.errors import ConfigError


def ensure_folder(folder: Path, what: str) -> Path:
    """Create ``folder`` if needed; ConfigError naming
    ``what`` and the real reason when that is impossible.
    """
    folder = Path(folder).expanduser()
    for parent in [folder, *folder.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"cannot write {what}: {parent} is a file, not a folder")
            break
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot write {what} in {folder}: {exc.strerror or exc}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"cannot write {what}: {folder} is not writable")
    return folder


SQLITE_HEADER = b"SQLite format 3\x00"


def is_sqlite_file(path: Path) -> bool:
    """Does ``path`` start with SQLite's header (so it is a database, whoever made it)?"""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False
