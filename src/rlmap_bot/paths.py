"""Where the knowledge folder and the stores are: RLMAP_KNOWLEDGE, RLMAP_HOME and RLMAP_DB.

This module owns those three variables (name, default,
parsing); :class:`rlmap_bot.settings.Settings`
reads every other setting and takes its paths from here. A plain ``ask`` needs only these paths,
and reading them without pydantic-settings keeps it out of that start-up: about 30 ms of a 0.25 s
budget (``python -X importtime``). They are read as pydantic-settings reads the others: names in
any case, an empty value meaning unset.
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


# The variables this module owns, with what each chooses (the settings tables list them too).
VARIABLES = {
    "RLMAP_KNOWLEDGE": "the knowledge folder",
    "RLMAP_HOME": "where both stores live by default",
    "RLMAP_DB": "the knowledge store (SQLite, rebuilt from the folder)",
}


def _env(environ: Mapping[str, str], name: str) -> Path | None:
    """``name``'s value in any case (as pydantic-settings reads it), empty meaning unset."""
    wanted = name.lower()
    for key, value in environ.items():
        if key.lower() == wanted and value:
            return Path(value)
    return None


@dataclass(frozen=True)
class Paths:
    """RLMAP_KNOWLEDGE, RLMAP_HOME and RLMAP_DB, and
    which of them chose a path (for error lines).
    """

    knowledge: Path | None = None
    home: Path | None = None
    db: Path | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Paths:
        environ = os.environ if environ is None else environ
        return cls(
            _env(environ, "RLMAP_KNOWLEDGE"), _env(environ, "RLMAP_HOME"), _env(environ, "RLMAP_DB")
        )

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
        """RLMAP_DB, --db when a front-end passed another
        file, or RLMAP_HOME for the default place.
        """
        if Path(path) != self.knowledge_db:
            return "--db"
        return "RLMAP_DB" if self.db else "RLMAP_HOME"
