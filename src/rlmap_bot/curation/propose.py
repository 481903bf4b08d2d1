"""Proposed tags for a paper: the bot's own search over its title and abstract.

Each search hit votes for the stages and subtopics it belongs to with its score: a stage
or subtopic hit for itself, a paper for its stages (its main stage fully, the others at
half weight: a paper's first stage is the one it is filed under) and its subtopics, a
topic for its stages. A stage is proposed when its vote is at least half the best one
(judgement: the second stage of a two-stage paper scores about as high as the first in
the catalog's own papers, a stray third well under half), at most three, as the catalog's
papers name one to three.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmap_bot.knowledge.schema import Paper, Signal, Stage, Topic
from rlmap_bot.results.curation import ArxivRecord, Tag

if TYPE_CHECKING:
    from rlmap_bot.search.engine import Searcher

QUERY_CHARS = 1500  # title plus the abstract's opening: where a paper says what it is about
SHARE = 0.5
MAX_STAGES = 3
MAX_SUBTOPICS = 3
SECOND_STAGE_WEIGHT = 0.5


def search_text(record: ArxivRecord) -> str:
    return (record.title + ". " + record.abstract)[:QUERY_CHARS]


def propose(searcher: Searcher, record: ArxivRecord) -> tuple[list[Tag], list[Tag]]:
    """(stages, subtopics) the search ties the paper to, strongest first, scores 0 to 1."""
    store = searcher.store
    # No floor: an off-topic paper still gets its closest tags, with the low scores that say so.
    answer = searcher.answer(searcher.analyse(search_text(record)), limit=10, floor=0.0)
    stages: dict[str, float] = {}
    subtopics: dict[str, float] = {}

    def vote(into: dict[str, float], key: str, weight: float) -> None:
        into[key] = max(into.get(key, 0.0), weight)

    for hit in answer.results:
        entry = store.get(hit.id)
        if isinstance(entry, Stage):
            vote(stages, entry.id, hit.score)
        elif isinstance(entry, Paper):
            for i, stage in enumerate(entry.stages):
                vote(stages, stage, hit.score * (1.0 if i == 0 else SECOND_STAGE_WEIGHT))
            for sub in entry.subtopics:
                vote(subtopics, sub, hit.score * SECOND_STAGE_WEIGHT)
        elif isinstance(entry, Topic):
            if entry.parent:
                vote(subtopics, entry.id, hit.score)
            for stage in entry.stages:
                vote(stages, stage, hit.score * SECOND_STAGE_WEIGHT)
        elif isinstance(entry, Signal):
            continue  # a diagnosis signal says what to measure, not what a paper is about
    return _pick(store, stages, MAX_STAGES), _pick(store, subtopics, MAX_SUBTOPICS)


def _pick(store, votes: dict[str, float], most: int) -> list[Tag]:
    if not votes:
        return []
    best = max(votes.values())
    chosen = sorted(
        ((k, v) for k, v in votes.items() if v >= SHARE * best), key=lambda kv: (-kv[1], kv[0])
    )[:most]
    out = []
    for key, score in chosen:
        entry = store.get(key)
        out.append(
            Tag(id=key, title=entry.title if entry else key, score=round(min(score, 1.0), 3))
        )
    return out
