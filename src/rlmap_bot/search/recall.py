"""Recall: independent ranked lists of entries, each one kind of evidence.

* ``bm25``: FTS5 BM25 over every field (names, byline, keywords, summary,
  details, curated questions), the list that finds natural descriptions;
* ``names``: titles and aliases that appear whole in the question, longest
  first; a question naming two entries puts both here;
* ``authors``: entries whose byline the question cites: a name whole, a person by a word of the
  name, an organisation by its first word (search/bylines.py);
* ``questions``: BM25 over the curators' example questions only;
* ``near``: BM25 over entries where two neighbouring words of the question stand
  near each other ("bigger model", "compute goes up"): word order says what a bag of
  words cannot, that "larger" qualifies "model" and not "batch";
* ``arxiv``: arXiv ids.

No list vetoes another: :mod:`fuse` combines them by rank.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise

from rlmap_bot.search.params import (
    COMMON_DOC_SHARE,
    COMMON_MIN_DOCS,
    MIN_CORRECTED_NAME,
    RECALL,
    Params,
)
from rlmap_bot.search.query import ASKS_AUTHOR, Query


def _failed(match: str, exc: sqlite3.Error) -> None:
    """Log a full-text query that failed. logging is imported here, when one does: an ask whose
    queries all run never loads it (about 4 ms of a cold start, python -X importtime)."""
    import logging

    logging.getLogger(__name__).warning("FTS query %r failed: %s", match, exc)


@dataclass
class NameMatch:
    entry_id: str
    name: str  # the title or alias as curated
    is_title: bool
    span: tuple[int, int]  # word positions in the question


@dataclass
class Recall:
    lists: dict[str, list[str]] = field(default_factory=dict)
    names: list[NameMatch] = field(default_factory=list)
    authors: dict[str, list[str]] = field(default_factory=dict)  # entry id -> byline labels matched
    arxiv: dict[str, str] = field(default_factory=dict)  # entry id -> arXiv id
    ties: dict[str, dict[str, int]] = field(
        default_factory=dict
    )  # list -> entry id -> tier (equal evidence)

    @cached_property
    def named(self) -> frozenset[str]:
        """Entries named by separate parts of the question, when it names two or more (worked out
        once: the ranking, the answer and the one-borrowed-word rule each read it)."""
        spans: dict[str, tuple[int, int]] = {}
        for m in self.names:
            if m.entry_id not in spans and not any(_overlap(m.span, s) for s in spans.values()):
                spans[m.entry_id] = m.span
        return frozenset(spans) if len(spans) >= 2 else frozenset()


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _fts_terms(query: Query, lexicon, common: float) -> list[str]:
    terms = []
    for w in query.words:
        if query.authorship and w.surface in ASKS_AUTHOR:
            # "who proposed GRPO" is about GRPO: "proposes" in another entry's text is no match
            continue
        if w.kind == "known":
            terms.append(w.surface)
        elif w.kind == "corrected":
            assert w.fixed is not None, "a corrected word always carries its correction (query.py)"
            terms.append(w.fixed)
    # Very common words only slow recall down at scale and rank nothing; keep rarer ones.
    rare = [t for t in terms if lexicon.terms.get(_stem_of(query, t), (0, 0, 0))[1] <= common]
    return rare or terms


def _near_pairs(terms: list[str], gap: int) -> str:
    """An FTS5 query for any two neighbouring terms within ``gap`` words of each other."""
    quoted = ['"' + t.replace('"', "") + '"' for t in terms]
    pairs = dict.fromkeys(f"NEAR({a} {b}, {gap})" for a, b in pairwise(quoted) if a != b)
    return " OR ".join(pairs)


def _stem_of(query: Query, surface: str) -> str:
    for w in query.words:
        if w.surface == surface or w.fixed == surface:
            return w.stem
    return surface


def common_limit(lexicon) -> float:
    """How many entries a word may be in and still be searched (params.COMMON_DOC_SHARE)."""
    return max(lexicon.docs * COMMON_DOC_SHARE, COMMON_MIN_DOCS)


def _fts(store, match: str, weights: tuple[float, ...]) -> list[str]:
    # Rowids only: the store maps the few returned to entry ids (KnowledgeStore.doc_ids).
    sql = (
        f"select rowid from docs_fts where docs_fts match ? order by bm25(docs_fts, "
        f"{', '.join(str(w) for w in weights)}) limit ?"
    )
    try:
        rowids = [r[0] for r in store.conn.execute(sql, (match, RECALL))]
    except sqlite3.Error as exc:  # an odd query must never break ask; the other lists still run
        _failed(match, exc)
        return []
    return store.doc_ids(rowids)


def _nearest_questions(conn: sqlite3.Connection, match: str) -> list[str]:
    """Entries by their single curated question nearest
    to the question (BM25 over one question each).
    """
    sql = (
        "select id from search_questions where search_questions match ? order by "
        "bm25(search_questions) limit ?"
    )
    try:
        rows = conn.execute(sql, (match, RECALL * 4)).fetchall()
    except sqlite3.Error as exc:
        _failed(match, exc)
        return []
    return list(dict.fromkeys(r[0] for r in rows))[:RECALL]


def recall(query: Query, lexicon, store, params: Params) -> Recall:
    out = Recall()
    for arxiv_id in query.arxiv:
        if arxiv_id in lexicon.arxiv:
            out.arxiv[lexicon.arxiv[arxiv_id]] = arxiv_id
    out.lists["arxiv"] = list(out.arxiv)

    terms = _fts_terms(query, lexicon, common_limit(lexicon))
    if terms:
        quoted = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
        out.lists["bm25"] = _fts(store, quoted, params.columns)
        near = _near_pairs(terms, params.near_gap) if params.w_near else ""
        if near:  # two different terms at least
            out.lists["near"] = _fts(store, near, params.columns)
        if params.question_list == "each":
            out.lists["questions"] = _nearest_questions(store.conn, quoted)
        else:
            out.lists["questions"] = _fts(store, f"questions : ({quoted})", (0, 0, 0, 0, 0, 1))
    out.names = _names(query, lexicon, params)
    out.lists["names"] = list(dict.fromkeys(m.entry_id for m in out.names))
    out.authors = _authors(query, lexicon, params)
    out.lists["authors"] = sorted(out.authors, key=lambda i: -len(out.authors[i]))
    out.ties["authors"] = {i: -len(labels) for i, labels in out.authors.items()}
    return out


def _names(query: Query, lexicon, params: Params) -> list[NameMatch]:
    """Titles and aliases found whole in the question: longer names first, titles before aliases."""
    seq = query.words
    usable = [
        w.kind == "known" or (w.kind == "corrected" and len(w.surface) >= MIN_CORRECTED_NAME)
        for w in seq
    ]
    whole = len(seq)
    found: list[tuple[int, int, int, NameMatch]] = []
    for n in range(min(lexicon.max_name_tokens, len(seq)), 0, -1):
        for i in range(len(seq) - n + 1):
            if not all(usable[i : i + n]):
                continue
            key = " ".join(w.stem for w in seq[i : i + n])
            for entry_id, name, is_title, zipf, surface in lexicon.names.get(key, ()):
                if n == 1:
                    # A one-word name counts only as written: "seeds" is a noun, "SEED" a name.
                    if (seq[i].fixed or seq[i].surface) != surface:
                        continue
                    # An everyday one-word name ("Rapid", "Forge")
                    # is a name only when it is the question.
                    if zipf >= params.name_zipf and whole > 1:
                        continue
                found.append(
                    (-n, -int(is_title), i, NameMatch(entry_id, name, is_title, (i, i + n)))
                )
    found.sort(key=lambda t: t[:3])
    return [t[3] for t in found]


def byline_rows(lexicon, stem_: str) -> list[tuple[str, str, bool, float]]:
    """The byline rows of a word, or none when it sits on more entries than a list holds: a word
    that common ("team", "ai") names no one."""
    return lexicon.authors.get(stem_, []) if lexicon.byline_entries(stem_) <= RECALL else []


def _authors(query: Query, lexicon, params: Params) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    surfaces = {w.surface for w in query.words if w.kind == "known"}
    for w in query.words:
        if w.kind != "known":
            continue  # a guessed word is no evidence of a person
        # A very common byline word (on more entries than a list holds) gives nothing here; BM25
        # still ranks it through the byline column.
        for entry_id, label, person, zipf in byline_rows(lexicon, w.stem):
            if zipf >= params.author_zipf and not query.authorship:
                continue  # "team", "brain", "pan": a byline word only when the question asks who
            if not lexicon.cites(label, person, w.surface, surfaces):
                continue  # "AI" of DeepSeek-AI, "Zürich" of ETH Zürich: no one's name alone
            labels = out.setdefault(entry_id, [])
            if label not in labels:
                labels.append(label)
    return out
