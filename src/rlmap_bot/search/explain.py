"""Why an entry matched, in words a person understands.

"title matches 'PPO'", "by Schulman", "mentions 'entropy' and 'clip higher' in
its key facts", "close to a curated question: '...'": each reason names the
question's own words and where in the entry they were found.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from rlmap_bot.knowledge.schema import Entry, Paper
from rlmap_bot.search.params import EXPLAIN_QUESTION_RANK, EXPLAIN_WORDS
from rlmap_bot.search.query import Query
from rlmap_bot.search.recall import Recall
from rlmap_bot.text import stem

_BODY = {
    "paper": "its key facts",
    "stage": "its symptoms, measures and levers",
    "topic": "its notes",
    "signal": "how it is measured",
}
_WHERE = {
    "names": "its title or aliases",
    "authors": "its byline",
    "keywords": "its keywords",
    "summary": "its summary",
    "questions": "its example questions",
}


_NONE: frozenset[str] = frozenset()


def _quote(items: list[str]) -> str:
    quoted = [f"'{i}'" for i in items[:EXPLAIN_WORDS]]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _quotable(query: Query, evidence: Mapping[str, float] | None) -> list[tuple[str, str]]:
    """The question's words a reason may quote, as (stem, as quoted), those that speak for the map
    most first: the same for every hit of a question, so worked out once per question."""
    memo = query.memo.get("quotable")
    if memo is not None and memo[0] is evidence:
        return memo[1]
    words = [
        w
        for w in query.words
        if w.kind in ("known", "corrected") and any(c.isalpha() for c in w.surface)
    ]
    if evidence is not None:  # a rare catalog word has evidence 0 ("megatron"): still a reason
        words = sorted(
            (w for w in words if evidence.get(w.surface, 0.0) >= 0),
            key=lambda w: -evidence.get(w.surface, 0.0),
        )
    quotable = [(w.stem, w.fixed or w.surface) for w in words]
    query.memo["quotable"] = (evidence, quotable)  # with its order's evidence: another orders anew
    return quotable


def reasons(
    entry: Entry,
    query: Query,
    found: Recall,
    stems: Mapping[str, frozenset[str]],
    question_rank: int | None,
    questions: Sequence[tuple[str, frozenset[str]]],
    evidence: Mapping[str, float] | None = None,
) -> list[str]:
    """``stems``: the stems of each search column of the entry; ``questions``: its curated questions
    with their content tokens (both worked out once per entry by the searcher); ``evidence``: each
    question word's evidence for the map (offtopic.evidence), so the words that speak for the map
    are quoted first, and a number or a word that speaks against it ("2", "gets") is not quoted
    as a reason."""
    out: list[str] = []
    if entry.id in found.arxiv:
        out.append(f"arXiv id {found.arxiv[entry.id]}")
    named = [m for m in found.names if m.entry_id == entry.id]
    if named:
        best = named[0]
        out.append(
            f"title matches '{best.name}'" if best.is_title else f"also known as '{best.name}'"
        )
    labels = found.authors.get(entry.id)
    if labels:
        out.append("by " + ", ".join(labels[:3]))
    elif query.authorship and isinstance(entry, Paper) and entry.byline:
        out.append(
            f"written by {entry.byline}"
        )  # "who wrote PPO": the answer to the question asked
    explained = {stem(w) for m in named for w in m.name.lower().split()} if named else _NONE
    shown: dict[str, str] = {}
    for word_stem, quoted in _quotable(query, evidence):
        if word_stem not in explained:
            shown.setdefault(word_stem, quoted)
    phrases = []
    for column in ("names", "keywords", "summary", "body", "questions"):
        if not shown:
            break
        present = stems.get(column, _NONE)
        found_here = [s for s in shown if s in present]
        if found_here:
            hit = [shown.pop(s) for s in found_here]
            where = _BODY.get(entry.kind, "its notes") if column == "body" else _WHERE[column]
            phrases.append(f"mentions {_quote(hit)} in {where}")
    out.extend(phrases[:2])
    if question_rank is not None and question_rank <= EXPLAIN_QUESTION_RANK and questions:
        wanted = set(query.stems)
        best_q, tokens = max(questions, key=lambda q: len(wanted & q[1]))
        if wanted & tokens:
            out.append(f"close to a curated question: '{best_q}'")
    return out or ["shares words with the question"]
