"""The weekly scout: new arXiv papers ranked by how much of the map's own vocabulary they use.

The vocabulary is every keyword of every catalog entry (the words curators chose so search
finds an entry), as surface words. A paper scores each distinct term it uses in its title or
abstract: a term of several words counts as many (at most 3: "critical batch size" says more
than "batch"), and a one-word term that most entries share says little, so one-word terms in
more than a quarter of the entries' text are left out (judgement: "training", "model"). The
score becomes a relevance from 0 to 1 as 1 - exp(-score / 6): six matched words (two
three-word terms, or six single ones) give 63%. Ranking is a set look-up per word n-gram, so
2,000 papers rank in well under two seconds (benchmarks/scout.py).

The default arXiv query is the map's most used terms over cs.LG, cs.CL and cs.AI
(``RLMAP_SCOUT_CATEGORIES``), or ``RLMAP_SCOUT_QUERY``. A scan is claimed per slot in the
state store, so with several replicas exactly one posts.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rlmap_bot.curation.dedupe import in_catalog
from rlmap_bot.curation.service import CardNotPosted
from rlmap_bot.knowledge.store import KnowledgeStore, search_fields
from rlmap_bot.results.curation import ArxivRecord
from rlmap_bot.settings import WEEKDAYS, parse_weekly
from rlmap_bot.text import words

if TYPE_CHECKING:
    from rlmap_bot.curation.service import Cards, Curation

log = logging.getLogger(__name__)
MAX_WORDS = 3
COMMON_SHARE = 0.25
SCALE = 6.0
QUERY_TERMS = (
    12  # arXiv answers long queries slowly; a dozen of the most used terms cover the map's stages
)


@dataclass(frozen=True)
class Vocabulary:
    terms: dict[tuple[str, ...], float]
    longest: int
    query_terms: tuple[str, ...]
    starts: frozenset[str] = frozenset()  # first words of terms: only there can a term begin


def vocabulary(store: KnowledgeStore) -> Vocabulary:
    entries = store.all()
    used: Counter[tuple[str, ...]] = Counter()
    for entry in entries:
        for keyword in entry.keywords:
            term = tuple(words(keyword))
            if term:
                used[term] += 1
    texts = [set(words(" ".join(search_fields(e).values()))) for e in entries]
    common = {
        w
        for w in {t[0] for t in used if len(t) == 1}
        if sum(1 for text in texts if w in text) > COMMON_SHARE * max(1, len(entries))
    }
    terms = {
        t: float(min(len(t), MAX_WORDS))
        for t in used
        if not (len(t) == 1 and (t[0] in common or len(t[0]) < 3))
    }
    top = [
        " ".join(t)
        for t, _ in sorted(
            ((t, n) for t, n in used.items() if t in terms and len(t) > 1),
            key=lambda tn: (-tn[1], tn[0]),
        )[:QUERY_TERMS]
    ]
    return Vocabulary(
        terms=terms,
        longest=max((len(t) for t in terms), default=1),
        query_terms=tuple(top),
        starts=frozenset(t[0] for t in terms),
    )


def relevance(vocab: Vocabulary, text: str) -> float:
    tokens = words(text)
    found: set[tuple[str, ...]] = set()
    for i, token in enumerate(tokens):
        if token not in vocab.starts:
            continue
        for n in range(1, min(vocab.longest, len(tokens) - i) + 1):
            gram = tuple(tokens[i : i + n])
            if gram in vocab.terms:
                found.add(gram)
    score = sum(vocab.terms[t] for t in found)
    return 1.0 - math.exp(-score / SCALE)


def rank(vocab: Vocabulary, records: list[ArxivRecord]) -> list[tuple[ArxivRecord, float]]:
    """Records with their relevance, most relevant first (newest first among equals)."""
    scored = [(r, relevance(vocab, r.title + " " + r.abstract)) for r in records]
    return sorted(
        scored, key=lambda rs: (-rs[1], -(rs[0].published.timestamp() if rs[0].published else 0))
    )


def default_query(vocab: Vocabulary, categories: list[str]) -> str:
    cats = " OR ".join(f"cat:{c}" for c in categories)
    terms = " OR ".join(f'abs:"{t}"' for t in vocab.query_terms)
    return f"({cats}) AND ({terms})" if terms else f"({cats})"


def last_due(schedule: str, now: dt.datetime) -> dt.datetime:
    """The latest scheduled moment at or before ``now`` (UTC)."""
    day, hour, minute = parse_weekly(schedule)
    weekday = WEEKDAYS.index(day)
    moment = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    moment -= dt.timedelta(days=(moment.weekday() - weekday) % 7)
    return moment if moment <= now else moment - dt.timedelta(days=7)


class Scout:
    """One scan: fetch the newest matching papers, rank,
    drop what is known, post the best as candidates.
    """

    def __init__(self, curation: Curation):
        self.curation = curation
        self.core = curation.core
        settings = curation.settings
        self.top = settings.rlmap_scout_top
        self.fetch = settings.rlmap_scout_fetch
        self.categories = [
            c.strip() for c in settings.rlmap_scout_categories.split(",") if c.strip()
        ]
        self.query = settings.rlmap_scout_query

    def pick(self, records: list[ArxivRecord]) -> list[tuple[ArxivRecord, float]]:
        """The best ``top`` records that are neither in the
        catalog nor suggested, approved or rejected before.
        """
        vocab = vocabulary(self.core.store)
        known = self.core.state.curation.known()
        papers = self.core.store.catalog.papers
        chosen: list[tuple[ArxivRecord, float]] = []
        for record, score in rank(vocab, records):
            if len(chosen) >= self.top or score <= 0:
                break
            if record.arxiv_id in known or in_catalog(papers, record) is not None:
                continue
            chosen.append((record, score))
        return chosen

    def scan(self, slot: str, targets: list[tuple[str, str]], cards: Cards) -> int:
        """Run the scan of ``slot`` unless another replica
        has; post to each (team, channel); return posts.
        """
        state = self.core.state.curation
        if self.top == 0 or not targets or not state.claim_scan(slot):
            return 0
        posted = 0
        try:
            query = self.query or default_query(vocabulary(self.core.store), self.categories)
            records = self.curation.source.search(query, self.fetch)
            for record, score in self.pick(records):
                candidate = self.curation.candidate(record, with_state=False).model_copy(
                    update={"relevance": score}
                )
                for team, channel in targets:
                    suggestion = state.suggest(
                        team,
                        record.arxiv_id,
                        "scout",
                        channel,
                        "pending",
                        data=candidate.model_dump_json(),
                        source="scout",
                    )
                    try:
                        ts = cards.post_card(team, channel, suggestion.id, candidate, "scout")
                    except CardNotPosted as exc:
                        state.drop(suggestion.id, "the card could not be posted")
                        log.warning("scout %s: %s", slot, exc)
                        continue
                    state.set_card(suggestion.id, channel, ts)
                    posted += 1
        except Exception:
            state.finish_scan(slot, "failed", posted)
            raise
        state.finish_scan(slot, "done", posted)
        log.info("scout %s: %d candidate(s) posted", slot, posted)
        return posted
