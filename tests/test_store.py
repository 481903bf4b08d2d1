"""The knowledge store: built with FTS5, swapped atomically, history kept, rebuilt when stale."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor

from rlmap_bot.core import Core
from rlmap_bot.knowledge.store import KnowledgeStore, store_status
from rlmap_bot.search.index import build_store


def test_build_creates_entries_and_fts5(knowledge_copy, tmp_path):
    db = tmp_path / "kb.db"
    catalog = build_store(knowledge_copy, db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from entries").fetchone()[0] == len(catalog.entries)
        sql = conn.execute("select sql from sqlite_master where name='docs_fts'").fetchone()[0]
        assert "fts5" in sql.lower()
        hits = conn.execute(
            "select rowid from docs_fts where docs_fts match 'overoptimization'"
        ).fetchall()
        assert hits


def test_history_survives_rebuilds_and_marks_changes(knowledge_copy, tmp_path):
    db = tmp_path / "kb.db"
    t0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    t1 = dt.datetime(2026, 11, 8, tzinfo=dt.UTC)
    build_store(knowledge_copy, db, now=t0)
    path = knowledge_copy / "papers" / "ppo.yaml"
    path.write_text(path.read_text().replace("summary: ", "summary: Updated. ", 1))
    (knowledge_copy / "papers" / "zz-new.yaml").write_text(
        "id: zz-new\nkind: paper\ntitle: A New Paper\nsummary: Something new.\nverification: "
        "verified\nstages: [reward]\nadded: 2026-11-08\n"
    )
    build_store(knowledge_copy, db, now=t1)
    store = KnowledgeStore(db)
    ppo, dapo, new = store.stored("ppo"), store.stored("dapo"), store.stored("zz-new")
    assert ppo.first_seen.startswith("2026-11-01") and ppo.changed_at.startswith("2026-11-08")
    assert dapo.first_seen.startswith("2026-11-01") and dapo.changed_at.startswith("2026-11-01")
    assert new.first_seen.startswith("2026-11-08")


def test_readers_keep_the_old_file_during_a_swap(knowledge_copy, tmp_path):
    db = tmp_path / "kb.db"
    build_store(knowledge_copy, db)
    old = KnowledgeStore(db)
    path = knowledge_copy / "papers" / "ppo.yaml"
    path.write_text(path.read_text().replace("title: ", "title: Renamed ", 1))
    build_store(knowledge_copy, db)
    # The open reader still sees the file it opened; a new reader sees the new one.
    old_title = old.conn.execute("select title from entries where id='ppo'").fetchone()[0]
    assert not old_title.startswith("Renamed")
    assert KnowledgeStore(db).get("ppo").title.startswith("Renamed")


def test_core_builds_on_first_use_and_when_files_change(knowledge_copy, tmp_path):
    db = tmp_path / "kb.db"
    assert store_status(knowledge_copy, db) == "missing"
    core = Core(knowledge_copy, db, state_url=tmp_path / "state.db")
    assert core.get("reward").title == "Reward quality"
    assert store_status(knowledge_copy, db) == "fresh"
    path = knowledge_copy / "stages" / "reward.yaml"
    # A change that leaves every entry as it was (a
    # comment) still counts: the store is rebuilt, quietly.
    path.write_text(path.read_text() + "\n# touched\n")
    assert store_status(knowledge_copy, db) == "stale"
    core2 = Core(knowledge_copy, db, state_url=tmp_path / "state.db")
    assert core2.warning is None
    assert store_status(knowledge_copy, db) == "fresh"


def test_an_entry_first_read_by_several_threads_at_once_is_one_model(built_db):
    """An entry is validated the first time it is asked for (KnowledgeStore); threads asking
    together get the one model, and every entry is read once however the reads interleave."""
    store = KnowledgeStore(built_db)
    ids = [e.id for e in KnowledgeStore(built_db).all()]
    with ThreadPoolExecutor(8) as pool:
        rounds = list(pool.map(lambda _: [store.get(i) for i in ids], range(8)))
    assert all(a is b for got in rounds for a, b in zip(got, rounds[0], strict=True))
    assert [e.id for e in rounds[0]] == ids
    assert all(e is s.entry for e, s in zip(store.all(), store.history(), strict=True))


def test_a_file_touched_but_not_edited_leaves_the_store_fresh(knowledge_copy, tmp_path):
    db = tmp_path / "kb.db"
    build_store(knowledge_copy, db)
    path = knowledge_copy / "stages" / "reward.yaml"
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a new time, the same bytes
    assert store_status(knowledge_copy, db) == "fresh"  # the content fingerprint decides


def test_freshness_reads_no_file_whose_size_and_time_are_as_built(knowledge_copy, tmp_path):
    """The files' sizes and modification times are compared first and the content is read only
    when one differs: an edit that keeps both (as only a deliberate reset of the time does) is not
    read, which shows the files are not read on a start that finds them as they were built."""
    db = tmp_path / "kb.db"
    build_store(knowledge_copy, db)
    path = knowledge_copy / "stages" / "reward.yaml"
    stat = path.stat()
    text = path.read_text()
    path.write_text(text.replace("Reward quality", "Reward qualitY", 1))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    assert store_status(knowledge_copy, db) == "fresh"
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert store_status(knowledge_copy, db) == "stale"


def test_reload_swaps_in_new_entries(knowledge_copy, tmp_path):
    core = Core(knowledge_copy, tmp_path / "kb.db", state_url=tmp_path / "state.db")
    assert core.get("zz-new") is None
    (knowledge_copy / "papers" / "zz-new.yaml").write_text(
        "id: zz-new\nkind: paper\ntitle: Quokka Scaling\nsummary: Quokkas scale "
        "well.\nverification: verified\nstages: [reward]\nadded: 2026-12-01\n"
    )
    counts = core.reload()
    assert counts["paper"] >= 1
    assert core.get("zz-new").title == "Quokka Scaling"
    assert core.ask("quokka scaling").results[0].id == "zz-new"


def test_the_full_text_index_is_one_segment_however_many_entries(knowledge_copy, tmp_path):
    """FTS5 writes a segment each time its pending terms fill up while indexing; the build merges
    them, so a query looks each term up once (docs/measurements.md, "Ask latency")."""
    from rlmap_bot.knowledge.loader import Catalog, load_catalog
    from rlmap_bot.knowledge.schema import Paper

    catalog = load_catalog(knowledge_copy)
    entries = dict(catalog.entries)
    for i in range(600):  # long, varied summaries: enough pending terms for several flushes
        words = " ".join(f"w{i}x{j}" for j in range(300))
        entries[f"bulk-{i}"] = Paper(
            id=f"bulk-{i}",
            kind="paper",
            title=f"Bulk paper {i}",
            summary=f"Synthetic filler {words}.",
            verification="verified",
            stages=["rollouts"],
            added=dt.date(2026, 1, 1),
        )
    big = Catalog(entries=entries, sources=dict(catalog.sources), settings=catalog.settings)
    db = tmp_path / "big.db"
    build_store(knowledge_copy, db, catalog=big)
    conn = sqlite3.connect(db)
    segments = conn.execute("select count(distinct segid) from docs_fts_idx").fetchone()[0]
    found = conn.execute(
        "select count(*) from docs_fts where docs_fts match 'w599x299'"
    ).fetchone()[0]
    conn.close()
    assert (segments, found) == (1, 1)
