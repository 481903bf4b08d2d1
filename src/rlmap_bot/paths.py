"""Where the knowledge folder and the stores are, read from the environment without pydantic-settings.

A plain ``ask`` needs only these paths. Reading them here, with the same rules as
:class:`rlmap_bot.settings.Settings` (names in any case, an empty value means unset),
keeps pydantic-settings out of its start-up: about 30 ms of a 0.25 s budget (issue 18,
``python -X importtime``). ``Settings`` derives its own paths from this class, so the
rules live once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def bundled_knowledge() -> Path:
    """The ``knowledge/`` folder of the checkout (or installed data), whichever exists."""
    for candidate in (PACKAGE_DIR.parent.parent / "knowledge", PACKAGE_DIR / "knowledge_data"):
        if candidate.is_dir():
            return candidate
    return PACKAGE_DIR.parent.parent / "knowledge"


def _env(environ: Mapping[str, str], name: str) -> Path | None:
    """``name``'s value in any case (as pydantic-settings reads it), empty meaning unset."""
    wanted = name.lower()
    for key, value in environ.items():
        if key.lower() == wanted and value:
            return Path(value)
    return None


@dataclass(frozen=True)
class Paths:
    """RLMAP_KNOWLEDGE, RLMAP_HOME and RLMAP_DB, and which of them chose a path (for error lines)."""

    knowledge: Path | None = None
    home: Path | None = None
    db: Path | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Paths:
        environ = os.environ if environ is None else environ
        return cls(_env(environ, "RLMAP_KNOWLEDGE"), _env(environ, "RLMAP_HOME"), _env(environ, "RLMAP_DB"))

    @property
    def knowledge_dir(self) -> Path:
        return self.knowledge.expanduser() if self.knowledge else bundled_knowledge()

    @cached_property
    def data_dir(self) -> Path:
        if self.home:
            return self.home.expanduser()
        from platformdirs import user_data_dir

        return Path(user_data_dir("rlmap-bot", appauthor=False))

    @property
    def knowledge_db(self) -> Path:
        return self.db.expanduser() if self.db else self.data_dir / "knowledge.db"

    def knowledge_source(self, folder: Path) -> str:
        """RLMAP_KNOWLEDGE, or --knowledge when a front-end passed another folder."""
        if Path(folder) != self.knowledge_dir:
            return "--knowledge"
        return "RLMAP_KNOWLEDGE" if self.knowledge else "the bundled knowledge folder"

    def knowledge_db_source(self, path: Path) -> str:
        """RLMAP_DB, --db when a front-end passed another file, or RLMAP_HOME for the default place."""
        if Path(path) != self.knowledge_db:
            return "--db"
        return "RLMAP_DB" if self.db else "RLMAP_HOME"
