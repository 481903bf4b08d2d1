"""A scheduled watch of a tracker that cannot be read waits longer and longer between reads, and
that wait is kept in the state store: a restarted process (or another replica) goes on waiting.

A real ``mlflow server`` on 127.0.0.1 is stopped (connection refused) and started again on the
same port and store; the real MLflow client logs the run.  The clock is the watch service's, moved
slot by slot as the scheduler would fire them; what counts is which slots read the tracker.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from rlmap_bot.core import Core
from rlmap_bot.runs.sources.access import workspace_access_for
from rlmap_bot.state.store import StateStore
from rlmap_bot.watch import backoff
from rlmap_bot.watch.model import Watch
from rlmap_bot.watch.schedule import slot_key
from rlmap_bot.watch.service import WatchService
from rlmap_bot.wording.posts import alert_title
from support import KNOWLEDGE, python_says
from support.mlflowserver import MlflowServer
from support.poster import Recorder

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
EVERY = dt.timedelta(minutes=5)

LOG_RUN = """
    import os, mlflow
    mlflow.set_experiment("grpo")
    with mlflow.start_run(run_name="r1") as run:
        for s in range(40):
            mlflow.log_metric("critic/score/mean", 0.5 + 0.001 * s, step=s)
            mlflow.log_metric("actor/grad_norm", 1.0, step=s)
        print("OUT=" + run.info.run_id)
"""
MORE = """
    import os, mlflow
    client = mlflow.MlflowClient()
    for s in range(40, 45):
        client.log_metric(os.environ["RUN"], "critic/score/mean", 0.5 + 0.001 * s, step=s)
    print("OUT=ok")
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip("mlflow", reason="the mlflow test extra is not installed")
    srv = MlflowServer(tmp_path_factory.mktemp("mlflow-server")).start()
    yield srv
    srv.stop()


def _replica(built_db, state: Path, clock: list[dt.datetime]) -> WatchService:
    """A process of the bot: its own Core and connection to the shared state store."""
    core = Core(KNOWLEDGE, built_db, state_url=state)
    settings = core.settings.model_copy(update={"rlmap_mlflow_hosts": "127.0.0.1"})
    return WatchService(
        core,
        access=workspace_access_for(settings, core.state),
        clock=lambda: clock[0],
        settings=settings,
    )


def test_a_tracker_down_is_read_at_growing_gaps_across_a_restart_and_said_once_each_way(
    server, built_db, tmp_path, monkeypatch
):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server.url)
    run_id = python_says(LOG_RUN, {"MLFLOW_TRACKING_URI": server.url})
    state = tmp_path / "state.db"
    clock = [T0]
    service = _replica(built_db, state, clock)
    watch = service.repo.save(
        Watch(
            team="T1",
            channel="C1",
            path=f"mlflow:{run_id}",
            interval_minutes=5,
            created_at=T0,
            updated_at=T0,
        )
    )
    poster = Recorder()
    statuses: dict[int, str] = {}

    def slot(k: int) -> str:
        clock[0] = T0 + k * EVERY
        result = service.run(watch.id, slot_key(T0 + k * EVERY), poster)
        assert result is not None
        statuses[k] = result.status
        return result.status

    assert slot(1) == "checked"
    server.stop()
    for k in range(2, 11):
        slot(k)
    # A restart: a new process over the same state store waits as the old one did.
    service.core.state.close()
    service = _replica(built_db, state, clock)
    for k in range(11, 36):
        slot(k)
    read = [k for k in range(2, 36) if statuses[k] != "waiting"]
    assert all(statuses[k] == "problem" for k in read), statuses
    # The first failed read waits 2 intervals, then 4, then 8 (the cap), and 8 from then on.
    assert read == [2, 4, 8, 16, 24, 32], statuses
    tracking, _, _ = service.repo.load_state(watch.id)
    assert tracking.checks == 1 + len(read), "a slot that waits reads nothing"

    # A check someone asks for reads at once, whatever the wait.
    clock[0] = T0 + 33 * EVERY
    assert service.run(watch.id, "now:asked", poster).status == "problem"

    server.start()
    python_says(MORE, {"MLFLOW_TRACKING_URI": server.url, "RUN": run_id})
    for k in range(36, 44):
        slot(k)
    # The asked check failed too and started the wait again from 33: the next read is at 41.
    assert [k for k in range(36, 44) if statuses[k] != "waiting"] == [41, 42, 43]
    assert statuses[41] == "checked" and statuses[42] == statuses[43] == "unchanged"
    said = [(a.kind, alert_title(a)) for a in poster.posts if "watch:unreadable" in a.conditions]
    assert said == [("alert", "Cannot read the run now"), ("resolved", "Reading the run again")]
    assert all("Traceback" not in a.model_dump_json() for a in poster.posts)
    assert service.repo.get(watch.id).status == "active", "the watch was never lost"
    assert service.repo.backoff(watch.id) is None, "read again: no more waiting"
    service.core.state.close()


def test_the_wait_never_falls_below_the_interval_nor_passes_an_hour():
    assert backoff.retry_delay(dt.timedelta(days=1), 3) == dt.timedelta(days=1)
    assert backoff.retry_delay(dt.timedelta(minutes=15), 5) == dt.timedelta(hours=1)
    assert backoff.retry_delay(dt.timedelta(minutes=5), 1) == dt.timedelta(minutes=10)
    assert backoff.retry_delay(dt.timedelta(minutes=5), 0) == dt.timedelta(minutes=5)


def test_the_wait_is_one_row_every_replica_reads_and_a_read_clears(state_url):
    a, b = StateStore(state_url), StateStore(state_url)
    watch = a.watches.save(Watch(team="T1", channel="C1", path="mlflow:abc"))

    def delay(n: int) -> dt.timedelta:
        return backoff.retry_delay(EVERY, n)

    assert a.watches.failed_read(watch.id, "T1", T0, delay) == (1, T0 + 2 * EVERY)
    assert b.watches.failed_read(watch.id, "T1", T0 + 2 * EVERY, delay) == (2, T0 + 6 * EVERY)
    assert a.watches.backoff(watch.id) == (2, T0 + 6 * EVERY)
    b.watches.read_again(watch.id)
    assert a.watches.backoff(watch.id) is None
    a.watches.failed_read(watch.id, "T1", T0, delay)
    assert b.watches.delete(watch.id) and a.watches.backoff(watch.id) is None
    a.close()
    b.close()
