"""The scenario banks through the engine: every profile's verdict, and the guided flow's.

tests/scenarios_locked.yaml is the locked bank (never edited to fit the engine);
tests/scenarios_tuning.yaml is this branch's own tuning set; tests/scenarios_decisive.yaml holds
one profile per mechanism with a single decisive reading (issue 17). A miss is printed with its
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
BANKS = {
    "locked": HERE / "scenarios_locked.yaml",
    "tuning": HERE / "scenarios_tuning.yaml",
    "decisive": HERE / "scenarios_decisive.yaml",
}
# How often the guided verdict must equal the --signals verdict. The locked bank's bar is the
# requirement. The tuning set holds more ties (two decisive readings on different stages), and the
# flow stops at the first decisive reading when nothing could explain it away, so it finds the
# second bottleneck only if it asks for it before; its floor is lower and its misses are printed.
# The decisive bank's profiles know one reading each and say "don't know" to everything else: the
# flow must still find that reading and give its verdict.
GUIDED_FLOOR = {"locked": 0.95, "tuning": 0.90, "decisive": 1.0}


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
            misses.append(
                f"  {p['id']} [{p['family']}]: expected {p['expect']}, got {verdict.binding_stage} "
                f"(tied {verdict.tied}; {scores or 'no points'})"
            )
    print(f"\n{bank} bank through --signals: {len(items) - len(misses)}/{len(items)}")
    assert not misses, f"{len(misses)} of {len(items)} {bank} profiles missed:" + _table(misses)


@pytest.mark.parametrize("bank", sorted(BANKS))
def test_guided_flow_reaches_the_signals_verdict(engine, bank):
    items = profiles(bank)
    misses, asked = [], []
    for p in items:
        expected = engine.diagnose(p["signals"]).binding_stage
        result = simulate(engine, truth_of(p))
        asked.append(result["questions"])
        if result["binding_stage"] != expected:
            unasked = [s for s in p["signals"] if s not in result["asked"]]
            misses.append(
                f"  {p['id']} [{p['family']}]: --signals {expected}, guided "
                f"{result['binding_stage']} after {len(result['asked'])} questions; never asked "
                f"{unasked}"
            )
    share = 1 - len(misses) / len(items)
    mean = sum(asked) / len(asked)
    print(
        f"\n{bank} bank, guided: {len(items) - len(misses)}/{len(items)} ({share:.1%}), mean "
        f"{mean:.2f} questions, at most {max(asked)}" + _table(misses)
    )
    assert share >= GUIDED_FLOOR[bank], (
        f"guided matches --signals on {share:.1%} of the {bank} bank:" + _table(misses)
    )


HELDOUT = HERE / "scenarios_heldout.yaml"


@pytest.mark.parametrize("bank", [*sorted(BANKS), "heldout"])
def test_no_simulated_profile_is_put_more_than_twelve_questions(engine, bank):
    """Counted with the opening question and the readings list offered at a pause: nobody answers
    more than 12 questions in a Slack thread. Only the counts of the held-out bank are read."""
    items = yaml.safe_load(HELDOUT.read_text()) if bank == "heldout" else profiles(bank)
    put = [simulate(engine, truth_of(p))["questions"] for p in items]
    assert engine.settings.max_asked <= 12 and max(put) <= 12, f"{bank}: at most {max(put)}"
    assert min(put) >= 1


def test_the_heldout_bank_stays_where_it_was_reached(engine):
    """45 profiles written after the rules, by someone
    who saw neither the rules nor the locked bank.

    Nobody tunes on it: only the counts are reported
    (in the benchmark and here), never which profiles
    miss. The floors are what the engine reached when the bank arrived (42/45 and 42/45).
    """
    items = yaml.safe_load(HELDOUT.read_text())
    right = sum(engine.diagnose(p["signals"]).binding_stage == p["expect"] for p in items)
    guided = sum(
        simulate(engine, truth_of(p))["binding_stage"]
        == engine.diagnose(p["signals"]).binding_stage
        for p in items
    )
    print(
        f"\nheld-out bank: --signals {right}/{len(items)}, guided = --signals {guided}/{len(items)}"
    )
    assert right >= 42 and guided >= 42, (
        f"held-out bank: --signals {right}/{len(items)}, guided {guided}/{len(items)}"
    )


def test_one_decisive_reading_gives_its_verdict_and_says_it_rests_on_one(engine):
    """Issue 17: one plain measurement is a verdict,
    with a low confidence when it is only moderate.
    """
    lone = engine.diagnose({"rollout_wait_fraction": 0.80})
    assert lone.binding_stage == "rollouts" and lone.one_measurement
    assert lone.confidence < 0.5 and "rests on one measurement" in lone.summary
    firm = engine.diagnose({"rollout_wait_fraction": 0.80, "generation_utilization": 0.9})
    assert (
        firm.binding_stage == "rollouts"
        and not firm.one_measurement
        and firm.confidence > lone.confidence
    )
    # Checked and not confirmed: the trainer waits, but
    # neither busy generators, slow environments nor
    # stragglers explain it, so the moderate reading is back to needing a second one.
    checked = engine.diagnose(
        {
            "rollout_wait_fraction": 0.80,
            "generation_utilization": 0.6,
            "env_time_fraction": 0.2,
            "length_tail_ratio": 2,
        }
    )
    assert checked.binding_stage is None
    # A slow environment an asynchronous pipeline hides (the trainer hardly waits) is not blamed.
    assert engine.diagnose({"env_time_fraction": 0.86}).binding_stage == "environments"
    assert (
        engine.diagnose({"env_time_fraction": 0.86, "rollout_wait_fraction": 0.05}).binding_stage
        is None
    )
    # One measurement naming two stages equally is a conflict, not a verdict.
    assert engine.diagnose({"zero_advantage_fraction": 0.8}).binding_stage is None


def test_overoptimization_comes_before_the_entropy_collapse_it_causes(engine):
    """Precedence (knowledge/catalog.yaml): the tie of
    issue 17 is broken the way Gao et al. 2022 order it.
    """
    values = {
        "proxy_reward_trend": "rising",
        "heldout_score_trend": "falling",
        "entropy_trend": "collapsing",
    }
    verdict = engine.diagnose(values)
    assert verdict.binding_stage == "reward" and not verdict.tied
    first = next(e for e in verdict.evidence if e.rule == "heldout_score_trend.overoptimization")
    assert "entropy_trend.collapse_with_plateau" in first.explains_away
    # Without the fall in the held-out score there is nothing to put first.
    assert (
        engine.diagnose({**values, "heldout_score_trend": "flat"}).binding_stage == "optimization"
    )
