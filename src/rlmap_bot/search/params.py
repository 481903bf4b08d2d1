"""The weights and thresholds of ask, in one place, each with where its value comes from.

Values marked "CV" were chosen by 5-fold cross-validation on tests/questions.yaml
(the tuning set; `python3 dev.py bench --cv` reruns it): on each fold the grid
point that did best on the other four folds is scored on the held-out fold.
The locked set (tests/questions_locked.yaml) is never used to choose anything.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Params:
    # -- fusion: reciprocal rank fusion of the recall lists (fuse.py) --------------------------
    # CV over {0.5, 1, 5, 20, 60}: a small k lets a first place count clearly more than a fifth.
    rrf_k: float = 1.0
    w_bm25: float = 1.0  # BM25 over every field: the reference list, weight 1 by definition
    w_names: float = 1.0  # CV over {0.5, 1, 2}: a title or alias found whole in the question
    w_authors: float = 0.25  # CV over {0.25, 0.5, 1, 2}: byline words found in the question
    w_questions: float = 0.5  # CV over {0.25, 0.5, 1}: BM25 over the curated example questions
    # bm25() column weights: names, authors, keywords, summary, body, questions. CV over two
    # profiles: this one (names and keywords first) won over flat weights (all 1).
    columns: tuple[float, ...] = (8.0, 4.0, 4.0, 2.0, 1.0, 2.0)
    # -- names and bylines (recall.py) ----------------------------------------------------------
    # A one-word name this common in English ("Rapid" 4.4, "Forge") is a name only when it is the
    # whole question; CV over {3.0, 3.5, 4.0, 4.5, 9 (= never)} chose "never" once one-word names
    # had to match as written ("seeds" is no longer the name "SEED").
    name_zipf: float = 9.0
    # A byline word this common ("Team" 5.67, "Brain", "Pan") counts only in an authorship
    # question ("papers by Pan"); same grid as name_zipf.
    author_zipf: float = 3.0
    # -- off-topic evidence (offtopic.py) ---------------------------------------------------------
    # The question is read as a mixture: with weight `mix` the catalog's own word use, with
    # 1 - mix general English. CV over {0.5, 0.8, 0.9, 0.95, 0.99}.
    mix: float = 0.9
    # Catalog counts are discounted by this many uses before they count as evidence. CV over
    # {0, 1, 2, 3}. The evidence an answer needs is search_floor in knowledge/catalog.yaml.
    discount: float = 1.0
    # Next to a foreign word, catalog words at least this common in English (Zipf) count with
    # everyday_weight of their evidence. CV over {3.5, 4.0, 4.5, 9 (= never)} x {0.25, 0.5, 1}.
    everyday_zipf: float = 4.5
    everyday_weight: float = 0.5
    # Measured on the same folds and not adopted, as the held-out figure did not improve: extra
    # gate evidence for a multi-word name found whole, a smaller penalty for very common foreign
    # words, words the catalog barely uses treated as foreign, a logistic regression over ten gate
    # features (0.927-0.936 against 0.964 for this rule), a list of neighbouring-word phrases
    # (FTS5 NEAR; ranking CV 0.959 against 0.966) and shared ranks for equally long names.
    # -- what is shown (engine.py) ----------------------------------------------------------------
    # After the first three, a hit below this share of the top hit's fused score is padding. CV
    # on the F1 of shown hits against the expected ids over {0.2, 0.3, 0.4, 0.5, 0.6}.
    keep_share: float = 0.5

    def with_(self, **changes) -> "Params":
        return replace(self, **changes)


DEFAULT = Params()


def floor_to_evidence(floor: float) -> float:
    """catalog.yaml's search_floor (0-1) as evidence: the inverse of evidence / (evidence + 1)."""
    floor = min(max(floor, 0.0), 0.999)
    return floor / (1.0 - floor)


def evidence_to_score(evidence: float) -> float:
    return evidence / (evidence + 1.0) if evidence > 0 else 0.0
