"""Is a paper in the catalog already? By its arXiv id, else by a title close enough to be the same
(or, for what a person typed, one of its aliases).

Titles are compared with rapidfuzz's token-sort ratio after its default processing (case and
punctuation dropped, words sorted). 92: the closest two distinct papers in the catalog score 86
("Are emergent abilities of large language models a mirage?" against "Emergent abilities of
large language models"; measured over every pair of its titles), while the same title with
other punctuation, case or word order scores 100.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rapidfuzz import fuzz, process, utils

from rlmap_bot.curation.ids import parse_reference
from rlmap_bot.errors import UsageError
from rlmap_bot.knowledge.schema import Paper
from rlmap_bot.results.curation import ArxivRecord, Candidate, Existing
from rlmap_bot.text import fold

if TYPE_CHECKING:
    from rlmap_bot.core import Core

SAME_TITLE = 92


def in_catalog(papers: list[Paper], record: ArxivRecord) -> Existing | None:
    for paper in papers:
        if paper.arxiv == record.arxiv_id:
            return Existing(
                status="in_catalog", entry_id=paper.id, title=paper.title, how="arxiv id"
            )
    return titled(papers, record.title)


def titled(papers: list[Paper], title: str, aliases: bool = False) -> Existing | None:
    """The catalog's paper with a title close enough to ``title`` to be the same (SAME_TITLE), or,
    with ``aliases``, one of its aliases ("DeepSeekMath", "the PPO paper")."""
    if not papers or not title.strip():
        return None
    names = [(paper.id, paper.title) for paper in papers]
    if aliases:
        names += [(paper.id, alias) for paper in papers for alias in paper.aliases]
    found = process.extractOne(
        fold(title),
        [fold(name) for _, name in names],
        scorer=fuzz.token_sort_ratio,
        processor=utils.default_process,
        score_cutoff=SAME_TITLE,
    )
    if found is None:
        return None
    _, score, index = found
    entry_id, name = names[index]
    paper = next(p for p in papers if p.id == entry_id)
    how = f"title ({score:.0f}% alike)" if name == paper.title else f"its name {name!r}"
    return Existing(status="in_catalog", entry_id=entry_id, title=paper.title, how=how)


def known_reference(papers: list[Paper], reference: str) -> tuple[str, Existing | None]:
    """The arXiv id ``reference`` names ("" for a title), and the catalog's paper when the catalog
    has it already: by that id, or by the title or alias the reference is. Worked out before arXiv
    is asked, so a paper the catalog has needs no network; a reference that is neither an arXiv id
    nor a paper of the catalog raises parse_reference's UsageError."""
    try:
        arxiv_id = parse_reference(reference)
    except UsageError:
        found = titled(papers, reference, aliases=True)
        if found is None:
            raise
        return "", found
    for paper in papers:
        if paper.arxiv == arxiv_id:
            return arxiv_id, Existing(
                status="in_catalog", entry_id=paper.id, title=paper.title, how="arxiv id"
            )
    return arxiv_id, None


def placed(core: Core, existing: Existing | None) -> Existing | None:
    """A paper found in the catalog, with where it is: the stages its entry is on."""
    entry = core.get(existing.entry_id) if existing and existing.entry_id else None
    if existing is None or entry is None:
        return existing
    titles = {s.id: s.title for s in core.stages()}
    where = [titles.get(sid, sid) for sid in getattr(entry, "stages", ())]
    return existing.model_copy(update={"where": where})


def from_catalog(core: Core, existing: Existing) -> Candidate:
    """The candidate for a paper the catalog has, told from the catalog alone (arXiv is not
    asked): its title, authors, year and summary, and where it is."""
    paper = core.get(existing.entry_id or "")
    record = ArxivRecord(
        arxiv_id=getattr(paper, "arxiv", None) or "",
        title=existing.title or "",
        authors=list(getattr(paper, "authors", [])),
        year=getattr(paper, "year", None),
        abstract=getattr(paper, "summary", ""),
    )
    return Candidate(record=record, existing=placed(core, existing))
