"""Fit how sure a verdict says it is, on the population's tuning seed (issue 36, item 1).

    .venv/bin/python benchmarks/calibrate.py [--jobs N] [--per-class N] [--dry-run]

The population benchmark's tuning seed (``benchmarks/population.py``, ``TUNING_SEED``; never the
held-out seed) is read through the product with no calibration map (a copy of ``knowledge/``
without ``calibration.yaml``).  Every scored ``diagnose`` states a stage (or a tie) or "no single
stage" with the engine's probability of it; each is right or wrong against the run's truth, as
the benchmark scores it.  For each kind of statement a non-decreasing map from that probability
to how often it was right is fitted by pool-adjacent-violators (isotonic regression, written
here: scikit-learn is not a dependency), and written to ``knowledge/calibration.yaml`` with the
data it was fitted on; :meth:`rlmap_bot.diagnosis.scoring.Scoring.stated` applies it.

Isotonic rather than Platt: the stated probabilities are not a logistic function of how often
they are right (verdicts at 40-60% were right 9 times in 10 and those at 94% 8 in 10 before it),
and a two-parameter logistic cannot bend to that, while a monotone step map can.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import population as bench  # noqa: E402
from support import population as pop  # noqa: E402  (population.py put tests/ on the path)

OUT = bench.KNOWLEDGE / "calibration.yaml"
#: A kind of statement with fewer verdicts than this is left uncalibrated.  Judgement: below a
#: few dozen, one block's frequency moves by several points with each verdict.
MIN_VERDICTS = 30
#: Pseudo-counts added to each block's right and wrong verdicts (Jeffreys' prior, half a verdict
#: each), so that no finite sample makes the bot say 100% or 0%.
PRIOR = 0.5
#: No verdict on a run is said surer than this.  Judgement: the population is generated and holds
#: only the faults its classes were built with; a real run can go wrong in ways none of them do
#: (on the real-log bank, a healthy control is told "rollouts binds" and a pool beyond reach
#: "optimization binds"), so a block right every time on the tuning seed is not said as certain.
MAX_STATED = 0.95


#: Verdicts on one measurement are left out of the fit and never raised by the map
#: (``Engine.diagnose``).  On the population they are the rollout-bound class, whose truth is
#: that one reading itself (generation at half the step or more, the rule's own line): right
#: every time by construction, they measure the generator, not how often such a verdict is right
#: on a real run, and the rule marks its reading as moderate until a second one places it.  Fitted
#: with them, the whole stage map was one block at 95%, and a verdict the engine gives 40% on one
#: real reading was said at 95%.
SKIP_ONE = True


def pairs_by_kind(result: dict) -> dict[str, list[tuple[float, bool]]]:
    """Each scored diagnose's (probability stated, right), split by what it states; scored as
    ``population.score`` scores calibration (a check just after onset is not scored); verdicts
    on one measurement apart, as ``one`` (see :data:`SKIP_ONE`)."""
    out: dict[str, list[tuple[float, bool]]] = {"stage": [], "none": [], "one": []}
    for run in result["population"]:
        for said in result["said"].get(run.name, []):
            if said.view != "diagnose" or said.confidence is None:
                continue
            state = run.truth.at(said.step)
            if state == "early":
                continue
            kind = "one" if SKIP_ONE and said.one else "stage" if said.stages else "none"
            out[kind].append((float(said.confidence), bench.stated_right(run.truth, state, said)))
    return out


def isotonic(pairs: list[tuple[float, bool]]) -> list[tuple[float, float]]:
    """Pool-adjacent-violators over (probability, right), sorted by probability: the knots
    (mean probability, how often right) of the non-decreasing step map, each block's frequency
    shrunk by :data:`PRIOR`, kept non-decreasing and at most :data:`MAX_STATED`."""
    groups: dict[float, list[float]] = {}  # one group per probability: ties are one point
    for x, ok in pairs:
        g = groups.setdefault(round(x, 6), [0.0, 0.0, 0.0])
        g[0], g[1], g[2] = g[0] + ok, g[1] + 1, g[2] + x
    blocks: list[list[float]] = []  # [right, count, sum of probabilities]
    for _, group in sorted(groups.items()):
        blocks.append(list(group))
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            right, count, total = blocks.pop()
            blocks[-1][0] += right
            blocks[-1][1] += count
            blocks[-1][2] += total
    knots: list[tuple[float, float]] = []
    floor = 0.0
    for right, count, total in blocks:
        y = min(MAX_STATED, max(floor, (right + PRIOR) / (count + 2 * PRIOR)))
        floor = y
        knots.append((round(total / count, 4), round(y, 4)))
    return knots


def support(pairs: list[tuple[float, bool]]) -> tuple[float, float]:
    """The lowest and highest probability fitted on: below it the map has seen no verdict and
    never raises one (:class:`rlmap_bot.knowledge.settings.Calibration`)."""
    xs = [x for x, _ in pairs]
    return (round(min(xs), 4), round(max(xs), 4))


def write(
    knots: dict[str, list[tuple[float, float]]],
    counts: dict[str, int],
    path: Path,
    on: str = "",
    ranges: dict[str, tuple[float, float]] | None = None,
) -> None:
    import yaml

    body = {
        "method": f"isotonic regression (pool-adjacent-violators) per kind of statement, each "
        f"block shrunk by {PRIOR} right and {PRIOR} wrong verdicts (Jeffreys' prior), none above "
        f"{MAX_STATED}",
        "fitted_on": f"benchmarks/population.py, tuning seed {pop.TUNING_SEED}: every scored "
        f"diagnose at 50% and 100% of each run, read with no calibration map "
        f"({counts.get('stage', 0)} stating a stage or a tie, {counts.get('none', 0)} stating no "
        f"single stage; {counts.get('one', 0)} on one measurement left out, as calibrate.py's "
        f"SKIP_ONE says why)" + (f"; the product at {on}" if on else ""),
        "command": ".venv/bin/python benchmarks/calibrate.py",
        "knots": {k: [list(p) for p in v] for k, v in knots.items()},
        "support": {k: list(v) for k, v in (ranges or {}).items() if k in knots},
    }
    head = (
        "# How sure a verdict says it is: the engine's probability of what it states, mapped to\n# "
        "how often such verdicts were right on runs with known truth. Generated; do not edit:\n# "
        "refit with the command below after any change to the rules or the signals, and\n# report "
        "the held-out seed (docs/measurements.md, 'Verdicts on a population of runs').\n"
    )
    path.write_text(head + yaml.safe_dump(body, sort_keys=False, width=100))


def reliability(pairs: list[tuple[float, bool]], width: int = 40) -> str:
    """The reliability table (markdown) and its diagram in text: per 10% bin of what was stated,
    how many, the mean stated and how often right, a bar for each (``=`` stated, ``#`` right)."""
    cal = bench.calibration(pairs)
    rows = ["| stated | verdicts | mean stated | right |", "|---|---|---|---|"]
    art = [f"ECE {cal['ece']:.3f} over {cal['n']} verdicts; bars: = stated, # right, | = 100%"]
    for b in cal["table"]:
        rows.append(f"| {b['bin']} | {b['n']} | {b['stated']:.0%} | {b['right']:.0%} |")
        art.append(
            f"{b['bin']:>8} {b['n']:>4}  stated {'=' * round(width * b['stated']):<{width}}|"
        )
        art.append(f"{'':>15}right  {'#' * round(width * b['right']):<{width}}|")
    return "\n".join(rows) + "\n\n```text\n" + "\n".join(art) + "\n```"


def _said(row: dict) -> dict:
    """A Said as the benchmark's JSON keeps it (tuples as lists)."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in row.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--per-class", type=int, default=pop.PER_CLASS)
    ap.add_argument("--dry-run", action="store_true", help="print the fit, write nothing")
    ap.add_argument(
        "--from-json",
        metavar="PATH",
        help="fit on a 'population.py --seed tuning --json PATH' taken with no calibration.yaml "
        "instead of reading the runs again",
    )
    ap.add_argument(
        "--report",
        metavar="PATH",
        help="print the reliability table and diagram of a 'population.py --json PATH' (its first "
        "seed, as the map states it), and fit nothing",
    )
    ap.add_argument("--on", default="", help="the code fitted on, for the record (a commit)")
    ap.add_argument(
        "--save-json", metavar="PATH", help="also keep the reading fitted on, for --from-json"
    )
    args = ap.parse_args(argv)
    if args.report:
        import json

        dump = json.loads(Path(args.report).read_text())["said"]
        label, said = next(iter(dump.items()))
        seed = pop.TUNING_SEED if label == "tuning" else pop.HELDOUT_SEED
        result = {
            "population": pop.population(seed, args.per_class),
            "said": {n: [bench.Said(**_said(s)) for s in v] for n, v in said.items()},
        }
        by_kind = pairs_by_kind(result)
        print(f"{label} seed {seed}, all verdicts:")
        print(reliability([p for v in by_kind.values() for p in v]))
        for kind, pairs in by_kind.items():
            if not pairs:
                continue
            print(f"\n{kind} ({len(pairs)}):")
            print(reliability(pairs))
        return 0
    if args.from_json:
        import json

        dump = json.loads(Path(args.from_json).read_text())["said"]["tuning"]
        result = {
            "population": pop.population(pop.TUNING_SEED, args.per_class),
            "said": {n: [bench.Said(**_said(s)) for s in v] for n, v in dump.items()},
        }
    else:
        with tempfile.TemporaryDirectory(prefix="rlmap-calibrate-") as tmp:
            raw = Path(tmp) / "knowledge"
            shutil.copytree(bench.KNOWLEDGE, raw, ignore=shutil.ignore_patterns("calibration.yaml"))
            result = bench.measure(pop.TUNING_SEED, args.per_class, args.jobs, knowledge=raw)
        if args.save_json:
            import json
            from dataclasses import asdict

            said = {n: [asdict(x) for x in v] for n, v in result["said"].items()}
            Path(args.save_json).write_text(json.dumps({"said": {"tuning": said}}, indent=1))
    by_kind = pairs_by_kind(result)
    knots = {k: isotonic(v) for k, v in by_kind.items() if k != "one" and len(v) >= MIN_VERDICTS}
    ranges = {k: support(v) for k, v in by_kind.items() if k in knots}
    counts = {k: len(v) for k, v in by_kind.items()}
    before = bench.calibration([p for v in by_kind.values() for p in v])
    print(f"tuning seed, no map: ECE {before['ece']:.3f} over {before['n']} verdicts")
    for kind, fitted in knots.items():
        print(
            f"  {kind} ({counts[kind]} verdicts, {ranges[kind][0]:.3f}-{ranges[kind][1]:.3f}): "
            + ", ".join(f"{x:.3f}->{y:.3f}" for x, y in fitted)
        )
    if not args.dry_run:
        write(knots, counts, OUT, args.on, ranges)
        print(f"wrote {OUT.relative_to(bench.ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
