"""Ask: parse the question, recall ranked lists, fuse them, and answer only on evidence.

1. ``query``: cap the question, correct only words that are not English, spot
   arXiv ids and "who wrote ..." questions;
2. ``recall``: BM25 over every field, names, bylines, curated questions;
3. ``fuse``: reciprocal rank fusion, so full-text evidence counts as much as a
   name, and a question naming two entries gets both;
4. ``offtopic``: the evidence that the question is about the map at all; below
   the floor the answer is an honest "nothing relevant";
5. ``explain``: why each hit matched, in plain words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import islice
from types import ModuleType
from typing import TYPE_CHECKING

from rlmap_bot.knowledge.schema import Entry, Paper, Signal, Stage, display_kind
from rlmap_bot.knowledge.store import SEARCH_COLUMNS, KnowledgeStore
from rlmap_bot.results.ask import Answer, Hit, echo
from rlmap_bot.search import explain
from rlmap_bot.search.fuse import fuse
from rlmap_bot.search.lexicon import Lexicon
from rlmap_bot.search.offtopic import evidence, name_stems
from rlmap_bot.search.params import (
    CLOSE_CALL,
    DEFAULT,
    MIN_SHOWN,
    NAMED_KEEP,
    Params,
    evidence_to_score,
    floor_to_evidence,
)
from rlmap_bot.search.query import Query, parse
from rlmap_bot.search.recall import Recall, recall
from rlmap_bot.text import content_tokens, stem

if TYPE_CHECKING:  # read lazily: only an answer showing a signal needs the diagnosis readings
    from rlmap_bot.search.readings import ChoicePhrases

__all__ = ["Answer", "Hit", "Searcher", "Analysis"]


@dataclass
class Analysis:
    """Everything ask found before the floor: for the answer, and for tuning without re-querying."""

    query: Query
    found: Recall
    ranked: list[tuple[str, float]]  # (entry id, fused score), best first
    evidence: float
    word_evidence: dict[str, float]
    # The words read in their everyday sense (offtopic.evidence): common English words of the
    # catalog beside a word the map never uses ("reset" in "reset my vpn password").
    everyday: frozenset[str] = frozenset()


class Searcher:
    """Search over one opened :class:`KnowledgeStore`; build once, ask many times."""

    def __init__(
        self, store: KnowledgeStore, floor: float | None = None, params: Params | None = None
    ):
        self.store = store
        self.params = params or DEFAULT
        self.floor = float(floor if floor is not None else store.settings.search_floor)
        self.lexicon = Lexicon(store.conn)
        self._known: list[str] | None = None  # known_topics(), read when first wanted
        # What explaining a hit needs of an entry, worked out the first time it is shown (the store
        # never changes under a searcher): each search column's stems and all of them together,
        # each curated question's tokens, the fields of its hit that the question does not change.
        self._stems: dict[str, dict[str, frozenset[str]]] = {}
        self._every: dict[str, frozenset[str]] = {}
        self._shown: dict[str, tuple[Entry, dict[str, str | None]]] = {}
        self._questions: dict[str, list[tuple[str, frozenset[str]]]] = {}
        self._readings: dict[str, list] = {}
        self._signals: list[Signal] | None = None
        self._phrases: ChoicePhrases | None = None
        self._stage_titles: dict[str, str] = {}
        self._read: ModuleType | None = None  # search/readings.py, once a signal is shown
        self._said: tuple[str, dict[str, set[str]]] | None = None  # the last question's choices

    # -- analysis ---------------------------------------------------------------------------
    def analyse(self, question: str, params: Params | None = None) -> Analysis:
        params = params or self.params
        query = parse(question, self.lexicon)
        found = recall(query, self.lexicon, self.store, params)
        everyday: set[str] = set()
        total, per_word = evidence(
            query, self.lexicon, params, bool(found.arxiv), found.names, everyday
        )
        ranked = self.rank(query, found, params)
        return Analysis(query, found, ranked, total, per_word, frozenset(everyday))

    def rank(self, query: Query, found: Recall, params: Params) -> list[tuple[str, float]]:
        """The fused ranking of what recall found (no floor)."""
        allowed = None
        if query.authorship:
            # "who wrote X" asks for a paper: other kinds step aside when a paper was found.
            candidates = {i for ids in found.lists.values() for i in ids}
            if any(self._kind(i) == "paper" for i in candidates):
                allowed = lambda i: self._kind(i) == "paper"  # noqa: E731
        fused = fuse(found.lists, params, allowed, found.ties)
        if query.authorship and found.authors:
            fused = _bylined_first(fused, found.authors.keys())
        return _whole_name_first(_keep_named(fused, found.named, allowed), query, found, allowed)

    def _kind(self, entry_id: str) -> str | None:
        entry = self.store.get(entry_id)
        return entry.kind if entry else None

    # -- answer -----------------------------------------------------------------------------
    def ask(self, question: str, limit: int = 5) -> Answer:
        analysis = self.analyse(question)
        return self.answer(analysis, limit=limit)

    def answer(
        self,
        analysis: Analysis,
        limit: int = 5,
        floor: float | None = None,
        params: Params | None = None,
    ) -> Answer:
        params = params or self.params
        floor = self.floor if floor is None else floor
        query, ranked = analysis.query, analysis.ranked
        below = analysis.evidence < floor_to_evidence(floor)
        lone = not below and self.lone_word(analysis, params)
        # A setting's value the catalog does not hold ("what learning rate for RLHF on a 7B
        # model?"): its nearest entries are a guess, as for a lone map word.
        lone = lone or (not below and self.asks_for_setting(analysis, params))
        if not ranked or below or lone:
            # Not confident. A lone map word carries enough evidence to show its entries, not to
            # vouch for them ("is GRPO still worth using these days" is a lookup, "which dota 2
            # items are best for a support player" is not), and a question below the floor may still
            # be about the map in everyday words: whenever a word speaks for the map, its nearest
            # entries are shown as a guess, and "nothing" is left for questions none of whose words
            # do.
            speaking = self.map_words(analysis, params) if ranked else []
            guesses = []
            if speaking:
                top = ranked[0][1]
                # A guess's score is at most the floor: it never reads as sure as an answer.
                nearest = [
                    self._hit(i, floor * s / top, analysis, self._column_stems(i), None)
                    for i, s in ranked[:MIN_SHOWN]
                ]
                guesses = [h for h in nearest if h is not None]
            return Answer(
                query=echo(query.text),
                tier="guess" if guesses else "nothing",
                results=[],
                guesses=guesses,
                map_words=speaking if guesses else [],
                known_topics=self.known_topics(),
                english_only=query.other_language,
                corrections=query.corrections,  # what was searched, even when nothing fits
                unrelated_words=[w for w, e in analysis.word_evidence.items() if e < 0][:10],
            )
        confidence = 1.0 if math.isinf(analysis.evidence) else evidence_to_score(analysis.evidence)
        top = ranked[0][1]
        named = analysis.found.named
        # The first MIN_SHOWN always show (an answer is
        # judged by its first three); after them, a hit
        # much weaker than the top one is padding.
        chosen = list(
            islice(
                (
                    (i, s)
                    for r, (i, s) in enumerate(ranked)
                    if r < MIN_SHOWN or s >= params.keep_share * top or i in named
                ),
                max(1, limit),  # read no further down the ranking than the hits kept
            )
        )
        questions = analysis.found.lists.get("questions", [])
        question_rank = {i: questions.index(i) + 1 for i, _ in chosen if i in questions}
        rows = {i: self._column_stems(i) for i, _ in chosen}
        made = [
            self._hit(i, confidence * s / top, analysis, rows[i], question_rank.get(i))
            for i, s in chosen
        ]
        hits = [h for h in made if h is not None]
        # Too close to pick: the scores are nearly equal, or the question's words sit in the same
        # fields of both ("MiniMax": two reports by MiniMax), so nothing in it prefers one.
        close = len(hits) >= 2 and (
            hits[0].score - hits[1].score < CLOSE_CALL
            or _named_alike(hits[0].id, hits[1].id, rows, analysis)
        )
        return Answer(
            query=echo(query.text),
            tier="confident",
            results=hits,
            corrections=query.corrections,
            close_call=close,
            english_only=query.other_language,
        )

    def coherence(self, analysis: Analysis, ranked: list[tuple[str, float]] | None = None) -> int:
        """How many of the question's words that speak for the map meet in one of the nearest
        entries (the most, over the first MIN_SHOWN)."""
        # "Speak for the map" as map_words says it: a word of barely positive evidence ("best"
        # 0.05) is everyday English, and two of them meeting in an entry say nothing.
        bar = self.params.guess_word_evidence
        wanted = {
            w.stem
            for w in analysis.query.words
            if analysis.word_evidence.get(w.surface, 0.0) >= bar
        }
        # The words of one byline name ("Andy Jones", "UT Austin") count as one word: a name and
        # nothing else of the map is one borrowed word, however many words spell it.
        names = self._names_once(analysis)
        # Beside a name, the entry's own title words count ("Andy Jones board games"): they say
        # which of the person's entries is meant, whatever their weight in everyday English.
        titled = {w.stem for w in analysis.query.words if w.surface.isalpha()} if names else set()
        best = 0
        for entry_id, _ in (analysis.ranked if ranked is None else ranked)[:MIN_SHOWN]:
            columns = self._column_stems(entry_id)
            met = (wanted | (titled & columns.get("names", frozenset()))) & self._every_stem(
                entry_id
            )
            spelled = [n for n in names if n & met]
            best = max(best, len(met - set().union(*spelled)) + len(spelled))
        return best

    def lone_word(self, analysis: Analysis, params: Params | None = None) -> bool:
        """One map word borrowed by a question about something else: see params.lone_word_words."""
        params = params or self.params
        if math.isinf(analysis.evidence) or len(analysis.found.named) >= 2:
            return False  # an arXiv id the catalog has; a comparison ("Ape-X and IMPALA")
        content = [w.stem for w in analysis.query.words if any(c.isalpha() for c in w.surface)]
        # A cited name counts once here too ("stuff from UT Austin" is a lookup of two words).
        spelled = self._names_once(analysis)
        counted = len(set(content) - set().union(*spelled)) + sum(
            1 for n in spelled if n & set(content)
        )
        return counted >= params.lone_word_words and self.coherence(analysis) < 2

    def asks_for_setting(self, analysis: Analysis, params: Params | None = None) -> bool:
        """The question asks for a setting's value the catalog gives for no setting of its kind
        (query.asks_setting, params.setting_guess), and not what a named entry did or does ("what
        KL coefficient did DeepSeek-R1 use", "how much GPU memory does verl save"): every word of
        it may be the map's, yet no entry answers it, so it is a guess at most."""
        params = params or self.params
        query, found = analysis.query, analysis.found
        if not params.setting_guess or not query.setting:
            return False
        if found.arxiv or (query.past and (found.names or found.authors)):
            return False
        named = {
            query.words[m.span[0]].surface for m in found.names if m.span[0] < len(query.words)
        }
        return query.asked_of not in named

    def _names_once(self, analysis: Analysis) -> list[frozenset[str]]:
        """The stems of each cited full name in the question, when such a name counts as one word
        (params.name_once): not in a question asking who wrote something, where the name is the
        lookup ("who wrote ... with Jimmy Ba")."""
        if not self.params.name_once or analysis.query.authorship:
            return []
        return name_stems(analysis.query, self.lexicon)

    def map_words(self, analysis: Analysis, params: Params | None = None) -> list[str]:
        """The question's words that speak for the map (params.guess_word_evidence): each word whose
        evidence favours the catalog enough, and the words of a title or alias of two words or more
        found whole in the question. An arXiv id the catalog has speaks for the whole question."""
        params = params or self.params
        if math.isinf(analysis.evidence):
            return [w.surface for w in analysis.query.words]
        words = [w for w, e in analysis.word_evidence.items() if e >= params.guess_word_evidence]
        named = False
        for m in analysis.found.names:
            if m.span[1] - m.span[0] >= 2:
                named = True
                words += [w.surface for w in analysis.query.words[m.span[0] : m.span[1]]]
        if params.lone_everyday and not named and _tied_by_one_everyday_word(analysis):
            return []  # "how do i reset my vpn password": about the vpn, not the map
        return list(dict.fromkeys(words))

    def _column_stems(self, entry_id: str) -> dict[str, frozenset[str]]:
        stems = self._stems.get(entry_id)
        if stems is None:
            row = self.store.conn.execute(
                f"select {', '.join(SEARCH_COLUMNS)} from docs where id = ?", (entry_id,)
            ).fetchone()
            stems = {
                column: frozenset(stem(x) for x in (text or "").split())  # no row: no columns
                for column, text in zip(SEARCH_COLUMNS, row or (), strict=False)
            }
            self._stems[entry_id] = stems
        return stems

    def _every_stem(self, entry_id: str) -> frozenset[str]:
        """The stems of all of an entry's search columns together."""
        every = self._every.get(entry_id)
        if every is None:
            every = self._every[entry_id] = frozenset().union(
                *self._column_stems(entry_id).values()
            )
        return every

    def _question_tokens(self, entry: Entry) -> list[tuple[str, frozenset[str]]]:
        tokens = self._questions.get(entry.id)
        if tokens is None:
            tokens = self._questions[entry.id] = [
                (q, frozenset(content_tokens(q))) for q in entry.questions
            ]
        return tokens

    def _hit(
        self,
        entry_id: str,
        score: float,
        analysis: Analysis,
        columns: dict[str, frozenset[str]],
        question_rank: int | None,
    ) -> Hit | None:
        shown = self._shown.get(entry_id)
        if shown is None:
            entry = self.store.get(entry_id)
            if entry is None:
                return None
            paper = entry if isinstance(entry, Paper) else None
            shown = self._shown[entry_id] = (
                entry,
                {
                    "kind": display_kind(entry),
                    "id": entry.id,
                    "title": entry.title,
                    "short": entry.short_name,
                    "one_line": entry.one_line,
                    "byline": (paper.byline or None) if paper is not None else None,
                    "url": paper.link if paper is not None else None,
                    "verification": paper.verification if paper is not None else None,
                },
            )
        entry, fields = shown
        return Hit(
            **fields,
            score=round(min(1.0, max(0.0, score)), 4),
            why=explain.reasons(
                entry,
                analysis.query,
                analysis.found,
                columns,
                question_rank,
                # Only a hit found through its curated questions quotes one.
                self._question_tokens(entry) if question_rank is not None else (),
                analysis.word_evidence,
            ),
            points_to=self._points_to(entry.id, analysis) if isinstance(entry, Signal) else None,
        )

    def _points_to(self, entry_id: str, analysis: Analysis) -> str | None:
        """For a signal: the stage its diagnosis rule that fits
        the question names, and why (search/readings.py).
        """
        read = self._read
        if read is None:  # the first time a signal is shown: the store never changes
            # Imported here: only an answer showing a signal needs it (cold start).
            from rlmap_bot.search import readings as module

            self._signals = [e for e in self.store.all("signal") if isinstance(e, Signal)]
            self._phrases = module.choice_phrases(self._signals, self.store.settings.diagnosis)
            self._stage_titles = {s.id: s.title for s in self.store.all("stage")}
            read = self._read = module
        readings = self._readings.get(entry_id)
        if readings is None:
            assert self._signals is not None, "read with the module above"
            readings = self._readings[entry_id] = read.signal_readings(
                entry_id, self._signals, self._stage_titles
            )
        text = analysis.query.normalized
        last = self._said  # one read: another thread may replace it
        if last is None or last[0] != text:  # once per question, not per signal shown
            assert self._phrases is not None, "read with the signals above"
            last = self._said = (text, read.said_choices(self._phrases, text))
        said = last[1]
        found = read.pick(readings, analysis.query.stems, said)
        return found.text() if found else None

    def known_topics(self) -> list[str]:
        """What the bot can talk about: the stages and the topic with its subtopics.

        Read the first time an answer needs them (one that is not sure), from the stages and topics
        alone: a confident answer validates no entry it does not show (knowledge/store.py)."""
        if self._known is None:
            stages = sorted(
                (s for s in self.store.all("stage") if isinstance(s, Stage)), key=lambda s: s.order
            )
            topics = sorted(t.title for t in self.store.all("topic"))
            self._known = [s.title for s in stages] + topics
        return list(self._known)


def _tied_by_one_everyday_word(analysis: Analysis) -> bool:
    """The question's one word of positive evidence is a common English word read in its everyday
    sense beside a word the map never uses ("reset" in "how do i reset my vpn password", "recipe"
    beside "sourdough"): params.lone_everyday."""
    positive = [w for w, e in analysis.word_evidence.items() if e > 0]
    return len(positive) == 1 and positive[0] in analysis.everyday


def _named_alike(
    a: str, b: str, rows: dict[str, dict[str, frozenset[str]]], analysis: Analysis
) -> bool:
    """Both entries matched the same way through their names or bylines. An empty signature (neither
    named, nor in a byline) says nothing: two entries found by their text alone are told apart by
    their scores ("why are my GPUs idle half the time": 0.80 and 0.54 is no tie)."""
    first = _signature(a, rows[a], analysis)
    return any(first) and first == _signature(b, rows[b], analysis)


def _signature(entry_id: str, columns: dict[str, frozenset[str]], analysis: Analysis) -> tuple:
    """How an entry matched: named whole, by byline, and
    which question words its names and byline hold.
    """
    wanted = set(analysis.query.stems)
    fields = tuple(frozenset(wanted & columns.get(c, frozenset())) for c in ("names", "authors"))
    named = any(m.entry_id == entry_id for m in analysis.found.names)
    return (named, entry_id in analysis.found.authors, *fields)


def _whole_name_first(
    ranked: list[tuple[str, float]], query: Query, found: Recall, allowed
) -> list[tuple[str, float]]:
    """A question that is exactly one entry's title or
    alias ("reward", "IMPALA") gets that entry first.
    """
    stems = {w.stem for w in query.words}  # "reward reward rewar": every word is the one name
    whole = {
        m.entry_id
        for m in found.names
        if stems <= {w.stem for w in query.words[m.span[0] : m.span[1]]}
    }
    if len(whole) != 1:
        return ranked  # no name, or a name two entries share: fusion decides
    (entry_id,) = whole
    if allowed is not None and not allowed(entry_id):
        return ranked
    first = [p for p in ranked if p[0] == entry_id]
    if not first or ranked[0][0] == entry_id:
        return ranked
    top = ranked[0][1]
    return [(entry_id, top)] + [p for p in ranked if p[0] != entry_id]


def _bylined_first(ranked: list[tuple[str, float]], bylined) -> list[tuple[str, float]]:
    """A question asking who wrote something, or for someone's papers ("papers by DeepSeek"), gets
    the entries its name is in the byline of first, in their order; another entry that ranks
    higher on the question's other words ("GLM-5" mentions DeepSeek) scores at most the last of
    them, so scores still fall down the list."""
    first = [p for p in ranked if p[0] in bylined]
    if not first or len(first) == len(ranked) or ranked[: len(first)] == first:
        return ranked
    floor = first[-1][1]
    return first + [(i, min(s, floor)) for i, s in ranked if i not in bylined]


def _keep_named(
    ranked: list[tuple[str, float]], named_ids: frozenset[str], allowed
) -> list[tuple[str, float]]:
    """A question naming two or more entries ("PPO vs
    GRPO") gets each of them in the first results (``named_ids``: Recall.named).
    """
    named = [i for i in named_ids if allowed is None or allowed(i)]
    if not named:
        return ranked
    head, missing = (
        ranked[:NAMED_KEEP],
        [p for p in ranked if p[0] in named and p not in ranked[:NAMED_KEEP]],
    )
    if not missing:
        return ranked
    keep = [p for p in head if p[0] in named]
    others = [p for p in head if p[0] not in named][: max(0, NAMED_KEEP - len(keep) - len(missing))]
    new_head = sorted(keep + others + missing, key=lambda p: -p[1])
    rest = [p for p in ranked if p not in new_head]
    return new_head + rest
