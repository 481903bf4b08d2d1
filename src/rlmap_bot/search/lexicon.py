"""Search-support tables, written into the store at ``kb build`` time.

Everything ask needs to know about words is computed here once, so a fresh
``rlmap-bot ask`` never loads wordfreq (about 0.2 s) and reads a few small
tables instead:

* ``search_terms``: each index stem with how often the catalog uses it and how
  often English does (wordfreq's Zipf scale, summed over the catalog's forms of
  the stem): the two halves of the off-topic evidence (see ``offtopic``);
* ``search_vocab``: the catalog's surface words, which typos are corrected to;
* ``search_english``: English words (wordfreq Zipf >= ``ENGLISH_TABLE_MIN``),
  so real words are never "corrected" (stuck -> stack);
* ``search_names`` / ``search_authors``: titles, aliases and byline words by
  stem, with how common they are as English words;
* ``search_questions``: every curated example question on its own row (FTS5), so
  a question can be matched to the single curated question nearest to it, not to
  an entry's questions run together;
* ``search_markers``: the most common words of other languages that are not English
  words ("pourquoi", "aber", "pero"), so a question in another language is noticed.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter
from collections.abc import Iterable

from rlmap_bot.knowledge.schema import Entry, Paper
from rlmap_bot.search import bylines
from rlmap_bot.search.params import ENGLISH_TABLE_MIN, MARKER_MAX_ENGLISH_ZIPF, MARKER_TOP
from rlmap_bot.text import content_tokens, content_words, normalize, normalize_content, stem, words

# Other languages' commonest words (wordfreq) mark a question as not English (the thresholds:
# search/params.py). The languages are those wordfreq lists with large corpora in Latin script;
# other scripts are noticed by their letters (query.py).
MARKER_LANGUAGES = (
    "es",
    "fr",
    "de",
    "it",
    "pt",
    "nl",
    "sv",
    "da",
    "nb",
    "pl",
    "cs",
    "tr",
    "id",
    "ro",
    "hu",
    "fi",
)

# A bound on each lookup remembered by a lexicon: questions repeat words, not vocabularies.
CACHE_WORDS = 100_000


def _zipf(freq: float) -> float:
    return math.log10(freq) + 9.0 if freq > 0 else 0.0


def build_search_tables(
    conn: sqlite3.Connection, entries: Iterable[Entry], docs: list[dict[str, str]]
) -> None:
    """Write the search tables for ``entries`` (whose index rows are ``docs``) into ``conn``."""
    entries = list(entries)
    from wordfreq import get_frequency_dict  # build time only

    english = get_frequency_dict("en", wordlist="large")
    cf: Counter[str] = Counter()
    df: Counter[str] = Counter()
    surface_df: Counter[str] = Counter()
    forms: dict[str, set[str]] = {}
    for doc in docs:
        seen: set[str] = set()
        seen_surface: set[str] = set()
        for column in ("names", "authors", "keywords", "summary", "body", "questions"):
            for word in doc[column].split():
                s = stem(word)
                cf[s] += 1
                seen.add(s)
                forms.setdefault(s, set()).add(word)
                if word.isalpha() and len(word) >= 3:
                    seen_surface.add(word)
        df.update(seen)
        surface_df.update(seen_surface)
    total = sum(cf.values())
    conn.execute(
        "create table search_terms (stem text primary key, cf integer, df integer, en_zipf real)"
    )
    conn.executemany(
        "insert into search_terms values (?, ?, ?, ?)",
        (
            (s, n, df[s], round(_zipf(sum(english.get(f, 0.0) for f in forms[s])), 3))
            for s, n in cf.items()
        ),
    )
    conn.execute("create table search_vocab (word text primary key, stem text, df integer)")
    conn.executemany(
        "insert into search_vocab values (?, ?, ?)",
        ((w, stem(w), n) for w, n in surface_df.items()),
    )
    conn.execute("create table search_english (word text primary key, zipf real) without rowid")
    conn.executemany(
        "insert into search_english values (?, ?)",
        (
            (w, round(z, 2))
            for w, f in english.items()
            if (z := _zipf(f)) >= ENGLISH_TABLE_MIN and w.isalpha()
        ),
    )
    conn.execute(
        "create table search_names (key text, id text, name text, is_title integer, zipf real, "
        "surface text)"
    )
    conn.execute(
        "create table search_authors (stem text, id text, label text, person integer, zipf real)"
    )
    conn.execute("create table search_arxiv (arxiv text primary key, id text)")
    name_rows, author_rows, arxiv_rows = [], [], []
    for entry in entries:
        for i, name in enumerate((entry.title, *entry.aliases)):
            key = normalize_content(name)
            if not key:
                continue
            surface = content_words(name)
            # How everyday a one-word name is ("SEED", "Rapid", "Forge"); 0 for longer names.
            zipf = _zipf(english.get(surface[0], 0.0)) if len(surface) == 1 else 0.0
            name_rows.append((key, entry.id, name, int(i == 0), round(zipf, 2), " ".join(surface)))
        if isinstance(entry, Paper):
            if entry.arxiv:
                arxiv_rows.append((entry.arxiv, entry.id))
            people = [(p, 1) for p in entry.authors] + (
                [(entry.organisation, 0)] if entry.organisation else []
            )
            for label, person in people:
                for word in dict.fromkeys(
                    w for w in words(label) if len(w) >= 2 and not w.isdigit()
                ):
                    zipf = _zipf(english.get(word, 0.0))
                    author_rows.append((stem(word), entry.id, label, person, round(zipf, 2)))
    conn.executemany("insert into search_names values (?, ?, ?, ?, ?, ?)", name_rows)
    conn.executemany("insert into search_authors values (?, ?, ?, ?, ?)", author_rows)
    conn.executemany("insert or ignore into search_arxiv values (?, ?)", arxiv_rows)
    # Adjacent content words of the catalog's own text ("chain thought", "gradient descent"): a
    # phrase the catalog uses tells the sense of its everyday words.
    pairs: Counter[str] = Counter()
    for doc in docs:
        for column in ("names", "keywords", "summary", "body", "questions"):
            for part in doc[column].replace(" | ", "\n").split("\n"):
                toks = content_tokens(part)
                pairs.update({f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)})
    conn.execute("create table search_pairs (pair text primary key, df integer) without rowid")
    conn.executemany("insert into search_pairs values (?, ?)", pairs.items())
    conn.execute(
        "create virtual table search_questions using fts5(text, id unindexed, tokenize='porter "
        "unicode61')"
    )
    conn.executemany(
        "insert into search_questions (text, id) values (?, ?)",
        ((normalize(q), entry.id) for entry in entries for q in entry.questions if normalize(q)),
    )
    # Merged into one segment, as docs_fts is (store.build_store).
    conn.execute("insert into search_questions (search_questions) values ('optimize')")
    from wordfreq import top_n_list, zipf_frequency  # build time only

    markers = {
        m
        for lang in MARKER_LANGUAGES
        for w in top_n_list(lang, MARKER_TOP)
        for m in words(w)
        if m.isalpha() and len(m) >= 2 and zipf_frequency(m, "en") < MARKER_MAX_ENGLISH_ZIPF
    }
    conn.execute("create table search_markers (word text primary key) without rowid")
    conn.executemany(
        "insert into search_markers values (?)", ((m,) for m in sorted(markers - set(surface_df)))
    )
    conn.execute("create index search_names_key on search_names(key)")
    conn.execute("create index search_authors_stem on search_authors(stem)")
    conn.execute("create table search_meta (key text primary key, value real)")
    conn.execute(
        "insert into search_meta values ('total_tokens', ?), ('docs', ?)", (total, len(docs))
    )


class Lexicon:
    """The search tables of one store, read once when a searcher opens it."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        meta = dict(conn.execute("select key, value from search_meta"))
        self.total_tokens = max(1.0, float(meta.get("total_tokens", 1)))
        self.docs = max(1, int(meta.get("docs", 1)))
        self.terms: dict[str, tuple[int, int, float]] = {
            s: (cf, df, z)
            for s, cf, df, z in conn.execute("select stem, cf, df, en_zipf from search_terms")
        }
        self.vocab_df: dict[str, int] = {}
        self._vocab_by_len: dict[int, list[str]] = {}
        for word, n in conn.execute("select word, df from search_vocab"):
            self.vocab_df[word] = n
            if len(word) >= 4:
                self._vocab_by_len.setdefault(len(word), []).append(word)
        self.names: dict[str, list[tuple[str, str, bool, float, str]]] = {}
        # Names typed run together ("r1zero" for R1-Zero, "r2egym", "seedrl"): each to its words.
        self.run_together: dict[str, list[str]] = {}
        for key, entry_id, name, is_title, zipf, surface in conn.execute(
            "select key, id, name, is_title, zipf, surface from search_names"
        ):
            self.names.setdefault(key, []).append((entry_id, name, bool(is_title), zipf, surface))
            parts = surface.split()
            joined = "".join(parts)
            if len(parts) >= 2 and joined.isalnum() and joined not in self.vocab_df:
                self.run_together.setdefault(joined, parts)
        self.max_name_tokens = max((len(k.split()) for k in self.names), default=1)
        self.authors: dict[str, list[tuple[str, str, bool, float]]] = {}
        organisations: set[str] = set()
        for s, entry_id, label, person, zipf in conn.execute(
            "select stem, id, label, person, zipf from search_authors"
        ):
            self.authors.setdefault(s, []).append((entry_id, label, bool(person), zipf))
            if not person:
                organisations.add(label)
        # Organisations' names of one word ("DeepMind", "NUS", "Ai2"): such a word names its
        # organisation inside a longer name too ("Google DeepMind"; search/bylines.py).
        self.one_word_orgs: frozenset[str] = frozenset(
            ws[0] for label in organisations for ws in bylines.names(label, False) if len(ws) == 1
        )
        # An organisation's name of two words or more typed as one ("zai", "deepseekai"): its words.
        for label in organisations:
            for joined, ws in bylines.whole_forms(label, False).items():
                if joined not in self.vocab_df and joined.isalnum():
                    self.run_together.setdefault(joined, list(ws))
        self._citing: dict[tuple[str, bool], tuple[frozenset[str], tuple[frozenset[str], ...]]] = {}
        self._names_alone: dict[str, bool] = {}
        self.arxiv: dict[str, str] = dict(conn.execute("select arxiv, id from search_arxiv"))
        self.markers: frozenset[str] = frozenset(
            w for (w,) in conn.execute("select word from search_markers")
        )
        self._english: dict[str, float] = {}
        # Answers that depend only on the store (which never changes under a lexicon), kept as
        # they are first asked: questions repeat words, so most are asked again.
        self._pairs: dict[str, bool] = {}
        self._byline_entries: dict[str, int] = {}
        self._byline_zipfs: dict[str, dict[tuple[str, str], float]] = {}

    def has_pair(self, first: str, second: str) -> bool:
        """Whether the catalog writes these two content
        stems next to each other (an indexed lookup, remembered).
        """
        pair = f"{first} {second}"
        found = self._pairs.get(pair)
        if found is None:
            found = (
                self.conn.execute("select 1 from search_pairs where pair = ?", (pair,)).fetchone()
                is not None
            )
            if len(self._pairs) < CACHE_WORDS:
                self._pairs[pair] = found
        return found

    def byline_entries(self, stem_: str) -> int:
        """On how many entries' bylines a word is (counted the first time it is asked: a common
        byline word of a large catalog is on thousands)."""
        rows = self.authors.get(stem_)
        if not rows:
            return 0
        found = self._byline_entries.get(stem_)
        if found is None:  # one count per byline word at most: bounded by the store
            found = self._byline_entries[stem_] = len({r[0] for r in rows})
        return found

    def byline_zipf(self, stem_: str, entry_id: str, label: str) -> float | None:
        """The English Zipf of the byline word ``stem_`` in ``label`` on ``entry_id``, or None when
        that byline lacks it. The rows of a word are indexed the first time it is asked (a common
        byline word of a large catalog is on thousands of entries: too many to scan per question).
        """
        index = self._byline_zipfs.get(stem_)
        if index is None:  # one index per byline word at most: bounded by the store
            index = self._byline_zipfs[stem_] = {
                (entry_id_, label_): zipf
                for entry_id_, label_, _, zipf in self.authors.get(stem_, ())
            }
        return index.get((entry_id, label))

    def citing(self, label: str, person: bool) -> tuple[frozenset[str], tuple[frozenset[str], ...]]:
        """The words that cite a byline label alone (search/bylines.citable, and a later word of an
        organisation's name that is an organisation's whole name elsewhere: "deepmind"), and the
        words of each of its names (cited whole when all of them are in a question). Words as
        written, not stems: "Ilya" is not "Ilyas"."""
        key = (label, person)
        found = self._citing.get(key)
        if found is None:
            named = bylines.names(label, person)
            alone = set(bylines.citable(label, person))
            if not person:
                alone |= {w for ws in named for w in ws[1:] if w in self.one_word_orgs}
            found = (frozenset(alone), tuple(frozenset(ws) for ws in named))
            if len(self._citing) < CACHE_WORDS:
                self._citing[key] = found
        return found

    def cites(self, label: str, person: bool, word: str, words) -> bool:
        """Whether the question word ``word`` cites a byline label, the question's words being
        ``words``: alone (a person's word, an organisation's first word), or with the rest of a
        name it is part of ("eth zurich"); "zurich" or "ai" alone cite no one."""
        alone, whole = self.citing(label, person)
        return word in alone or any(word in n and n <= words for n in whole)

    def names_alone(self, stem_: str, word: str) -> bool:
        """Whether the byline word ``word`` (of stem ``stem_``) cites someone by itself on some
        byline (``cites``, alone)."""
        key = f"{stem_} {word}"
        found = self._names_alone.get(key)
        if found is None:
            found = any(
                word in self.citing(label, person)[0]
                for _, label, person, _ in self.authors.get(stem_, ())
            )
            if len(self._names_alone) < CACHE_WORDS:
                self._names_alone[key] = found
        return found

    def knows(self, stem_: str) -> bool:
        return stem_ in self.terms

    def is_byline_word(self, stem_: str) -> bool:
        return stem_ in self.authors

    def english_zipf(self, word: str) -> float:
        """wordfreq's Zipf frequency of ``word`` (0 when it is rarer than the table keeps)."""
        found = self._english.get(word)
        if found is None:
            row = self.conn.execute(
                "select zipf from search_english where word = ?", (word,)
            ).fetchone()
            found = row[0] if row else 0.0
            if len(self._english) < CACHE_WORDS:
                self._english[word] = found
        return found

    def correct(self, word: str, similarity: float) -> str | None:
        """The closest catalog word to a typo, or None; of equally close words the more common."""
        from rapidfuzz import process
        from rapidfuzz.distance import OSA

        pool: list[str] = []
        for size in range(len(word) - 2, len(word) + 3):
            pool.extend(self._vocab_by_len.get(size, ()))
        if not pool:
            return None
        # OSA counts a swap of two letters ("rewrad") as one edit, as people make them.
        found = process.extract(
            word, pool, scorer=OSA.normalized_similarity, score_cutoff=similarity, limit=5
        )
        if not found:
            return None
        return max(found, key=lambda m: (round(m[1], 6), self.vocab_df.get(m[0], 0)))[0]
