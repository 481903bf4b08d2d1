"""Reciprocal rank fusion: every list votes by rank, none vetoes.

An entry's fused score is the sum over lists of ``weight / (k + rank)``.  Ranks,
not raw scores, are combined because BM25, name matches and byline matches are
on scales that cannot be compared; an entry first in two lists beats one first
in a single list, which is what a question naming two entries needs.
"""

from __future__ import annotations

from rlmap_bot.search.params import Params


def weights(params: Params) -> dict[str, float]:
    return {
        "bm25": params.w_bm25,
        "names": params.w_names,
        "authors": params.w_authors,
        "questions": params.w_questions,
        "near": params.w_near,
        # An arXiv id names one entry exactly: it outweighs every other list together.
        "arxiv": params.w_bm25
        + params.w_names
        + params.w_authors
        + params.w_questions
        + params.w_near,
    }


def fuse(
    lists: dict[str, list[str]],
    params: Params,
    allowed=None,
    ties: dict[str, dict[str, int]] | None = None,
) -> list[tuple[str, float]]:
    """(entry id, fused score) best first; ``allowed`` filters ids (authorship: papers only).

    ``ties`` gives, per list, a tier for each id: ids of one tier share the best rank of the tier
    (four papers by the same author are equally "by" that author; BM25 tells them apart).
    """
    w = weights(params)
    scores: dict[str, float] = {}
    for name, ids in lists.items():
        tiers = (ties or {}).get(name)
        rank = 0
        tier_rank: dict[int, int] = {}
        for entry_id in ids:
            if allowed is not None and not allowed(entry_id):
                continue
            rank += 1
            shared = tier_rank.setdefault(tiers[entry_id], rank) if tiers else rank
            scores[entry_id] = scores.get(entry_id, 0.0) + w.get(name, 0.0) / (
                params.rrf_k + shared
            )
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
