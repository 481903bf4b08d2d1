"""A steady long run in neutral names, and a watch checking it as it grows (the real
WatchService over the core's state store, a recorder in Slack's place): shared by the tests of
sharp changes and faults."""

from __future__ import annotations

import datetime as dt

import numpy as np

from support import runlogs as rl

STEPS = 1300


def steady_run(seed: int = 1, steps: int = STEPS) -> list[rl.Record]:
    """A healthy long run: reward steady near 0.7, every curve with step-to-step noise."""
    rng = np.random.default_rng(seed)
    records: list[rl.Record] = []
    for step in range(1, steps + 1):
        records.append(
            (
                step,
                {
                    "reward": 0.7 + rng.normal(0, 0.03),
                    "entropy": 0.45 + rng.normal(0, 0.01),
                    "length": 520 + rng.normal(0, 12),
                    "truncation": 0.01,
                    "gen_time": 30 + rng.normal(0, 1),
                    "step_time": 100 + rng.normal(0, 3),
                    "grad_norm": float(0.4 * np.exp(rng.normal(0, 0.15))),
                    "clip": 0.01,
                    "pg_loss": rng.normal(0, 0.02),
                    "kl": 0.003,
                    "kl_coef": 0.001,
                    "lr": 1e-6,
                },
            )
        )
    return records


class _Recorder:
    """The front-end side of a watch (what Slack implements): keeps what would be posted."""

    def __init__(self) -> None:
        self.posts: list = []

    def post_alert(self, channel, alert) -> str:
        self.posts.append(alert)
        return f"{len(self.posts)}.0"

    def attach_chart(self, channel, ts, chart, alert) -> None:
        assert chart.exists()

    def find_alert(self, channel, alert_id, since):
        return None


def watch_growing(core, tmp_path, records, cuts) -> list:
    from rlmap_bot.watch.model import Watch
    from support.watching import Clock, watch_service

    t0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
    clock = Clock(t0)
    service = watch_service(core, tmp_path, clock)
    log = tmp_path / "grow.log"
    watch = service.repo.save(
        Watch(team="T", channel="C", path=str(log.resolve()), created_at=t0, updated_at=t0)
    )
    poster = _Recorder()
    for n, cut in enumerate(cuts):
        rl.write_verl_console(log, [r for r in records if r[0] <= cut])
        clock.advance(15)
        result = service.run(watch.id, f"at:{n}", poster)
        assert result is not None and result.status == "checked", (cut, result)
    return poster.posts
