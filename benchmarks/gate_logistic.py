#!/usr/bin/env python3
"""Measure a learned gate: logistic regression over
what the analysis already computes (not adopted).

    .venv/bin/python benchmarks/gate_logistic.py

The question it answers: is the floor-and-weak-band gate losing answers because one threshold
on summed evidence is too blunt, when the features are good enough? Each question becomes 13
numbers the search already has (the evidence total, the best and worst word, how many words speak
for and against the map, the coherence of the nearest entries, the content words, the top fused
score and its lead, ...); a class-balanced logistic regression (numpy, L2) decides "answer" or
"nothing relevant". It is fit on the tuning set only, 5-fold cross-validation repeated over five
shuffles; the same fit on the whole tuning set is then run on the locked and outsider sets, which
it never saw. An answer counts when the ranking holds an expected entry in its first three.

Printed: held-out tuning figures of the learned gate against ask's own nested figures (from
`dev.py bench`), and both gates on the untuned sets (aggregates only).
"""

from __future__ import annotations

import math
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

from rlmap_bot.knowledge.store import KnowledgeStore  # noqa: E402
from rlmap_bot.search.engine import Searcher  # noqa: E402
from rlmap_bot.search.index import build_store  # noqa: E402
from run import quality_sets  # noqa: E402

FOLDS, SHUFFLES, L2 = 5, 5, 1.0


def features(searcher: Searcher, question: str) -> tuple[list[float], list[str], bool]:
    """The 13 features, the ranking's first three ids, and whether ask itself answers."""
    an = searcher.analyse(question)
    answer = searcher.answer(an, limit=5)
    ev = 15.0 if math.isinf(an.evidence) else max(-5.0, min(15.0, an.evidence))
    we = list(an.word_evidence.values()) or [0.0]
    pos, neg = [e for e in we if e > 0], [e for e in we if e < 0]
    content = sum(1 for w in an.query.words if any(c.isalpha() for c in w.surface))
    coherence = searcher.coherence(an)
    top = an.ranked[0][1] if an.ranked else 0.0
    second = an.ranked[1][1] if len(an.ranked) > 1 else 0.0
    x = [
        ev,
        max(we),
        len(pos),
        len(neg),
        coherence,
        content,
        top,
        (top - second) / (top or 1.0),
        len(pos) / len(we),
        sum(pos),
        sum(neg),
        min(we),
        coherence / max(1, len(pos)),
    ]
    return x, [i for i, _ in an.ranked[:3]], answer.shows_entries


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 3000, rate: float = 0.1):
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = (x - mu) / sd
    w, b = np.zeros(z.shape[1]), 0.0
    share = np.where(
        y == 1, 0.5 / max(1, y.sum()), 0.5 / max(1, (1 - y).sum())
    )  # classes weigh the same
    for _ in range(steps):
        g = (1 / (1 + np.exp(-(z @ w + b))) - y) * share
        w -= rate * (z.T @ g + l2 * w / len(y))
        b -= rate * g.sum()
    return mu, sd, w, b


def predict(model, x: np.ndarray) -> np.ndarray:
    mu, sd, w, b = model
    return ((x - mu) / sd) @ w + b >= 0


def figures(rows, answered) -> tuple[float, float]:
    """(top-3 over on-map questions, share of off-topic questions given nothing)."""
    on = [a and r["hit"] for r, a in zip(rows, answered, strict=True) if r["on"]]
    off = [not a for r, a in zip(rows, answered, strict=True) if not r["on"]]
    return sum(on) / len(on), sum(off) / max(1, len(off))


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "k.db"
        build_store(ROOT / "knowledge", db)
        searcher = Searcher(KnowledgeStore(db))
        sets = {}
        for name, questions in quality_sets():
            rows = []
            for q in questions:
                x, top3, asks = features(searcher, q["q"])
                expect = set(q.get("expect") or [])
                rows.append(
                    {"x": x, "on": bool(expect), "hit": bool(expect & set(top3)), "ask": asks}
                )
            sets[name] = rows
    tuning = sets["tuning"]
    x = np.array([r["x"] for r in tuning])
    y = np.array([1.0 if r["on"] else 0.0 for r in tuning])
    held = []
    for seed in range(SHUFFLES):
        order = list(range(len(tuning)))
        random.Random(seed).shuffle(order)
        answered = [False] * len(tuning)
        for k in range(FOLDS):
            test = order[k::FOLDS]
            train = sorted(set(order) - set(test))
            for i, a in zip(test, predict(fit(x[train], y[train]), x[test]), strict=True):
                answered[i] = bool(a)
        held.append(figures(tuning, answered))
    top3 = sum(h[0] for h in held) / len(held)
    reject = sum(h[1] for h in held) / len(held)
    print(
        f"Learned gate (logistic, 13 features, L2 {L2}), tuning set held out over {SHUFFLES} "
        f"shuffles "
        f"of {FOLDS} folds: top-3 {top3:.3f}, off-topic rejected {reject:.3f}"
    )
    print("   (ask's own gate, nested CV: see `python3 dev.py bench`)")
    model = fit(x, y)
    print("   set        gate            top-3  reject")
    for name, rows in sets.items():
        if name == "tuning":
            continue
        learned = predict(model, np.array([r["x"] for r in rows]))
        for label, answered in (
            ("ask's own", [r["ask"] for r in rows]),
            ("learned", [bool(a) for a in learned]),
        ):
            t, r = figures(rows, answered)
            print(f"   {name:10} {label:14} {t:6.3f}  {r:6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
