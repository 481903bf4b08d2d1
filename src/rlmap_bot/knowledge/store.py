"""The read-only knowledge store: a SQLite file built from ``knowledge/``.

``build_store`` writes a complete new file beside the old one and swaps it in
with ``os.replace``, so readers see either the old store or the new one, never
half of each, and a failed build leaves the old store untouched.  The store
also remembers when each entry first appeared and last changed (carried over
from the previous file), which digests use to tell new entries from updated.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from rlmap_bot.errors import ConfigError
from rlmap_bot.files import ensure_folder, is_sqlite_file
from rlmap_bot.knowledge.loader import Catalog, knowledge_files, load_catalog
from rlmap_bot.knowledge.schema import BUILT, ENTRY_MODELS, Entry, Paper, Signal, Stage, Topic
from rlmap_bot.knowledge.settings import CatalogSettings
from rlmap_bot.text import normalize

# 2: surface-word columns split for explanations, porter FTS, search
# tables; 3: one row per curated question; 4: other-language marker words
SCHEMA_VERSION = 4
SEARCH_COLUMNS = ("names", "authors", "keywords", "summary", "body", "questions")
# Read the store through a memory map up to this size: a page is then read from the OS cache without
# a copy into SQLite's own small cache, which another query's pages keep evicting (ask p50 at 100k
# entries, interleaved with BM25 over every word as in benchmarks/run.py: CPU 0.82x without it,
# docs/measurements.md). Judgement: 1 GiB is over three times the 100k-entry store (310 MB).
MMAP_BYTES = 1 << 30
_READ_BACK = {BUILT: True}  # see schema.BUILT: what the build checked is not checked again


def _catalog_files(root: Path) -> list[Path]:
    return knowledge_files(root) + [
        p for p in [root / "catalog.yaml", root / "calibration.yaml"] if p.exists()
    ]


def catalog_fingerprint(root: Path) -> str:
    """A hash of every knowledge file's path and content: changes when the catalog does."""
    digest = hashlib.sha256()
    root = Path(root)
    for path in _catalog_files(root):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def files_signature(root: Path) -> str:
    """A hash of every knowledge file's path, size and modification time (nanoseconds).

    Equal to the one recorded at the build, no file was written, added or removed since: the
    store is fresh without reading the files (the content fingerprint reads all of them, the
    catalog's whole size, on every start). When it differs (a file touched or edited), the
    content fingerprint decides, so a touch without an edit rebuilds nothing. This is how make
    and git's index tell an unchanged file.
    """
    digest = hashlib.sha256()
    root = Path(root)
    for path in _catalog_files(root):
        stat = path.stat()
        digest.update(f"{path.relative_to(root).as_posix()}\0{stat.st_size}\0".encode())
        digest.update(f"{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _entry_hash(entry: Entry) -> str:
    data = entry.model_dump(mode="json", exclude={"added", "announce"})
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def search_fields(entry: Entry) -> dict[str, str]:
    """The text an entry is found by, in columns that search weighs and explains separately.

    Columns hold surface words (see :mod:`rlmap_bot.text`); FTS5's porter tokenizer stems them.
    ``body`` is the entry's detail: a paper's facts and venue, a stage's coverage, symptoms,
    measures and levers, a topic's body, a signal's question and how to measure it.
    """
    names = [entry.title, *entry.aliases]
    authors: list[str] = []
    body: list[str] = []
    if isinstance(entry, Paper):
        authors = [*entry.authors, entry.organisation or ""]
        if entry.arxiv:
            names.append(entry.arxiv)
        body += [*entry.facts, entry.venue or "", str(entry.year or "")]
    elif isinstance(entry, Stage):
        body += [entry.covers, *entry.symptoms, *entry.measure, *entry.lever_texts]
    elif isinstance(entry, Topic):
        body.append(entry.body)
    elif isinstance(entry, Signal):
        names.append(entry.id.replace("_", " "))
        body += [entry.question, entry.how_to_measure]
    return {
        "names": normalize(" | ".join(names)),
        "authors": normalize(" ".join(authors)),
        "keywords": normalize(" ".join(entry.keywords)),
        "summary": normalize(entry.summary),
        "body": normalize(" ".join(body)),
        "questions": normalize(" | ".join(entry.questions)),
    }


def _previous_history(path: Path) -> dict[str, tuple[str, str, str]]:
    """(first_seen, changed_at, content_hash) by id from the store being replaced."""
    if not path.exists():
        return {}
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = conn.execute(
                "select id, first_seen, changed_at, content_hash from entries"
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return {}
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def is_knowledge_store(path: Path) -> bool:
    """Is ``path`` a store this bot built (a SQLite
    file with our ``meta`` and ``entries`` tables)?
    """
    if not is_sqlite_file(path):
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {
                r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")
            }
            return {"meta", "entries"} <= tables and conn.execute(
                "select 1 from meta where key = 'schema_version'"
            ).fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def check_replaceable(db_path: Path) -> None:
    """Refuse to replace a file the bot did not make: only
    a missing or empty file, or one of our stores.

    The store is rebuilt over its old file, so a mistyped path (``RLMAP_DB=notes.md``) would
    otherwise destroy whatever was there.
    """
    path = Path(db_path)
    if path.is_dir():
        raise ConfigError(f"{path} is a folder, not a knowledge store file")
    if not path.exists() or path.stat().st_size == 0 or is_knowledge_store(path):
        return
    raise ConfigError(
        f"{path} is not a knowledge store (rlmap-bot did not make it), so it is left as it is; "
        "name a new file or an existing store"
    )


#: Adds its own tables to a store being built: ``(connection, entries, index rows)``. The search
#: layer passes its index builders here (``rlmap_bot.search.index.build_store``), so the knowledge
#: layer writes entries without knowing what is built over them.
Indexer = Callable[[sqlite3.Connection, Iterable[Any], list[dict[str, str]]], None]


def build_store(
    root: Path,
    db_path: Path,
    catalog: Catalog | None = None,
    now: dt.datetime | None = None,
    *,
    indexers: Sequence[Indexer],
    stamp: str = "",
) -> Catalog:
    """Validate ``root`` and atomically replace ``db_path``
    with a fresh store, ``indexers`` adding their tables.

    Raises :class:`~rlmap_bot.knowledge.loader.KnowledgeError` before touching
    ``db_path`` when any file is wrong, and :class:`~rlmap_bot.errors.ConfigError`
    when ``db_path`` is not ours to replace or cannot be written. ``stamp`` records what was merged
    beside the files (approved additions, see
    :mod:`rlmap_bot.knowledge.additions`), so a changed set
    is seen as stale.
    """
    root, db_path = Path(root), Path(db_path)
    check_replaceable(db_path)
    # Before this build reads the files, so a write during it changes the signature. (A caller that
    # passes ``catalog`` read them first; the content fingerprint is taken after them too.)
    signature = files_signature(root)
    catalog = catalog or load_catalog(root)
    fingerprint = catalog_fingerprint(root)
    now_text = (now or dt.datetime.now(dt.UTC)).isoformat(timespec="microseconds")
    history = _previous_history(db_path)
    ensure_folder(db_path.parent, f"the knowledge store {db_path}")
    tmp = db_path.with_name(f".{db_path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        # build only: reading a store needs nothing but sqlite3 (about 30 ms less per ask)
        import sqlite_utils

        db = sqlite_utils.Database(tmp)
        rows, docs = [], []
        for entry in catalog.entries.values():
            content_hash = _entry_hash(entry)
            first_seen, changed_at, old_hash = history.get(
                entry.id, (now_text, now_text, content_hash)
            )
            if old_hash != content_hash:
                changed_at = now_text
            rows.append(
                {
                    "id": entry.id,
                    "kind": entry.kind,
                    "title": entry.title,
                    "one_line": entry.one_line,
                    "added": entry.added.isoformat(),
                    "announce": int(entry.announce),
                    "first_seen": first_seen,
                    "changed_at": changed_at,
                    "content_hash": content_hash,
                    "source": catalog.sources.get(entry.id, ""),
                    "data": json.dumps(entry.model_dump(mode="json")),
                }
            )
            docs.append({"id": entry.id, "kind": entry.kind, **search_fields(entry)})
        db.table("entries").insert_all(rows, pk="id")
        db.table("entries").create_index(["kind"])
        db.table("entries").create_index(["added"])
        db.table("docs").insert_all(docs, pk="id")
        # porter: FTS5 stems the surface words, so "rewards"
        # finds "reward"; the text is folded already.
        db.table("docs").enable_fts(
            list(SEARCH_COLUMNS), fts_version="FTS5", tokenize="porter unicode61"
        )
        # One b-tree per term, not one per batch FTS5 flushed while indexing: every term of every
        # query is looked up in each segment. A 100k-entry store had 8 segments; merged into one
        # (sqlite-utils' optimize, FTS5's 'optimize' command), ask's p50 went 0.66 -> 0.44 ms with
        # the same rows found in the same order.
        db.table("docs").optimize()
        for index in indexers:
            index(db.conn, catalog.entries.values(), docs)
        db.table("meta").insert_all(
            [
                {"key": "schema_version", "value": str(SCHEMA_VERSION)},
                {"key": "fingerprint", "value": fingerprint},
                {"key": "files", "value": signature},
                {"key": "knowledge_root", "value": str(root.resolve())},
                {"key": "built_at", "value": now_text},
                {"key": "settings", "value": catalog.settings.model_dump_json()},
                {"key": "additions", "value": stamp},
            ],
            pk="key",
        )
        db.conn.commit()
        db.close()
        os.replace(tmp, db_path)
    except (sqlite3.Error, OSError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"cannot write the knowledge store {db_path}: {reason}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return catalog


@dataclass(frozen=True)
class StoredEntry:
    """An entry as the store keeps it, with its history."""

    entry: Entry
    first_seen: str
    changed_at: str
    source: str
    version: str = ""  # content hash: changes when the entry's content does


class KnowledgeStore:
    """Read access to a built store; the file stays the truth and never changes under it.

    Opening reads every row but validates none: an entry becomes a model the first time it is
    asked for, with its kind's model alone (``ENTRY_MODELS``), and the model is kept in place of
    its JSON. A plain ``ask`` shows a few entries, so its start builds the validators of those
    kinds only (the models are declared with ``defer_build``, knowledge/schema.py); the whole
    catalog and the settings are validated when first used (``catalog``, ``settings``).
    """

    def __init__(self, db_path: Path):
        self.path = Path(db_path)
        self.conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        self.conn.execute(f"pragma mmap_size = {MMAP_BYTES}")
        self.meta = dict(self.conn.execute("select key, value from meta").fetchall())
        self._kinds: dict[str, str] = {}  # id -> kind, in the store's order
        # id -> (data, first_seen, changed_at, source, content hash) of an entry not validated yet
        self._unread: dict[str, tuple[str, str, str, str, str]] = {}
        for id_, kind, *row in self.conn.execute(
            "select id, kind, data, first_seen, changed_at, source, content_hash from entries"
        ):
            self._kinds[id_] = kind
            self._unread[id_] = tuple(row)
        self._stored: dict[str, StoredEntry] = {}  # the entries validated so far
        self._reading = threading.Lock()  # one thread validates an entry; the others wait for it
        self._names: dict[str, set[str]] | None = None
        self._doc_ids: dict[int, str] = {}  # search index row -> entry id, filled as rows are found

    @cached_property
    def settings(self) -> CatalogSettings:
        return CatalogSettings.model_validate_json(self.meta.get("settings", "{}"))

    @cached_property
    def catalog(self) -> Catalog:
        """Every entry, validated (the diagnosis engine, cards and listings use the whole map)."""
        stored = self.history()
        return Catalog(
            entries={s.entry.id: s.entry for s in stored},
            sources={s.entry.id: s.source for s in stored},
            settings=self.settings,
        )

    def names(self) -> dict[str, set[str]]:
        """Titles and aliases (lower case, accents folded,
        spaces collapsed) -> the ids they name.
        """
        if self._names is None:
            from rlmap_bot.text import fold

            names: dict[str, set[str]] = {}
            for entry in self.catalog.entries.values():
                for name in (entry.title, *entry.aliases):
                    names.setdefault(" ".join(fold(name).lower().split()), set()).add(entry.id)
            self._names = names
        return self._names

    def close(self) -> None:
        self.conn.close()

    def __del__(self) -> None:
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def get(self, entry_id: str) -> Entry | None:
        stored = self.stored(entry_id)
        return stored.entry if stored else None

    def doc_ids(self, rowids: Sequence[int]) -> list[str]:
        """The entry ids of search index rows (``docs``, ``docs_fts``), in the order given.

        A full-text query that reads only rowids does less work per matching row than one joined
        to ``docs`` for the ids (no lookup for rows past its limit); the few ids it returns are
        read here once each and remembered, since a store never changes.
        """
        known = self._doc_ids
        missing = [r for r in rowids if r not in known]
        if missing:
            marks = ", ".join("?" * len(missing))
            known.update(
                self.conn.execute(f"select rowid, id from docs where rowid in ({marks})", missing)
            )
        return [known[r] for r in rowids if r in known]

    def stored(self, entry_id: str) -> StoredEntry | None:
        found = self._stored.get(entry_id)
        if found is not None or entry_id not in self._kinds:
            return found
        with self._reading:
            found = self._stored.get(entry_id)
            if found is None:
                data, first_seen, changed_at, source, version = self._unread[entry_id]
                model = ENTRY_MODELS[self._kinds[entry_id]]
                entry = model.model_validate_json(data, context=_READ_BACK)
                found = self._stored[entry_id] = StoredEntry(
                    entry, first_seen, changed_at, source, version
                )
                del self._unread[entry_id]  # the model holds it now
        return found

    def _every(self, kind: str | None = None) -> list[StoredEntry]:
        found = (self.stored(i) for i, k in self._kinds.items() if kind is None or k == kind)
        return [s for s in found if s is not None]

    def all(self, kind: str | None = None) -> list[Entry]:
        return [s.entry for s in self._every(kind)]

    def history(self) -> list[StoredEntry]:
        return self._every()

    def counts(self) -> dict[str, int]:
        return dict(
            self.conn.execute(
                "select kind, count(*) from entries group by kind order by kind"
            ).fetchall()
        )

    def linked(self, entry_id: str) -> list[Entry]:
        """Entries this one links to or that link to it, for 'related' buttons and `show`."""
        entry = self.get(entry_id)
        if entry is None:
            return []
        ids: list[str] = list(entry.related)
        if isinstance(entry, Paper):
            ids += [*entry.stages, *entry.subtopics]
        elif isinstance(entry, Stage):
            ids += entry.subtopics + [p.id for p in self.catalog.papers_for(entry.id)]
        elif isinstance(entry, Topic):
            ids += ([entry.parent] if entry.parent else []) + list(entry.stages)
            ids += [t.id for t in self.catalog.children(entry.id)] + [
                p.id for p in self.catalog.papers_for(entry.id)
            ]
        ids += [e.id for e in self.catalog.entries.values() if entry_id in e.related]
        seen: dict[str, None] = {}
        for i in ids:
            if i != entry_id and i in self._kinds:
                seen[i] = None
        return [e for e in (self.get(i) for i in seen) if e is not None]


def store_status(root: Path, db_path: Path, stamp: str | None = None) -> str:
    """'missing', 'stale' or 'fresh': whether ``db_path``
    reflects ``root`` (and, given, the additions ``stamp``).
    """
    if not Path(db_path).exists():
        return "missing"
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        try:
            meta = dict(conn.execute("select key, value from meta").fetchall())
        finally:
            conn.close()
    except sqlite3.Error:
        return "missing"
    if meta.get("schema_version") != str(SCHEMA_VERSION):
        return "stale"
    if meta.get("knowledge_root") != str(Path(root).resolve()):
        return "stale"
    if stamp is not None and meta.get("additions", "") != stamp:
        return "stale"
    if not meta.get("fingerprint"):
        return "stale"
    if meta.get("files") == files_signature(root):
        return "fresh"  # no file written since the build (files_signature)
    return "fresh" if meta["fingerprint"] == catalog_fingerprint(root) else "stale"
