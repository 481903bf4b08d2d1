"""5-fold cross-validation of ask's weights and thresholds on the TUNING set only.

    python3 dev.py bench --cv --quality-only

For each fold, every grid point is scored on the other four folds and the best
one is measured on the held-out fold; the mean held-out figure is the honest
estimate printed as "CV".  The value written into params.py / catalog.yaml is
the best grid point on the whole tuning set.  tests/questions_locked.yaml is
never read here.

Three stages, each on what it controls:
1. ranking (recall and fusion parameters): mean of top-3 and MRR on covered questions;
2. the off-topic gate (mixture weight, discount, floor): balanced accuracy,
   (covered questions answered with a right entry in the top 3 + off-topic
   questions rejected) / 2, with the ranking of stage 1;
3. how many hits are shown (keep_share): mean F1 of shown hits against the expected ids.
"""

from __future__ import annotations

import itertools
import random
import statistics

from rlmap_bot.search.engine import Searcher
from rlmap_bot.search.offtopic import evidence
from rlmap_bot.search.params import DEFAULT, evidence_to_score

FOLDS = 5


def folds(items: list[dict], k: int = FOLDS, seed: int = 7) -> list[list[int]]:
    """Indices in k folds, stratified by question type."""
    rng = random.Random(seed)
    by_type: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        by_type.setdefault(item["type"], []).append(i)
    out: list[list[int]] = [[] for _ in range(k)]
    j = 0
    for idx in by_type.values():
        rng.shuffle(idx)
        for i in idx:
            out[j % k].append(i)
            j += 1
    return out


def _cv(grid: list, score_fn, n: int) -> tuple[float, object]:
    """score_fn(point, indices) -> mean score. Returns (mean held-out score, best point overall)."""
    parts = folds_cache[n]
    held = []
    for f in range(len(parts)):
        train = [i for g, p in enumerate(parts) if g != f for i in p]
        best = max(grid, key=lambda point: score_fn(point, train))
        held.append(score_fn(best, parts[f]))
    best_all = max(grid, key=lambda point: score_fn(point, list(range(n))))
    return statistics.mean(held), best_all


folds_cache: dict[int, list[list[int]]] = {}


def _ranking_score(ranked_ids: list[str], expect: set[str]) -> tuple[float, float]:
    top3 = 1.0 if expect & set(ranked_ids[:3]) else 0.0
    rank = next((r for r, i in enumerate(ranked_ids, 1) if i in expect), None)
    return top3, (1.0 / rank if rank else 0.0)


def cross_validate(store, questions: list[dict]) -> None:
    n = len(questions)
    folds_cache[n] = folds(questions)
    searcher = Searcher(store)
    covered = [i for i, q in enumerate(questions) if q["expect"]]

    # -- 1. ranking -------------------------------------------------------------------------
    recall_grid = list(itertools.product(
        [(8.0, 4.0, 4.0, 2.0, 1.0, 2.0), (1.0, 1.0, 1.0, 1.0, 1.0, 1.0)],
        [3.0, 3.5, 4.0, 4.5, 9.0], [3.0, 3.5, 4.0, 4.5, 9.0]))
    fusion_grid = list(itertools.product([0.5, 1.0, 5.0, 20.0, 60.0], [0.5, 1.0, 2.0], [0.25, 0.5, 1.0, 2.0],
                                         [0.25, 0.5, 1.0]))
    analyses = {}
    for cols, nz, az in recall_grid:
        p = DEFAULT.with_(columns=cols, name_zipf=nz, author_zipf=az)
        analyses[(cols, nz, az)] = [searcher.analyse(questions[i]["q"], p) if i in set(covered) else None
                                    for i in range(n)]
    memo: dict = {}

    def ranking(point, i):
        key = (point, i)
        if key not in memo:
            (cols, nz, az), (k, wn, wa, wq) = point
            a = analyses[(cols, nz, az)][i]
            p = DEFAULT.with_(columns=cols, name_zipf=nz, author_zipf=az, rrf_k=k, w_names=wn, w_authors=wa,
                              w_questions=wq)
            ids = [x for x, _ in searcher.rank(a.query, a.found, p)]
            memo[key] = _ranking_score(ids, set(questions[i]["expect"])) + (ids,)
        return memo[key]

    def rank_score(point, idx):
        idx = [i for i in idx if questions[i]["expect"]]
        return statistics.mean((ranking(point, i)[0] + ranking(point, i)[1]) / 2 for i in idx)

    # Coarse to fine: recall parameters with the default fusion, then fusion with the best recall.
    default_fusion = (DEFAULT.rrf_k, DEFAULT.w_names, DEFAULT.w_authors, DEFAULT.w_questions)
    cv_r, best_r = _cv([(r, default_fusion) for r in recall_grid], rank_score, n)
    cv_f, best = _cv([(best_r[0], f) for f in fusion_grid], rank_score, n)
    (cols, nz, az), (k, wn, wa, wq) = best
    print(f"0. Cross-validation on the tuning set ({n} questions, {FOLDS} folds, stratified by type)")
    print(f"   ranking: CV (top-3 + MRR)/2 = {cv_r:.3f} over recall settings, {cv_f:.3f} over fusion settings")
    print(f"   chosen: columns={cols} name_zipf={nz} author_zipf={az} rrf_k={k} w_names={wn} w_authors={wa} "
          f"w_questions={wq}")
    top3 = statistics.mean(ranking(best, i)[0] for i in covered)
    mrr = statistics.mean(ranking(best, i)[1] for i in covered)
    print(f"   with it, whole tuning set (no floor): top-3 {top3:.3f}, MRR {mrr:.3f}")

    # -- 2. the off-topic gate ------------------------------------------------------------------
    chosen = DEFAULT.with_(columns=cols, name_zipf=nz, author_zipf=az, rrf_k=k, w_names=wn, w_authors=wa,
                           w_questions=wq)
    full = [searcher.analyse(q["q"], chosen) for q in questions]
    right = [bool(q["expect"]) and bool(set(q["expect"]) & {x for x, _ in a.ranked[:3]})
             for q, a in zip(questions, full)]
    gate_grid = list(itertools.product([0.5, 0.8, 0.9, 0.95, 0.99], [0.0, 1.0, 2.0, 3.0], [3.5, 4.0, 4.5, 9.0],
                                       [0.25, 0.5, 1.0]))
    ev_cache = {}

    def evidence_of(point, i):
        if (point, i) not in ev_cache:
            mix, disc, ez, ew = point
            a = full[i]
            p = chosen.with_(mix=mix, discount=disc, everyday_zipf=ez, everyday_weight=ew)
            ev = evidence(a.query, searcher.lexicon, p, bool(a.found.arxiv))[0]
            ev_cache[(point, i)] = ev
        return ev_cache[(point, i)]

    def balanced(point, floor_ev, idx):
        on = [i for i in idx if questions[i]["expect"]]
        off = [i for i in idx if not questions[i]["expect"]]
        hit = sum(1 for i in on if right[i] and evidence_of(point, i) >= floor_ev) / max(1, len(on))
        rej = sum(1 for i in off if evidence_of(point, i) < floor_ev) / max(1, len(off))
        return (hit + rej) / 2

    def best_floor(point, idx):
        values = sorted({evidence_of(point, i) for i in idx if evidence_of(point, i) != float("inf")})
        cuts = [(a + b) / 2 for a, b in zip(values, values[1:])] or [0.0]
        return max(cuts, key=lambda c: (balanced(point, c, idx), -abs(c)))

    def gate_score(point, idx):
        return balanced(point, best_floor(point, idx), idx)

    cv_g, gate = _cv(gate_grid, gate_score, n)
    floor_ev = best_floor(gate, list(range(n)))
    on = [i for i in range(n) if questions[i]["expect"]]
    off = [i for i in range(n) if not questions[i]["expect"]]
    hit = sum(1 for i in on if right[i] and evidence_of(gate, i) >= floor_ev) / len(on)
    rej = sum(1 for i in off if evidence_of(gate, i) < floor_ev) / len(off)
    print(f"   gate: CV balanced accuracy = {cv_g:.3f}; chosen mix, discount, everyday_zipf, everyday_weight = "
          f"{gate}, evidence floor="
          f"{floor_ev:.3f} (search_floor {evidence_to_score(floor_ev):.3f}); whole tuning set: top-3 answered "
          f"{hit:.3f}, off-topic rejected {rej:.3f}")

    # -- 3. how many hits are shown ---------------------------------------------------------------
    def f1(share, idx):
        scores = []
        for i in idx:
            q, a = questions[i], full[i]
            if not q["expect"] or not a.ranked:
                continue
            top = a.ranked[0][1]
            shown = {x for x, s in a.ranked[:5] if s >= share * top}
            expect = set(q["expect"])
            tp = len(shown & expect)
            prec, rec = tp / len(shown), tp / min(len(expect), 5)
            scores.append(0.0 if tp == 0 else 2 * prec * rec / (prec + rec))
        return statistics.mean(scores)

    cv_k, share = _cv([0.2, 0.3, 0.4, 0.5, 0.6], f1, n)
    print(f"   shown hits: CV F1 = {cv_k:.3f}; chosen keep_share={share}")
