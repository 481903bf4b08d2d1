"""An approved candidate as a catalog paper entry (the same fields a knowledge file has)."""

from __future__ import annotations

import datetime as dt
import re

from rlmap_bot.results.curation import Candidate
from rlmap_bot.text import fold

AUTHORS_KEPT = 10  # the catalog lists leading authors; the rest is "et al."
SUMMARY_CAP = 400
SLUG_WORDS = 6
_STOP = {
    "a",
    "an",
    "the",
    "of",
    "for",
    "and",
    "on",
    "in",
    "to",
    "with",
    "via",
    "by",
    "at",
    "from",
    "is",
    "are",
}


def slug(title: str, arxiv_id: str, taken: set[str]) -> str:
    """An id from the title's leading words
    ("direct-preference-optimization-language-model"), unique.
    """
    words = [w for w in re.findall(r"[a-z0-9]+", fold(title).lower()) if w not in _STOP][
        :SLUG_WORDS
    ]
    base = "-".join(words)[:60].strip("-") or "arxiv"
    if base not in taken:
        return base
    return f"{base}-{arxiv_id.replace('.', '-')}"


def first_sentences(text: str, cap: int = SUMMARY_CAP) -> str:
    """The abstract's opening sentences up to ``cap``
    characters: a summary until a curator writes one.
    """
    out = ""
    for sentence in re.split(r"(?<=[.!?])\s+", " ".join(text.split())):
        if out and len(out) + len(sentence) + 1 > cap:
            break
        out = f"{out} {sentence}".strip()
    return out if len(out) <= cap else out[: cap - 1].rstrip() + "…"


def paper_data(
    candidate: Candidate,
    entry_id: str,
    stages: list[str],
    subtopics: list[str],
    summary: str | None,
    facts: list[str],
    today: dt.date,
) -> dict:
    """The entry as a knowledge file would hold it; the schema validates it before it goes live."""
    record = candidate.record
    authors = record.authors[:AUTHORS_KEPT]
    own_summary = bool(summary and summary.strip())
    note = (
        "Approved from Slack by a curator; title, authors and year are arXiv's. "
        + (
            "The summary is the curator's"
            if own_summary
            else "The summary is the abstract's opening"
        )
        + (", the key facts the curator's" if facts else "")
        + "; not yet checked against the paper."
    )
    data: dict = {
        "id": entry_id,
        "kind": "paper",
        "title": record.title,
        "authors": authors,
        "et_al": len(record.authors) > AUTHORS_KEPT or record.more_authors > 0,
        "arxiv": record.arxiv_id,
        "url": record.url,
        "verification": "unverified",
        "verification_note": note,
        "summary": " ".join(summary.split())
        if own_summary and summary
        else first_sentences(record.abstract) or record.title,
        "facts": [" ".join(f.split()) for f in facts if f.strip()],
        "stages": stages,
        "subtopics": subtopics,
        "keywords": [],
        "added": today.isoformat(),
    }
    if record.year:
        data["year"] = record.year
    return data
