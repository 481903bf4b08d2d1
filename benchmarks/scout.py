"""Benchmark: the weekly scout ranks 2,000 arXiv feed entries by relevance to the map.

    python benchmarks/scout.py [--entries N] [--repeat R]

The entries are arXiv's own: the 100 of a real recorded search feed (tests/data/arxiv/
query_testing.xml, parsed by the ``arxiv`` package's feed parser, as the scout reads them),
repeated under fresh ids to N (default 2,000). It times building the map's vocabulary from
the knowledge store, ranking the N entries, and picking the best five that are neither in the
catalog nor suggested before, and prints the best of R runs (default 5). The target: ranking
2,000 entries in under 2 s. Not part of the tests.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from arxiv import _feed

    from rlmap_bot.core import Core
    from rlmap_bot.curation.arxiv_source import to_record
    from rlmap_bot.curation.scout import rank, vocabulary

    feed = _feed.parse((ROOT / "tests" / "data" / "arxiv" / "query_testing.xml").read_bytes())
    base = [to_record(r) for r in feed.results]
    records = [
        base[i % len(base)].model_copy(update={"arxiv_id": f"2999.{i:05d}"})
        for i in range(args.entries)
    ]
    with tempfile.TemporaryDirectory() as home:
        core = Core(
            ROOT / "knowledge", Path(home) / "knowledge.db", state_url=Path(home) / "state.db"
        )
        vocab_s, rank_s = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            vocab = vocabulary(core.store)
            vocab_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            ranked = rank(vocab, records)
            rank_s.append(time.perf_counter() - start)
    print(f"vocabulary: {len(vocab.terms)} terms from the catalog in {min(vocab_s) * 1000:.0f} ms")
    print(
        f"ranked {len(records)} entries in {min(rank_s):.3f} s (best of {args.repeat}; target < 2 "
        f"s)"
    )
    print(
        "best three (each is repeated under new ids):",
        *(f"  {s:.2f}  {r.title[:70]}" for r, s in ranked[:: args.entries // 100 or 1][:3]),
        sep="\n",
    )
    sys.exit(0 if min(rank_s) < 2 else 1)


if __name__ == "__main__":
    main()
