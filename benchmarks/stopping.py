"""Benchmark: how often a watch says when to stop, on generated runs whose truth is known.

    .venv/bin/python benchmarks/stopping.py [--seed tuning|heldout] [--per-class N]
                                            [--classes a,b,...] [--json PATH]

Each run of ``tests/support/population.py`` is written as its log, read through the product
(``read_source``, ``derive_signals``) and its default curve (``runs.forecast.default_curve``: the
held-out score when logged densely enough, else the training reward) is forecast as a watch's
checks would see it, at every tenth of the run from 20% (``scaling.outlook``); each check's
forecast goes through the watch's own rule (``watch.stopping.advise``) with the watch's state
carried from check to check. Counted per class: the runs told ``stop:reached`` and
``stop:falling``, and for a class that goes wrong, whether it was said after its onset.

A rising run told either is a false stop; a saturating run told ``reached`` is a right one; a
collapsing run told ``falling`` after its onset is a warning in time to keep the checkpoint from
before the fall. The forecasts are of the whole log cut at each check (a watch forecasts its
bounded kept sample, the same points for runs of these lengths).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from rlmap_bot.runs.aliases import default_aliases  # noqa: E402
from rlmap_bot.runs.forecast import CURVE_WORDS, default_curve, finite  # noqa: E402
from rlmap_bot.runs.signals import derive_signals  # noqa: E402
from rlmap_bot.runs.sources import read_source  # noqa: E402
from rlmap_bot.scaling.outlook import outlook  # noqa: E402
from rlmap_bot.watch.conditions import Evaluation  # noqa: E402
from rlmap_bot.watch.model import Tracking  # noqa: E402
from rlmap_bot.watch.stopping import advise  # noqa: E402
from support.population import HELDOUT_SEED, TUNING_SEED, make_run  # noqa: E402

CLASSES = ("rising", "saturating", "late_collapse", "output_collapse")
CUTS = [round(0.2 + 0.1 * i, 1) for i in range(9)]


def told(kind: str, index: int, seed: int, folder: Path) -> dict[str, int]:
    """The step at which each stop was first said of one run (absent: never)."""
    run = make_run(kind, index, seed)
    path = run.write(folder / f"{run.name}{run.suffix}")
    aliases = default_aliases()
    derivation = derive_signals(read_source(path, aliases), aliases)
    chosen = default_curve(derivation)
    if chosen is None:
        return {}
    steps, values = finite(chosen[1])
    tracking, conditions, episodes = Tracking(), {}, {}
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    said: dict[str, int] = {}
    for share in CUTS:
        keep = steps <= run.cut(share)
        forecast = outlook(
            steps[keep].astype(float),
            values[keep],
            source=run.name,
            metric=chosen[1].label,
            quantity=CURVE_WORDS[chosen[0]],
        )
        evaluation = Evaluation(conditions, episodes)
        advise(evaluation, forecast, tracking, now)
        for t in evaluation.transitions:
            said.setdefault(t.condition.key, run.cut(share))
        conditions, episodes = evaluation.conditions, evaluation.episodes
        now += dt.timedelta(minutes=15)
    return said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", choices=("tuning", "heldout"), default="heldout")
    parser.add_argument("--per-class", type=int, default=10)
    parser.add_argument("--classes", default=",".join(CLASSES))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    seed = HELDOUT_SEED if args.seed == "heldout" else TUNING_SEED
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.classes.split(","):
            for i in range(args.per_class):
                said = told(kind, i, seed, Path(tmp))
                onset = make_run(kind, i, seed).truth.onset
                c = counts[kind]
                c["runs"] += 1
                for key in ("stop:reached", "stop:falling"):
                    if key in said:
                        c[key] += 1
                        if onset is not None and said[key] >= onset:
                            c[key + " after onset"] += 1
                rows.append({"kind": kind, "index": i, "onset": onset, "said": said})
                print(kind, i, said, flush=True)
    print(f"\nseed {seed} ({args.seed}), checks at every tenth of a run from 20%:")
    for kind, c in counts.items():
        print(f"  {kind:16s} " + ", ".join(f"{k} {v}" for k, v in c.items()))
    if args.json:
        args.json.write_text(json.dumps({"seed": seed, "runs": rows}, indent=1))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
