"""The real-log bank: the reader held to each log's expert reading, written before the tool read it.

The readings (tests/data/real_logs/readings.yaml, with the tolerances in its header) were computed
without rlmap_bot.  What is held here, per log: the format and the main series' steps exactly;
per quantity the tool reads from the same metric, its start and first/last tenth and fifth medians
within 2% (or 1e-6 near zero), its level ratios within 2%, and its overall direction among the
accepted labels; the faults; and that no signal reads steady when its level fell below a quarter
of its first value.  The readings are never edited to fit the tool: a disagreement the tool's
authors stand by is a strict xfail naming why (it
fails the suite the day the tool changes its mind).

The log files are not in the repository (see the bank's README): they are read from
``RLMAP_REAL_LOGS``, or ``../shared/real_logs`` beside the checkout as CI places them; a log whose
folder is not there skips its own tests only (a CI's folder may hold an older, smaller bank).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml

from rlmap_bot.results.faults import TailShift
from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from rlmap_bot.runs.stats import COLLAPSED_SHARE
from rlmap_bot.runs.verdict import verdict_for
from rlmap_bot.wording import verdicts
from support.realbank import bank_log, logs_folder

ROOT = Path(__file__).resolve().parent.parent
BANK = ROOT / "tests" / "data" / "real_logs"
READINGS = BANK / "readings.yaml"


if not READINGS.is_file():
    pytest.skip(
        "the real-log bank (tests/data/real_logs/readings.yaml) is not in this checkout",
        allow_module_level=True,
    )
LOGS = logs_folder()
if LOGS is None:
    pytest.skip(
        "the real-log files are not here: set RLMAP_REAL_LOGS to the folder holding them "
        "(tests/data/real_logs/README.md)",
        allow_module_level=True,
    )
if not LOGS.is_dir():
    pytest.fail(f"RLMAP_REAL_LOGS={LOGS} is not a folder", pytrace=False)

BANK_LOGS = yaml.safe_load(READINGS.read_text(encoding="utf-8"))["logs"]
CHOICES = {
    b["name"]: b for b in yaml.safe_load((BANK / "bank.yaml").read_text(encoding="utf-8"))["logs"]
}
#: The expert's quantity names -> the tool's quantities that may carry the same metric.
QUANTITY = {
    "reward": ("task_reward",),
    "score": ("task_pass_rate",),  # a training accuracy beside the reward (EasyR1)
    "heldout": ("heldout_score",),
    "entropy": ("entropy",),
    "length": ("response_length",),
    "grad_norm": ("grad_norm",),
    "loss": ("policy_loss", "loss"),
    "kl": ("kl_reference", "mismatch_kl", "kl_loss"),
    "clip_frac": ("clip_fraction",),
    "gen_share": ("trainer_idle",),
    "zero_std": ("zero_std_fraction",),
    "truncated": ("truncation",),
}
#: Readings the tool's authors disagree with, and why (strict: the day the tool agrees, this fails).
DISAGREE = {
    (
        "grpo-trl-countdown-49",
        "loss",
    ): "a -30% move of a signed surrogate loss between 10-point medians is inside the medians' "
    "standard error (1.25 sigma sqrt(2/k)); the tool says flat",
    (
        "verl-old-logic-9",
        "loss",
    ): "9 points: the 20% windows are 2-point medians, whose difference is inside their standard "
    "error; the tool says flat",
    (
        "easyr1-geo3k-resumed-36",
        "loss",
    ): "the loss sits at +0.017 from the first fifth on, against -0.0017 over the first 3 points: "
    "the run's largest change is at its start, so the tool reads rising where the 20% windows "
    "alone read falling",
}


_DERIVED: dict[str, tuple] = {}


def _read(name: str, aliases):
    log = next(x for x in BANK_LOGS if x["name"] == name)
    assert LOGS is not None
    path = bank_log(LOGS, name, log["path"])
    if name not in _DERIVED:
        run_id = (CHOICES.get(name, {}).get("run") or {}).get("value")
        main = log["steps"][
            "main_metric"
        ]  # kept even where the alias table does not map it (as --map does)
        run = read_source(path, aliases=aliases, run_id=run_id, extra_metrics=[main])
        _DERIVED[name] = (log, run, derive_signals(run, aliases))
    return _DERIVED[name]


def _close(tool: float | None, expert: float | None, rel: float = 0.02) -> bool:
    if tool is None or expert is None:
        return tool is None and expert is None
    return math.isclose(tool, expert, rel_tol=rel, abs_tol=1e-6)


def _level_pairs():
    for log in BANK_LOGS:
        for quantity in log["quantities"]:
            marks = (
                [pytest.mark.xfail(strict=True, reason=DISAGREE[(log["name"], quantity)])]
                if (log["name"], quantity) in DISAGREE
                else []
            )
            yield pytest.param(log["name"], quantity, id=f"{log['name']}-{quantity}", marks=marks)


@pytest.mark.parametrize("name", [x["name"] for x in BANK_LOGS])
def test_format_and_steps(name, aliases):
    log, run, _ = _read(name, aliases)
    assert run.format == log["format"]
    steps = log["steps"]
    main = run.series[steps["main_metric"]]
    ok = main.values == main.values  # finite or inf, not NaN: the readings count finite points
    assert (int(main.steps[0]), int(main.steps[-1]), int(ok.sum())) == (
        steps["first"],
        steps["last"],
        steps["points"],
    )


@pytest.mark.parametrize("name, quantity", list(_level_pairs()))
def test_levels_and_direction(name, quantity, aliases):
    log, _, derived = _read(name, aliases)
    expert = log["quantities"][quantity]
    tool = next(
        (
            derived.levels[q]
            for q in QUANTITY.get(quantity, ())
            if q in derived.levels and derived.levels[q].metric == expert["metric"]
        ),
        None,
    )
    if tool is None:
        assert not any(derived.levels[q].metric == expert["metric"] for q in derived.levels), (
            "read, but elsewhere"
        )
        # a metric the alias table does not map to this quantity: nothing of the tool's to hold
        return
    assert tool.points == expert["points"]
    if "first_step" in expert:
        assert (tool.first_step, tool.last_step) == (expert["first_step"], expert["last_step"])
    for key in ("start", "first10", "last10", "first20", "last20"):
        assert _close(getattr(tool, key), expert[key]), (key, getattr(tool, key), expert[key])
    for key in ("level", "level_vs_start"):
        if tool.__dict__[key] is not None and expert.get(key) is not None:
            assert _close(tool.__dict__[key], expert[key]), (key, tool.__dict__[key], expert[key])
    accepted = [expert["trend"], *(expert.get("trend_also_accepted") or [])]
    assert expert["trend"] == "ambiguous" or tool.trend in accepted, (tool.trend, accepted)


def _collapsed(expert: dict) -> bool:
    top = max(expert["start"], expert["first10"])
    return top > 0 and 0 <= expert["last10"] < COLLAPSED_SHARE * top and expert["points"] >= 3


@pytest.mark.parametrize("name", [x["name"] for x in BANK_LOGS])
def test_no_signal_reads_steady_below_a_quarter_of_its_start(name, aliases):
    log, _, derived = _read(name, aliases)
    s, sources = derived.signals, derived.signal_sources
    checked = {
        "entropy": ("entropy_trend", "stable"),
        "reward": ("proxy_reward_trend", "flat"),
        "heldout": ("heldout_score_trend", "flat"),
    }
    for quantity, (signal, steady) in checked.items():
        expert = log["quantities"].get(quantity)
        if expert is None or signal not in s or sources[signal].metric != expert["metric"]:
            continue
        if _collapsed(expert):
            assert s[signal] != steady, (quantity, s[signal], sources[signal].detail)
    length = log["quantities"].get("length")
    if (
        length is not None
        and "length_growth" in s
        and sources["length_growth"].metric == length["metric"]
    ):
        if (
            math.ceil(0.1 * length["points"]) >= 3
        ):  # the tool's last level is then the same last tenth
            assert _close(s["length_growth"], length["level_vs_start"], 0.03), (
                s["length_growth"],
                length,
            )
        if _collapsed(length):
            assert s["length_growth"] <= COLLAPSED_SHARE * 1.05


def _steps(text: str) -> set[int] | None:
    """'1-39' or '110, 210, 260' as steps; None for a
    list the reading cut short ('... (25 steps)').
    """
    if "..." in text:
        return None
    out: set[int] = set()
    for part in re.split(r",\s*", text.strip()):
        a, _, b = part.partition("-")
        out |= set(range(int(a), int(b or a) + 1))
    return out


@pytest.mark.parametrize("name", [x["name"] for x in BANK_LOGS])
def test_faults(name, aliases):
    """The faults the readings list: NaN/inf and exact zeros (a collapse or a blow-up is held to
    the readings' trends by the test below)."""
    log, run, derived = _read(name, aliases)
    faults = [f for f in derived.faults if not isinstance(f, TailShift)]
    expert = log["faults"]
    if expert == "none":
        assert faults == [], [f.detail for f in faults]
        return
    kinds = {
        "grad_norm": ("zero_gradient", "constant_gradient"),
        "loss": ("zero_loss",),
        "entropy": ("zero_entropy",),
    }
    for quantity, fact in expert.items():
        mine = [f for f in faults if f.metric == fact["metric"]]
        if "nan_steps" in fact:
            assert any(f.kind == "nan" for f in mine), (quantity, fact)
            continue
        if fact.get("exactly_zero_share") == 1.0:
            if quantity == "loss" and not any(f.kind == "zero_loss" for f in mine):
                # A loss of exactly 0 while the gradient norm
                # moves is GRPO's surrogate with no KL term:
                # learning goes on, so the tool does not call it a fault.  Hold it to that reason.
                grad = derived.levels.get("grad_norm")
                assert grad is not None and not any(f.kind in kinds["grad_norm"] for f in faults), (
                    fact
                )
                continue
            assert any(f.kind in kinds.get(quantity, ()) and f.throughout for f in mine), (
                quantity,
                fact,
                mine,
            )
        else:
            zero = _steps(str(fact.get("exactly_zero_steps", "")))
            for f in mine:  # a part-way stretch the tool names must be where the zeros are
                assert not f.throughout, (quantity, f.detail)
                if zero is not None:
                    assert set(f.steps) <= zero, (quantity, f.steps, sorted(zero))
    for f in faults:
        assert any(fact["metric"] == f.metric for fact in expert.values()), (
            f"a fault the reading has not: {f.detail}"
        )


#: Which reading each sharp change is read against, and the trends it must agree with.
SHIFT_READING = {
    "reward_collapse": ("reward", ("falling", "collapsed")),
    "length_collapse": ("length", ("falling", "collapsed")),
    "entropy_collapse": ("entropy", ("falling", "collapsed")),
    "length_explosion": ("length", ("rising",)),
    "entropy_blowup": ("entropy", ("rising",)),
    "grad_norm_blowup": ("grad_norm", ("rising",)),
}
#: The faults the readings' collapses must be named by, with where their expert summaries say
#: they began: verl-agent-opd-262, "degenerates within 12 steps" (score to the floor -1,
#: responses ~1,760 tokens -> 1, entropy 0.21 -> 0.0002); verl-agent-opd-60, answers ~970 -> ~9
#: tokens, "collapse at step ~37", gradient norm up 10x.  Both were read as "optimization binds"
#: with no fault named.  opd-60's length collapse itself is not named yet (its fall from 650 to 9
#: tokens fills the 5-point window the scan compares; docs/measurements.md): its fault first in
#: the card is the gradient norm's blow-up that came with it.
COLLAPSES = {
    "verl-agent-opd-60": ({"grad_norm_blowup"}, 33, 40),
    "verl-agent-opd-262": ({"reward_collapse", "length_collapse", "entropy_collapse"}, 2, 12),
}


@pytest.mark.parametrize("name", [x["name"] for x in BANK_LOGS])
def test_collapses_and_blowups_agree_with_the_readings(name, aliases, core):
    log, run, derived = _read(name, aliases)
    shifts = [f for f in derived.faults if isinstance(f, TailShift)]
    for f in shifts:
        quantity, trends = SHIFT_READING[f.kind]
        reading = log["quantities"].get(quantity)
        assert reading is not None and reading["trend"] in trends, (f.detail, reading)
    kinds, first, last = COLLAPSES.get(name, (set(), 0, 0))
    named = {f.kind: f for f in shifts if f.kind in kinds}
    assert set(named) == kinds, [f.detail for f in derived.faults]
    for f in named.values():
        assert first <= f.first_step <= last, f.detail
    if kinds:
        opening = verdicts.opening(verdict_for(core.engine, derived))[0]
        assert opening.startswith("Fault: the"), opening
        assert any(f"from step {f.first_step}" in opening for f in named.values()), opening
