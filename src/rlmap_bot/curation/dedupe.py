"""Is a paper in the catalog already? By its arXiv id, else by a title close enough to be the same.

Titles are compared with rapidfuzz's token-sort ratio after its default processing (case and
punctuation dropped, words sorted). 92: the closest two distinct papers in the catalog score 86
("Are emergent abilities of large language models a mirage?" against "Emergent abilities of
large language models"; measured over every pair of its titles), while the same title with
other punctuation, case or word order scores 100.
"""

from __future__ import annotations

from rapidfuzz import fuzz, process, utils

from rlmap_bot.knowledge.schema import Paper
from rlmap_bot.results.curation import ArxivRecord, Existing
from rlmap_bot.text import fold

SAME_TITLE = 92


def in_catalog(papers: list[Paper], record: ArxivRecord) -> Existing | None:
    for paper in papers:
        if paper.arxiv == record.arxiv_id:
            return Existing(
                status="in_catalog", entry_id=paper.id, title=paper.title, how="arxiv id"
            )
    if not papers:
        return None
    titles = {paper.id: fold(paper.title) for paper in papers}
    found = process.extractOne(
        fold(record.title),
        titles,
        scorer=fuzz.token_sort_ratio,
        processor=utils.default_process,
        score_cutoff=SAME_TITLE,
    )
    if found is None:
        return None
    _, score, entry_id = found
    title = next(p.title for p in papers if p.id == entry_id)
    return Existing(
        status="in_catalog", entry_id=entry_id, title=title, how=f"title ({score:.0f}% alike)"
    )
