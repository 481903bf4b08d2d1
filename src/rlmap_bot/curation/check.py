"""`kb check` for the approved additions: each validated
as the next build would, every problem named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlmap_bot.knowledge.additions import merge
from rlmap_bot.knowledge.loader import Catalog, raise_all


def check_additions(ctx: Any, files: Catalog) -> None:
    """Raise every problem of the live additions (KnowledgeError
    lines naming additions/ID and the field).

    Reads the state store without opening the core, so `kb check` never builds the knowledge store.
    """
    from rlmap_bot.settings import load_settings
    from rlmap_bot.state.store import StateStore

    url = load_settings().state_url
    if "://" not in url and not Path(url).expanduser().exists():
        return  # no state store was ever made here: no additions
    state = StateStore(url)
    try:
        raise_all(merge(files, state.curation.additions("live")).problems)
    finally:
        state.close()
