"""Ask: FTS5 (BM25) recall, then rapidfuzz re-ranking, then a confidence floor.

Recall is cheap and broad: exact names and arXiv ids from a dictionary, and a
BM25 query over the normalised columns, with typo-corrected words added from
the index vocabulary.  Re-ranking scores each candidate on three things a
person would notice: how closely a name matches the question (rapidfuzz), how
much of the question's informative words the entry covers (IDF-weighted), and
how close the question is to an example question the curators wrote.  A
question that clears no entry above the floor gets an honest "nothing known".
"""

from __future__ import annotations

import logging
import math
import sqlite3
from functools import lru_cache

from pydantic import BaseModel, Field
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from rlmap_bot.knowledge.cards import display_kind
from rlmap_bot.knowledge.schema import Paper
from rlmap_bot.knowledge.store import KnowledgeStore
from rlmap_bot.text import ARXIV, STOPWORDS, content_tokens, normalize_content

RECALL = 40
_GUESS_WEIGHT = 0.6
log = logging.getLogger(__name__)
_MASS_SCALE = 9.0
_MASS_SHARE = 0.75
_BODY_WEIGHT = 0.8  # a word found only in the body is weaker evidence than one in a name
# Column weights for bm25(): names, authors, keywords, body.
_BM25_WEIGHTS = "10.0, 6.0, 4.0, 1.0"
_ORG_WORDS = frozenset(
    """seed team agent adaptive lab research group institute university college school brain mind deep open
    air inclusion sea edge foundation center centre company inc ltd corp ai""".split()
)
_GENERIC_NAME_WORDS = STOPWORDS | {"rl", "llm", "model", "learning", "reinforcement", "language", "deep", "large"}


class Hit(BaseModel):
    """One matching entry, with why it matched."""

    kind: str
    id: str
    title: str
    score: float = Field(ge=0, le=1)
    one_line: str
    why: list[str] = Field(default_factory=list)
    byline: str | None = None
    url: str | None = None
    verification: str | None = Field(default=None, description="For papers: verified, partial or unverified.")


class Answer(BaseModel):
    """The best matches for a question, best first; empty when nothing clears the floor."""

    query: str
    results: list[Hit]
    corrections: dict[str, str] = Field(default_factory=dict, description="Typo -> word searched instead.")
    close_call: bool = Field(default=False, description="The top two are too close to pick one.")
    known_topics: list[str] = Field(default_factory=list, description="What the bot knows, when nothing matched.")


class Searcher:
    """Search over one opened :class:`KnowledgeStore`; build once, ask many times."""

    def __init__(self, store: KnowledgeStore, floor: float | None = None):
        self.store = store
        self.floor = float(floor if floor is not None else store.settings.search_floor)
        conn = store.conn
        self.total_docs = max(1, conn.execute("select count(*) from docs").fetchone()[0])
        self.doc_freq: dict[str, int] = dict(conn.execute("select term, doc from docs_vocab"))
        self._vocab_by_len: dict[int, list[str]] = {}
        for term in self.doc_freq:
            if term.isalpha() and len(term) >= 4:
                self._vocab_by_len.setdefault(len(term), []).append(term)
        # A per-searcher cache: it goes away with the searcher when the catalog is reloaded.
        self._doc_view = lru_cache(maxsize=8192)(self._doc_view_uncached)
        self._known = [s.title for s in store.catalog.stages] + sorted(t.title for t in store.all("topic"))
        self.names: dict[str, set[str]] = {}
        self.arxiv: dict[str, str] = {}
        self.authors: dict[str, set[str]] = {}
        for entry in store.all():
            for name in (entry.title, *entry.aliases):
                key = normalize_content(name)
                if key:
                    self.names.setdefault(key, set()).add(entry.id)
            if isinstance(entry, Paper):
                if entry.arxiv:
                    self.arxiv[entry.arxiv] = entry.id
                for person in entry.authors:
                    for tok in content_tokens(person):
                        if len(tok) >= 3:
                            self.authors.setdefault(tok, set()).add(entry.id)
                for tok in content_tokens(entry.organisation or ""):
                    # "ByteDance Seed", "Adaptive Agent Team": ordinary words in a name are not the name.
                    if len(tok) >= 3 and tok not in _ORG_WORDS:
                        self.authors.setdefault(tok, set()).add(entry.id)

    # -- recall ---------------------------------------------------------------------------
    def idf(self, term: str) -> float:
        df = self.doc_freq.get(term, 0)
        return math.log(1 + (self.total_docs + 1) / (df + 0.5))

    def correct(self, word: str) -> str | None:
        """The closest index word for a word the index has never seen (typos)."""
        if word in self.doc_freq or len(word) < 4 or not word.isalpha():
            return None
        pool: list[str] = []
        for size in range(len(word) - 2, len(word) + 3):
            pool.extend(self._vocab_by_len.get(size, ()))
        if not pool:
            return None
        # OSA counts a swap of two letters ("rewrad") as one edit, as people make them.
        found = process.extract(word, pool, scorer=OSA.normalized_similarity, score_cutoff=0.7, limit=5)
        if not found:
            return None
        # Of equally close words, prefer the more common one.
        return max(found, key=lambda m: (round(m[1], 6), self.doc_freq.get(m[0], 0)))[0]

    def _fts(self, terms: list[str]) -> list[str]:
        """Ids of the best BM25 matches (recall only; the ranking is re-done below)."""
        if not terms:
            return []
        # Very common words only slow recall down and rank nothing; keep rarer ones.
        common = max(self.total_docs * 0.05, 50)
        rare = [t for t in terms if self.doc_freq.get(t, 0) <= common] or terms
        match = " OR ".join('"' + t.replace('"', "") + '"' for t in rare)
        sql = (
            f"select docs.id from docs_fts "
            f"join docs on docs.rowid = docs_fts.rowid where docs_fts match ? order by bm25(docs_fts, {_BM25_WEIGHTS}) limit ?"
        )
        try:
            return [r[0] for r in self.store.conn.execute(sql, (match, RECALL))]
        except sqlite3.Error as exc:  # an odd query must never break ask; the other recall paths still run
            log.warning("FTS query %r failed: %s", match, exc)
            return []

    # -- scoring --------------------------------------------------------------------------
    def _doc_view_uncached(self, entry_id: str) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...], frozenset[str]]:
        """Token sets of one entry, read from the already-normalised docs table."""
        entry = self.store.get(entry_id)
        assert entry is not None
        names_col, authors, keywords, body = self.store.conn.execute(
            "select names, authors, keywords, body from docs where id = ?", (entry_id,)
        ).fetchone()
        all_tokens = frozenset(f"{names_col} {authors} {keywords} {body}".split())
        names = tuple(n for n in (normalize_content(x) for x in (entry.title, *entry.aliases)) if n)
        questions = tuple(normalize_content(q) for q in entry.questions)
        name_tokens = frozenset(names_col.split()) | frozenset(keywords.split())
        return all_tokens, names, questions, name_tokens

    def ask(self, question: str, limit: int = 5) -> Answer:
        question = question.strip()
        words = content_tokens(question)
        corrections: dict[str, str] = {}
        terms: list[str] = []
        for w in words:
            fixed = self.correct(w)
            if fixed and fixed != w:
                corrections[w] = fixed
                terms.append(fixed)
            else:
                terms.append(w)
        query_norm = " ".join(terms)
        candidates: dict[str, list[str]] = {}

        def add(entry_id: str, reason: str) -> None:
            candidates.setdefault(entry_id, [])
            if reason and reason not in candidates[entry_id]:
                candidates[entry_id].append(reason)

        exact: set[str] = set()
        named: set[str] = set()
        for arxiv_id in ARXIV.findall(question):
            if arxiv_id in self.arxiv:
                add(self.arxiv[arxiv_id], f"arXiv {arxiv_id}")
                exact.add(self.arxiv[arxiv_id])
        guessed = set(corrections.values())
        # Names count only as typed: a guess ("GSPO" -> "grpo") is no evidence of a name.
        if query_norm in self.names and not corrections:
            for entry_id in self.names[query_norm]:
                add(entry_id, "name")
                exact.add(entry_id)
        # Names inside a longer question ("what does R1 say about ...").
        for n in range(1, min(4, len(terms)) + 1):
            for i in range(len(terms) - n + 1):
                if any(t in guessed for t in terms[i : i + n]):
                    continue
                gram = " ".join(terms[i : i + n])
                if gram in self.names and (n > 1 or gram not in _GENERIC_NAME_WORDS):
                    for entry_id in self.names[gram]:
                        add(entry_id, f"name '{gram}'")
                        named.add(entry_id)
        author_hits: dict[str, str] = {}
        for t in terms:
            if t in guessed:
                continue
            written = self.authors.get(t, ())
            if len(written) > RECALL:
                continue  # a very common name or word; BM25 ranks those through the authors column
            for entry_id in written:
                author_hits[entry_id] = t
                add(entry_id, "")
        for entry_id in self._fts(terms):
            add(entry_id, "")

        # A corrected word is a guess, so it explains less of the question than a word the
        # index knows; an unknown word keeps its full (high) weight and explains nothing.
        weights = {t: self.idf(t) for t in terms}
        total_weight = sum(weights.values()) or 1.0
        scored: list[tuple[float, Hit]] = []
        for entry_id, reasons in candidates.items():
            entry = self.store.get(entry_id)
            if entry is None:
                continue
            all_tokens, names, questions, name_tokens = self._doc_view(entry_id)
            covered = [t for t in terms if t in all_tokens]
            mass = sum(
                weights[t] * (_GUESS_WEIGHT if t in guessed else 1.0) * (1.0 if t in name_tokens else _BODY_WEIGHT)
                for t in covered
            )
            # Long natural questions carry filler words the catalog never uses; several
            # informative words matched is evidence even when the share matched is small.
            coverage = max(mass / total_weight, _MASS_SHARE * (1.0 - math.exp(-mass / _MASS_SCALE)))
            name_sim = 0.0
            if query_norm:
                name_sim = max((_name_similarity(query_norm, n) for n in names), default=0.0)
            question_sim = 0.0
            if len(terms) >= 3 and questions:
                question_sim = max(fuzz.token_set_ratio(query_norm, q) for q in questions) / 100.0
            # A name match counts in proportion to how much of the question it explains:
            # "reward" inside a question about expense reports is not an answer.
            score = 0.5 * coverage + 0.3 * name_sim * min(1.0, coverage / 0.6) + 0.2 * question_sim * coverage
            if len(terms) >= 3 and len(covered) <= 1 and entry_id not in named:
                # One shared word in a longer question ("who won the football match") is chance.
                score = min(score, self.floor * 0.9)
            if entry_id in exact:
                score = max(score, 0.97)
            if entry_id in author_hits:
                score = max(score, 0.5 + 0.4 * coverage)
                reasons.append(f"author/organisation '{author_hits[entry_id]}'")
            score = min(1.0, score)
            if name_sim >= 0.85 and not any(r.startswith(("name", "arXiv")) for r in reasons):
                reasons.append("title or alias is close")
            if question_sim >= 0.7:
                reasons.append("close to a curated question")
            matched = [t for t in covered if t in name_tokens] or covered
            if matched:
                reasons.append("words: " + ", ".join(matched[:5]))
            hit = Hit(
                kind=display_kind(entry),
                id=entry.id,
                title=entry.title,
                score=round(score, 4),
                one_line=entry.one_line,
                why=reasons,
                byline=(entry.byline or None) if isinstance(entry, Paper) else None,
                url=entry.link if isinstance(entry, Paper) else None,
                verification=entry.verification if isinstance(entry, Paper) else None,
            )
            scored.append((score, hit))
        scored.sort(key=lambda pair: (-pair[0], pair[1].title))
        results = [hit for score, hit in scored if score >= self.floor][: max(1, limit)]
        close = len(results) >= 2 and results[0].score - results[1].score < 0.03
        known = [] if results else self.known_topics()
        # Show a spelling correction only when it found something.
        return Answer(query=question, results=results, corrections=corrections if results else {},
                      close_call=close, known_topics=known)

    def known_topics(self) -> list[str]:
        """What the bot can talk about: the stages and the topic with its subtopics."""
        return list(self._known)


def _name_similarity(query: str, name: str) -> float:
    """How well a title or alias matches the question, 0-1.

    A short name that appears whole in a longer question counts fully; a long
    title that the question abbreviates counts by its token overlap.
    """
    if not name:
        return 0.0
    set_ratio = fuzz.token_set_ratio(query, name)
    sort_ratio = fuzz.token_sort_ratio(query, name)
    name_len = len(name.split())
    if name_len == 1 and len(name) <= 3 and name not in query.split():
        return sort_ratio / 100.0 * 0.5
    return (0.75 * set_ratio + 0.25 * sort_ratio) / 100.0

