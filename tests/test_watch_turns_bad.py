"""The watch speaks when a run turns bad, once, and never on a healthy run (issue 17).

Each bad run is a healthy start with a bad stretch appended, written to a real verl console log
that grows between checks as a trainer would write it; every check goes through the real watch
service (state store, alert ledger, hysteresis), with a recording front-end in place of Slack
(tests/test_slack_watch.py covers the Slack path). What each should alert was written down here
before the watch was run on it: the fault, or the stage or stages that start to bind.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from rlmap_bot.results.watch import Alert
from rlmap_bot.watch.model import Watch
from rlmap_bot.watch.service import WatchService
from rlmap_bot.wording.posts import alert_changes, alert_opening, alert_title
from support import runlogs as rl
from support.poster import Recorder
from support.watching import Clock, watch_service

HEALTHY_START = 300
BAD_STRETCH = 300
CHECKS = 4  # checks over the bad stretch, as it is written

#: name -> (the bad phase appended to a healthy start, the conditions its one alert must name).
#: A fault is ``fault:NAME``; a stage ``binds:STAGE``; two stages with strong evidence ``tie:A+B``.
GOES_BAD = {
    # Gao 2022: training reward up while held-out falls, answers growing: reward quality binds.
    "reward_hacking": ("hacking_long", {"binds:reward"}),
    # Cui 2025: entropy down to a few percent while reward and held-out stall: optimization.
    "entropy_collapse": ("entropy_collapse", {"binds:optimization"}),
    # NaN loss on every step: the fault (the verdict on it may come in the same alert).
    "nan_loss": ("nan", {"fault:nan"}),
    # Generation's share of the step climbs to 0.8 (OpenRLHF: ~80%): rollouts bind, on one
    # measurement, said with no percentage (the test below).
    "generation_bound": ("generation_bound", {"binds:rollouts"}),
    # The pool is solved: reward ~0.97, most groups
    # zero-variance, many passes (DAPO, ScaleRL): environments.
    "pool_saturated": ("saturation", {"binds:environments"}),
    # Length x4 with truncation rising and no gain (DAPO, Dr. GRPO): optimization.
    "length_explosion": ("length_explosion", {"binds:optimization"}),
    # The loss jumps to a new level and stays: the divergence fault.
    "loss_divergence": ("divergence", {"fault:divergence"}),
    # Training reward and held-out score fall together: the update is failing (optimization).
    "reward_collapse": ("reward_collapse", {"binds:optimization"}),
    # A solved pool and a collapsed entropy at once: two stages with strong evidence, said as a tie.
    "saturated_and_collapsed": ("saturated_collapse", {"tie:environments+optimization"}),
    # Many passes over a pool whose reward rises while
    # held-out stays flat (Cobbe 2018): environments.
    "memorising": ("memorising", {"binds:environments"}),
    # Gradient norm and loss exactly 0, reward flat: the not-learning fault, said before any stage.
    "not_learning": ("not_learning", {"fault:not_learning"}),
}

#: Runs whose collapse is also a fault (issue 36: an entropy collapse is named as a fault with
#: the step it began); the fault shows once the entropy is down to a quarter of its level, a
#: check after the stage verdict (which reads the falling trend) may already have been posted, so
#: the one alert naming the run may be followed by one alert naming the fault, and nothing else.
THEN_FAULT = {"entropy_collapse": "fault:shift", "saturated_and_collapsed": "fault:shift"}

# : Healthy runs: different seeds, lengths, evaluation
# cadences and noise, none of which should alert.
HEALTHY = {
    "seed1": dict(seed=1),
    "seed2": dict(seed=2),
    "seed3": dict(seed=3),
    "short": dict(seed=4, steps=160),
    "long": dict(seed=5, steps=1500),
    "sparse_evals": dict(seed=6, eval_every=25),
    "dense_evals": dict(seed=7, eval_every=5),
    "noisy": dict(seed=8, noise=2.5),
    "very_noisy": dict(seed=9, noise=4.0),
    "noisy_long": dict(seed=10, steps=1200, noise=3.0),
}
T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


@pytest.fixture
def service(core, tmp_path) -> WatchService:
    return watch_service(core, tmp_path, Clock(T0))


def watch_growing(service: WatchService, path: Path, records: list, cuts: list[int]) -> list[Alert]:
    """Write the log up to each cut in turn and check it after each; the alerts posted."""
    watch = service.repo.save(
        Watch(team="T", channel="C", path=str(path.resolve()), created_at=T0, updated_at=T0)
    )
    poster = Recorder()
    written = 0
    for n, cut in enumerate(cuts):
        part = (
            [r for r in records if written < r[0] <= cut]
            if n
            else [r for r in records if r[0] <= cut]
        )
        if n == 0:
            rl.write_verl_console(path, part)
        else:
            with open(path, "a", encoding="utf-8") as f:
                f.writelines(rl.verl_console_lines(part))
        written = cut
        service.clock.now += dt.timedelta(minutes=15)
        result = service.run(watch.id, f"at:{n}", poster)
        assert result is not None and result.status == "checked", (cut, result)
    return poster.posts


def _cuts(total: int, start: int) -> list[int]:
    step = (total - start) // CHECKS
    return [start, *[start + step * (i + 1) for i in range(CHECKS - 1)], total]


@pytest.mark.parametrize("name", sorted(GOES_BAD))
def test_a_run_that_goes_bad_gets_exactly_one_alert_naming_it(service, tmp_path, name):
    phase, expected = GOES_BAD[name]
    records = rl.named(rl.phased([("healthy", HEALTHY_START), (phase, BAD_STRETCH)]), "verl")
    posts = watch_growing(
        service,
        tmp_path / f"{name}.log",
        records,
        _cuts(HEALTHY_START + BAD_STRETCH, HEALTHY_START),
    )
    # A run that levels off is also told, once, that more steps buy little (issue 37 item 3,
    # tests/test_watch_stopping.py): advice on when to stop, counted apart from what went wrong.
    alerts = [
        a
        for a in posts
        if a.kind == "alert" and not all(c.startswith("stop:") for c in a.conditions)
    ]
    then = THEN_FAULT.get(name)
    if then is not None and len(alerts) == 2:
        assert alerts[1].conditions == [then], [(alert_title(a), a.conditions) for a in alerts]
        alerts = alerts[:1]
    elif then is not None:
        assert then in alerts[0].conditions, [(alert_title(a), a.conditions) for a in alerts]
    assert len(alerts) == 1, [(alert_title(a), a.conditions) for a in alerts]
    [alert] = alerts
    assert expected <= set(alert.conditions), (alert_title(alert), alert.conditions)
    assert alert_changes(alert) and alert_title(alert)


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_a_healthy_run_gets_no_alert(service, tmp_path, name):
    shape = dict(HEALTHY[name])
    steps = shape.pop("steps", 600)
    records = rl.named(rl.phased([("healthy", steps)], **shape), "verl")
    posts = watch_growing(service, tmp_path / f"{name}.log", records, _cuts(steps, steps // 3))
    assert [(a.kind, alert_title(a)) for a in posts] == []


def test_a_stage_on_one_measurement_is_posted_with_no_percentage(service, tmp_path):
    """The rollouts verdict of a run that becomes generation-bound rests on one measurement: no
    frequency was measured for such verdicts, so the post names the stage as a lead with no
    percentage (it said "0% sure" when the verdict first carried none)."""
    records = rl.named(
        rl.phased([("healthy", HEALTHY_START), ("generation_bound", BAD_STRETCH)]), "verl"
    )
    total = HEALTHY_START + BAD_STRETCH
    posts = watch_growing(service, tmp_path / "lead.log", records, _cuts(total, HEALTHY_START))
    [alert] = [a for a in posts if a.kind == "alert" and "binds:rollouts" in a.conditions]
    said = " ".join(alert_opening(alert) + alert_changes(alert) + [alert_title(alert)])
    assert alert.confidence is None and "may" in alert_title(alert)
    assert "no percentage" in said and "% sure" not in said, said


def test_a_lead_that_a_second_reading_makes_firm_is_announced_again_as_binding():
    """A watch posted "may have started to bind" on one measurement; when a later check's verdict
    names the same stage on two readings, with a percentage, the channel is told it binds (a new
    episode of the same condition, so the ledger posts it); a firm stage that stays firm, or a
    lead that stays a lead, is told nothing more."""
    from rlmap_bot.runs.growing.scan import FaultState
    from rlmap_bot.watch.conditions import evaluate

    def check(previous, episodes, lead):
        return evaluate(
            previous, episodes, "rollouts", FaultState(), set(), True, T0, 100, [], lead=lead
        )

    first = check({}, {}, lead=True)
    assert [(t.kind, t.condition.key) for t in first.transitions] == [("start", "binds:rollouts")]
    first.conditions["binds:rollouts"].announced = True
    still = check(first.conditions, first.episodes, lead=True)
    assert still.transitions == []
    firm = check(first.conditions, first.episodes, lead=False)
    assert [(t.kind, t.condition.key, t.condition.episode) for t in firm.transitions] == [
        ("start", "binds:rollouts", 2)
    ]
    firm.conditions["binds:rollouts"].announced = True
    assert check(firm.conditions, firm.episodes, lead=False).transitions == []
