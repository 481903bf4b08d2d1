"""The scenario banks through the engine: every profile's verdict, and the guided flow's.

tests/scenarios_locked.yaml is the locked bank (never edited to fit the engine);
tests/scenarios_tuning.yaml is this branch's own tuning set. A miss is printed with its
family, the expected and the actual verdict and the scores, so a failure says which class
of profile broke.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rlmap_bot.diagnosis.engine import Engine
from rlmap_bot.diagnosis.simulate import simulate
from rlmap_bot.knowledge.loader import load_catalog
from support import KNOWLEDGE

HERE = Path(__file__).resolve().parent
BANKS = {"locked": HERE / "scenarios_locked.yaml", "tuning": HERE / "scenarios_tuning.yaml"}
# How often the guided verdict must equal the --signals verdict. The locked bank's bar is the
# requirement. The tuning set holds more ties (two decisive readings on different stages), and the
# flow stops at the first decisive reading when nothing could explain it away, so it finds the
# second bottleneck only if it asks for it before; its floor is lower and its misses are printed.
GUIDED_FLOOR = {"locked": 0.95, "tuning": 0.90}


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(load_catalog(KNOWLEDGE))


def profiles(name: str) -> list[dict]:
    return yaml.safe_load(BANKS[name].read_text())


def truth_of(profile: dict) -> dict:
    truth = dict(profile["signals"])
    if profile.get("complaint"):
        truth["complaint"] = profile["complaint"]
    return truth


def _table(rows: list[str]) -> str:
    return "\n".join(["", *rows, ""])


@pytest.mark.parametrize("bank", sorted(BANKS))
def test_bank_is_well_formed(engine, bank):
    seen = set()
    for p in profiles(bank):
        assert p["id"] not in seen, f"duplicate id {p['id']}"
        seen.add(p["id"])
        assert p["expect"] in {None, *engine.stages}, p["id"]
        engine.validate(p["signals"])  # raises on an unknown signal or a bad value
        assert set(p.get("complaint") or []) <= set(engine.complaints), p["id"]
        assert p.get("family") and p.get("why"), p["id"]


@pytest.mark.parametrize("bank", sorted(BANKS))
def test_every_profile_through_signals(engine, bank):
    misses = []
    items = profiles(bank)
    for p in items:
        verdict = engine.diagnose(p["signals"])
        if verdict.binding_stage != p["expect"]:
            scores = ", ".join(f"{r.stage} {r.score:g}" for r in verdict.ranking if r.score)
            misses.append(f"  {p['id']} [{p['family']}]: expected {p['expect']}, got {verdict.binding_stage}"
                          f" (tied {verdict.tied}; {scores or 'no points'})")
    print(f"\n{bank} bank through --signals: {len(items) - len(misses)}/{len(items)}")
    assert not misses, f"{len(misses)} of {len(items)} {bank} profiles missed:" + _table(misses)


@pytest.mark.parametrize("bank", sorted(BANKS))
def test_guided_flow_reaches_the_signals_verdict(engine, bank):
    items = profiles(bank)
    misses, asked = [], []
    limit = engine.settings.max_questions
    for p in items:
        expected = engine.diagnose(p["signals"]).binding_stage
        result = simulate(engine, truth_of(p))
        asked.append(len(result["asked"]))
        assert len(result["asked"]) <= limit, p["id"]
        if result["binding_stage"] != expected:
            unasked = [s for s in p["signals"] if s not in result["asked"]]
            misses.append(f"  {p['id']} [{p['family']}]: --signals {expected}, guided {result['binding_stage']}"
                          f" after {len(result['asked'])} questions; never asked {unasked}")
    share = 1 - len(misses) / len(items)
    mean = sum(asked) / len(asked)
    print(f"\n{bank} bank, guided: {len(items) - len(misses)}/{len(items)} ({share:.1%}), "
          f"mean {mean:.2f} questions, at most {max(asked)}" + _table(misses))
    assert share >= GUIDED_FLOOR[bank], f"guided matches --signals on {share:.1%} of the {bank} bank:" + _table(misses)


HELDOUT = HERE / "scenarios_heldout.yaml"


def test_the_heldout_bank_stays_where_it_was_reached(engine):
    """45 profiles written after the rules, by someone who saw neither the rules nor the locked bank.

    Nobody tunes on it: only the counts are reported (in the benchmark and here), never which profiles
    miss. The floors are what the engine reached when the bank arrived (42/45 and 42/45).
    """
    items = yaml.safe_load(HELDOUT.read_text())
    right = sum(engine.diagnose(p["signals"]).binding_stage == p["expect"] for p in items)
    guided = sum(simulate(engine, truth_of(p))["binding_stage"] == engine.diagnose(p["signals"]).binding_stage
                 for p in items)
    print(f"\nheld-out bank: --signals {right}/{len(items)}, guided = --signals {guided}/{len(items)}")
    assert right >= 42 and guided >= 42, f"held-out bank: --signals {right}/{len(items)}, guided {guided}/{len(items)}"
