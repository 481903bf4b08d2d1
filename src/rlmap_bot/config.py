"""Where things live: paths from the environment, with defaults that work in a checkout.

Only paths are read here; Slack settings (tokens, secrets) belong to the Slack
front-end's own settings model, so the core never sees a secret.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir

PACKAGE_DIR = Path(__file__).resolve().parent


def bundled_knowledge() -> Path:
    """The ``knowledge/`` folder of the checkout (or installed data), whichever exists."""
    for candidate in (PACKAGE_DIR.parent.parent / "knowledge", PACKAGE_DIR / "knowledge_data"):
        if candidate.is_dir():
            return candidate
    return PACKAGE_DIR.parent.parent / "knowledge"


def knowledge_dir() -> Path:
    value = os.environ.get("RLMAP_KNOWLEDGE")
    return Path(value).expanduser() if value else bundled_knowledge()


def data_dir() -> Path:
    value = os.environ.get("RLMAP_HOME")
    return Path(value).expanduser() if value else Path(user_data_dir("rlmap-bot", appauthor=False))


def knowledge_db() -> Path:
    value = os.environ.get("RLMAP_DB")
    return Path(value).expanduser() if value else data_dir() / "knowledge.db"


def state_url() -> str:
    """A SQLAlchemy URL or a SQLite file path for the state store.

    ``RLMAP_STATE_URL`` (e.g. a PostgreSQL URL) wins; else ``RLMAP_STATE_DB`` (a
    file); else ``state.db`` next to the knowledge store's default place.
    """
    url = os.environ.get("RLMAP_STATE_URL")
    if url:
        if "://" not in url:
            raise ValueError(f"RLMAP_STATE_URL must be a URL such as postgresql+psycopg://user:password@host/db; "
                             f"for a SQLite file set RLMAP_STATE_DB instead")
        return url
    value = os.environ.get("RLMAP_STATE_DB")
    return str(Path(value).expanduser() if value else data_dir() / "state.db")


def session_ttl_hours() -> float:
    """How long a diagnosis may sit unanswered before it expires (RLMAP_SESSION_TTL_HOURS, default 72)."""
    value = os.environ.get("RLMAP_SESSION_TTL_HOURS", "72")
    try:
        hours = float(value)
    except ValueError:
        raise ValueError(f"RLMAP_SESSION_TTL_HOURS must be a number of hours, not {value!r}") from None
    if hours <= 0:
        raise ValueError("RLMAP_SESSION_TTL_HOURS must be above 0")
    return hours
