"""A watch says when to stop, once (issue 37, item 3): "reached 95% of its forecast ceiling: more
steps buy less than X" on a run that has levelled off, and "forecast ceiling fell sharply" on a
run bending down; nothing of the kind on a run still rising.

Each run is a real JSONL log that grows between checks as a trainer writes it, and every check
goes through the real watch service (state store, alert ledger), with a recording front-end in
place of Slack. What each run should get was written here before the watch was run on it.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from rlmap_bot.results.watch import Alert, StopAdvised
from rlmap_bot.watch.model import Watch
from rlmap_bot.watch.service import WatchService
from rlmap_bot.wording.posts import alert_changes, alert_opening, alert_title
from support.poster import Recorder
from support.scalingcurves import Truth
from support.watching import Clock, watch_service

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


@pytest.fixture
def service(core, tmp_path) -> WatchService:
    return watch_service(core, tmp_path, Clock(T0))


def _rows(x, y) -> str:
    """JSONL rows of the reward, with a loss and a gradient norm that move as a learning run's
    do (a constant one is the not-learning fault)."""
    rng = np.random.default_rng(int(x[0]) if len(x) else 0)
    loss, grad = 0.1 + rng.normal(0, 0.01, len(x)), 1.0 + rng.normal(0, 0.15, len(x))
    return "".join(
        json.dumps({"step": int(s), "reward": float(v), "loss": float(a), "grad_norm": float(g)})
        + "\n"
        for s, v, a, g in zip(x, y, loss, grad, strict=True)
    )


def watch_curve(
    service: WatchService,
    path: Path,
    y: np.ndarray,
    cuts: list[int],
    withheld: list | None = None,
    every: int = 1,
) -> list[Alert]:
    """Write the reward curve ``y`` (one point every ``every`` steps from step 1) up to each cut
    (a count of points) in turn, appending as a trainer does, and check the watch after each; the
    posts (``withheld``: a quiet watch, and what it withheld is added there)."""
    x = 1 + every * np.arange(y.size)
    watch = service.repo.save(
        Watch(
            team="T",
            channel="C",
            path=str(path.resolve()),
            created_at=T0,
            updated_at=T0,
            quiet=withheld is not None,
        )
    )
    poster = Recorder()
    written = 0
    for n, cut in enumerate(cuts):
        part = slice(written, cut)
        with open(path, "a" if n else "w", encoding="utf-8") as f:
            f.write(_rows(x[part], y[part]))
        written = cut
        service.clock.now += dt.timedelta(minutes=15)
        result = service.run(watch.id, f"at:{n}", poster)
        assert result is not None and result.status == "checked", (cut, result)
        if withheld is not None:
            withheld += result.withheld
    return poster.posts


def stops(posts: list[Alert]) -> list[StopAdvised]:
    return [c for a in posts for c in a.changes if isinstance(c, StopAdvised)]


def noisy(y: np.ndarray, noise: float, seed: int) -> np.ndarray:
    return y + np.random.default_rng(seed).normal(0.0, noise, y.size)


CUTS = [150, 250, 350, 450, 550, 650, 800]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_run_that_levelled_off_is_told_once_that_more_steps_buy_little(service, tmp_path, seed):
    # Expected before running: a sigmoid with its midpoint at step 50 is at 96% of its gain by
    # step 450, so from there one stop:reached, said once, with its ceiling near 0.75.
    y = noisy(Truth(0.75, 1.5, 50)(np.arange(1, 801)), 0.015, seed)
    posts = watch_curve(service, tmp_path / "run.jsonl", y, CUTS)
    told = stops(posts)
    assert [s.reason for s in told] == ["reached"], [alert_title(a) for a in posts]
    [advice] = told
    assert advice.ceiling.low < 0.75 + 0.02 and advice.ceiling.high > 0.75 - 0.02
    assert advice.more is not None and 0 <= advice.more < 0.1  # a sixth of the 0.65 gained
    alert = next(a for a in posts if a.conditions == ["stop:reached"])
    first, second, step = alert_opening(alert)
    assert first.startswith("Reached 95% of its forecast ceiling: more steps buy less than +0.0")
    assert "80% sure the ceiling lies in" in second
    assert step.startswith("Do this next: stop it here")
    assert alert_changes(alert) and alert.evidence == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_run_still_rising_gets_no_stop_alert(service, tmp_path, seed):
    # Expected before running: a power law still climbing at the last check (x^0.9 over a run of
    # 1,600 steps, cut at 800): no stop of either kind.
    x = np.arange(1, 801)
    y = noisy(0.1 + 0.7 * (x / 1600) ** 0.9, 0.015, seed)
    posts = watch_curve(service, tmp_path / "run.jsonl", y, CUTS)
    assert stops(posts) == [], [alert_title(a) for a in posts]


@pytest.mark.parametrize(
    "shape",
    [
        "a score logged every 10 steps, creeping up from 0.45",
        "a reward logged every 20 steps, climbing in a straight line",
        "a reward logged every 5 steps, climbing as a square root",
    ],
)
def test_a_slow_climb_logged_sparsely_is_not_told_to_stop(service, tmp_path, shape):
    # Expected before running: a run still climbing at its last check, logged so sparsely that at
    # the early checks its last half holds ten or so points, too few to show its slope against
    # its noise. That is no evidence it stopped, so no stop of either kind is said. (The noise
    # seeds are ones the rule before read as flat at two checks in a row and told to stop; over
    # 20 seeds a check's advice alone said "reached" of 9, 12 and 8 of these shapes before, of
    # 0, 0 and 1 now.)
    if shape.startswith("a score"):
        every, n = 10, 40
        s = 1 + every * np.arange(n)
        y = noisy(0.45 + 0.15 * (s / 400) ** 0.9, 0.015, 14)
        cuts = list(range(16, 41, 2))
    elif shape.startswith("a reward logged every 20"):
        every, n = 20, 30
        s = 1 + every * np.arange(n)
        y = noisy(0.2 + 0.15 * s / 600, 0.02, 7)
        cuts = list(range(15, 31))
    else:
        every, n = 5, 80
        s = 1 + every * np.arange(n)
        y = noisy(0.3 + 0.25 * np.sqrt(s / 400), 0.03, 9)
        cuts = [20, 26, 32, 40, 50, 60, 80]
    posts = watch_curve(service, tmp_path / "run.jsonl", y, cuts, every=every)
    assert stops(posts) == [], [alert_title(a) for a in posts]


def test_a_run_bending_down_is_told_once_that_its_ceiling_fell(service, tmp_path):
    # Expected before running: a run that levels off near 0.7 by step 350 and then loses most
    # of its gain over steps 450-650: one stop:falling once the fall shows, never a "reached"
    # after it.
    x = np.arange(1, 801)
    fall = np.clip((x - 450) / 200, 0, 1) ** 2
    y = noisy(Truth(0.7, 2.0, 120)(x) - 0.45 * fall, 0.015, 4)
    posts = watch_curve(service, tmp_path / "run.jsonl", y, [200, 300, 400, 500, 550, 600, 650])
    told = stops(posts)
    assert "falling" in [s.reason for s in told], [alert_title(a) for a in posts]
    assert [s.reason for s in told].count("falling") == 1
    falling = next(s for s in told if s.reason == "falling")
    assert falling.earlier is not None and falling.earlier.value > falling.ceiling.high
    alert = next(a for a in posts if "stop:falling" in a.conditions)
    said = [alert_title(alert), *alert_opening(alert), *alert_changes(alert)]
    assert "Forecast ceiling fell sharply" in alert_title(alert), said
    assert any("forecast ceiling of the" in line and "down from" in line for line in said), said


@pytest.mark.parametrize(
    "shape",
    ["levels near 0.6, loses half of it in a straight line", "levels near 0.8, then sags slowly"],
)
def test_a_run_already_below_its_earlier_ceiling_is_told_though_its_forecast_is_wide(
    service, tmp_path, shape
):
    # Expected before running: a run that levels off and then loses a large share of its gain,
    # checked as it falls. Once its recent level is below the earlier ceiling's interval and the
    # forecast expects it lower still, it is told once that its ceiling fell, however wide the
    # far forecast of a curve that is turning (the shapes disagree on where a fall ends); never
    # "reached" after the fall.
    x = np.arange(1, 801)
    if shape.startswith("levels near 0.6"):
        base = Truth(0.6, 2.0, 80)(x)
        y = noisy(base - 0.25 * np.clip((x - 400) / 150, 0, 1), 0.015, 5)
        cuts, onset = [200, 300, 400, 450, 500, 550], 400
    else:
        base = Truth(0.8, 2.0, 100)(x)
        y = noisy(base - 0.35 * np.clip((x - 450) / 250, 0, 1) ** 1.5, 0.015, 6)
        cuts, onset = [250, 350, 450, 520, 590, 660, 700], 450
    posts = watch_curve(service, tmp_path / "run.jsonl", y, cuts)
    told = stops(posts)
    reasons = [s.reason for s in told]
    assert reasons.count("falling") == 1, [alert_title(a) for a in posts]
    falling = next(s for s in told if s.reason == "falling")
    assert falling.step is not None and falling.step > onset
    assert "reached" not in reasons[reasons.index("falling") :]


def test_a_quiet_watch_withholds_the_advice(service, tmp_path):
    y = noisy(Truth(0.75, 1.5, 50)(np.arange(1, 801)), 0.015, 1)
    withheld: list[str] = []
    posts = watch_curve(service, tmp_path / "quiet.jsonl", y, CUTS, withheld=withheld)
    assert "stop:reached" in withheld
    assert stops(posts) == []


#: Real logs of the bank (tests/support/gallery.real_logs), watched as they grew, line by line.
#: Expected before running: the two still climbing when they end get no stop of either kind
#: (tinker-rlvr-qwen30b-instruct-51, a reward still rising at its last step;
#: grpo-custom-countdown-500, a slow, noisy, almost linear climb); easyr1-geo3k-161, whose reward
#: rises fast and levels off, may be told once that it reached its ceiling, never that it fell.
REAL = {
    "tinker-rlvr-qwen30b-instruct-51": set(),
    "grpo-custom-countdown-500": set(),
    "easyr1-geo3k-161": {"reached"},
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_logs_get_no_false_stop(service, tmp_path, name):
    from support.gallery import real_logs

    logs = real_logs()
    if logs is None:
        pytest.skip("the real-log bank is not here")
    [source] = [p for p in (logs / name).iterdir() if p.suffix == ".jsonl"]
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / source.name
    watch = service.repo.save(
        Watch(team="T", channel="C", path=str(path.resolve()), created_at=T0, updated_at=T0)
    )
    poster, written = Recorder(), 0
    for share in (0.4, 0.55, 0.7, 0.85, 1.0):
        cut = round(len(lines) * share)
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(lines[written:cut])
        written = cut
        service.clock.now += dt.timedelta(minutes=15)
        result = service.run(watch.id, f"at:{share}", poster)
        assert result is not None and result.status == "checked", (share, result)
    told = {s.reason for s in stops(poster.posts)}
    assert told <= REAL[name], [alert_title(a) for a in poster.posts]
    assert len(stops(poster.posts)) == len(told)  # each said once at most
