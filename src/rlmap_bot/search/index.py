"""Building the knowledge store with the search tables over it.

The knowledge layer writes the entries and their index rows
(:func:`rlmap_bot.knowledge.store.build_store`); search adds what it reads at
question time. Every build goes through here, so no store lacks its search tables,
and the knowledge layer never imports search.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rlmap_bot.knowledge import store
from rlmap_bot.knowledge.loader import Catalog
from rlmap_bot.search.lexicon import build_search_tables

#: What a build adds to the store, in order (each an :data:`rlmap_bot.knowledge.store.Indexer`).
INDEXERS: tuple[store.Indexer, ...] = (build_search_tables,)


def build_store(
    root: Path,
    db_path: Path,
    catalog: Catalog | None = None,
    now: dt.datetime | None = None,
    stamp: str = "",
) -> Catalog:
    """Validate ``root`` and atomically replace ``db_path``
    with a fresh store and its search tables.

    ``stamp`` records the approved additions merged beside the files (see
    :mod:`rlmap_bot.knowledge.additions`), so a changed set of them reads as stale.
    """
    return store.build_store(
        root, db_path, catalog=catalog, now=now, indexers=INDEXERS, stamp=stamp
    )
