"""mlflow:RUN_ID and trackio:PROJECT/RUN_NAME read from what the real tools write.

A real ``mlflow server`` (SQLite backend) on 127.0.0.1, started once for the session, and MLflow's
own client writing runs into it and into a ``sqlite:///`` store; the real trackio SDK writing its
project database, including from a process still logging. Skipped, with the reason, when the test
extras (mlflow, trackio) are not installed.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.sources import list_runs, open_source, parse_source
from rlmap_bot.runs.sources.access import Access
from support import python_says
from support.mlflowserver import MlflowServer, free_port
from support.shared import once_per_run

ANY = ("*",)
KEEP_ALL = lambda name: True  # noqa: E731 - every metric kept as a series


LOG_MLFLOW = """
    import sys, mlflow
    mlflow.set_tracking_uri(sys.argv[1] if len(sys.argv) > 1 else None)
    mlflow.set_experiment("grpo")
    with mlflow.start_run(run_name="r1") as run:
        for s in range(6):
            mlflow.log_metric("critic/score/mean", 0.1 * s, step=s)
        mlflow.log_metric("actor/grad_norm", float("nan"), step=3)
        mlflow.log_metric("actor/grad_norm", float("inf"), step=4)
        mlflow.log_metric("actor/grad_norm", 1.5, step=5)
        # step 5 logged again: the later value counts
        mlflow.log_metric("critic/score/mean", 9.0, step=5)
        run_id = run.info.run_id
    print("OUT=" + run_id)
"""

MORE_MLFLOW = """
    import os, mlflow
    client = mlflow.MlflowClient()
    for s in range(6, 9):
        client.log_metric(os.environ["RUN"], "critic/score/mean", 0.1 * s, step=s)
    print("OUT=ok")
"""


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory):
    """A real ``mlflow server`` with a SQLite backend (support/mlflowserver.py); its URL."""
    pytest.importorskip("mlflow", reason="the mlflow test extra is not installed")
    server = MlflowServer(tmp_path_factory.mktemp("mlflow-server")).start()
    yield server.url
    server.stop()


def _server_access(url: str, **credentials: str) -> Access:
    return Access(
        mlflow_hosts=("127.0.0.1",), environ={"MLFLOW_TRACKING_URI": url}, credentials=credentials
    )


LONG_RUN = """
    import mlflow
    from mlflow.entities import Metric
    client = mlflow.MlflowClient()
    exp = client.create_experiment("long")
    run = client.create_run(exp).info.run_id
    for start in range(0, 6000, 1000):
        batch = [Metric("loss", s / 10, 0, s) for s in range(start, start + 1000)]
        client.log_batch(run, metrics=batch)
    print("OUT=" + run)
"""


def test_mlflow_server_reads_every_step_then_only_new_ones_unsampled_and_unknown_runs_in_one_line(
    mlflow_server,
):
    """One test for everything the server is asked:
    xdist spreads tests over workers, and each worker
    would start its own server (tens of seconds each)."""
    run_id = python_says(LOG_MLFLOW, {"MLFLOW_TRACKING_URI": mlflow_server})
    source = open_source(parse_source(f"mlflow:{run_id}"), _server_access(mlflow_server))
    run, cursor = source.read_new(None, KEEP_ALL)
    score = run.series["critic/score/mean"]
    assert (
        score.steps.tolist() == [0, 1, 2, 3, 4, 5] and score.values[5] == 9.0
    )  # step 5 again: the later value
    grad = run.series["actor/grad_norm"]
    assert grad.steps.tolist() == [3, 4, 5]
    assert math.isnan(grad.values[0]) and grad.values[1] == math.inf and grad.values[2] == 1.5
    assert run.format == "mlflow-server" and run.run_id == run_id

    quiet, cursor = source.read_new(cursor, KEEP_ALL)
    assert quiet.series == {}
    python_says(MORE_MLFLOW, {"MLFLOW_TRACKING_URI": mlflow_server, "RUN": run_id})
    new, _ = source.read_new(cursor, KEEP_ALL)
    assert new.series["critic/score/mean"].steps.tolist() == [6, 7, 8]
    assert "actor/grad_norm" not in new.series

    # 6,000 steps of one metric: more than one window of 2,500, none of it sampled by the server.
    long_id = python_says(LONG_RUN, {"MLFLOW_TRACKING_URI": mlflow_server})
    long_run = open_source(
        parse_source(f"mlflow:{long_id}"), _server_access(mlflow_server)
    ).read_all(KEEP_ALL)
    assert long_run.series["loss"].steps.tolist() == list(range(6000))

    missing = open_source(parse_source("mlflow:0123456789abcdef"), _server_access(mlflow_server))
    with pytest.raises(RunReadError, match="not found") as err:
        missing.read_all(KEEP_ALL)
    assert "\n" not in str(err.value)

    # An experiment's runs, listed for compare: by name (runs/search, newest first), by id (the
    # Default experiment, 0, has none), and an unknown name in one line.
    access = _server_access(mlflow_server)
    grpo = list_runs(parse_source("mlflow:experiment:grpo"), access)
    assert [(r.source, r.name, r.state) for r in grpo.runs] == [
        (f"mlflow:{run_id}", "r1", "finished")
    ]
    assert grpo.total == 1 and grpo.what == "the MLflow experiment grpo"
    long = list_runs(parse_source("mlflow:experiment:long"), access)
    assert [(r.source, r.state) for r in long.runs] == [(f"mlflow:{long_id}", "running")]
    assert list_runs(parse_source("mlflow:experiment:0"), access).total == 0
    with pytest.raises(RunReadError, match="has no experiment 'nosuch'") as err:
        list_runs(parse_source("mlflow:experiment:nosuch"), access)
    assert "\n" not in str(err.value)


def test_mlflow_server_down_is_one_retryable_line_without_the_token():
    token = "mlflow-token-do-not-print-1234"
    url = f"http://127.0.0.1:{free_port()}"
    source = open_source(
        parse_source("mlflow:abc"), _server_access(url, MLFLOW_TRACKING_TOKEN=token)
    )
    with pytest.raises(RunReadError, match="is not answering.*retried") as err:
        source.read_all(KEEP_ALL)
    assert token not in str(err.value) and "\n" not in str(err.value)


def test_mlflow_host_outside_the_allow_list_is_refused():
    access = Access(
        mlflow_hosts=("mlflow.internal",),
        environ={"MLFLOW_TRACKING_URI": "http://evil.example:5000"},
    )
    with pytest.raises(RunReadError, match="RLMAP_MLFLOW_HOSTS"):
        open_source(parse_source("mlflow:abc"), access)


def test_mlflow_without_tracking_uri_says_which_variable_to_set():
    with pytest.raises(RunReadError, match="MLFLOW_TRACKING_URI"):
        open_source(parse_source("mlflow:abc"), Access(mlflow_hosts=ANY))


@pytest.fixture(scope="session")
def sqlite_store(tmp_path_factory) -> tuple[Path, str]:
    """``(mlflow.db, run id)``: a run logged by MLflow's client into a ``sqlite:///`` store, once
    for the whole test run (support/shared.py); a test that logs more into it works on a copy."""
    pytest.importorskip("mlflow", reason="the mlflow test extra is not installed")
    folder, run_id = once_per_run(
        tmp_path_factory,
        "mlflow-db",
        lambda folder: python_says(
            LOG_MLFLOW, {"MLFLOW_TRACKING_URI": f"sqlite:///{folder}/mlflow.db"}
        ),
    )
    return folder / "mlflow.db", run_id


def test_mlflow_sqlite_store_reads_nan_inf_and_the_latest_repeat(sqlite_store):
    db, run_id = sqlite_store
    access = Access(environ={"MLFLOW_TRACKING_URI": f"sqlite:///{db}"})
    run = open_source(parse_source(f"mlflow:{run_id}"), access).read_all(KEEP_ALL)
    score = run.series["critic/score/mean"]
    assert (
        score.values[score.steps.tolist().index(5)] == 9.0
    )  # step 5 logged twice: the later value
    grad = run.series["actor/grad_norm"].values
    assert math.isnan(grad[0]) and grad[1] == math.inf
    assert run.format == "mlflow-db"


def test_mlflow_sqlite_read_new_reads_rows_past_the_cursor_only(sqlite_store, tmp_path):
    db, run_id = tmp_path / "mlflow.db", sqlite_store[1]
    shutil.copy(sqlite_store[0], db)
    source = open_source(
        parse_source(f"mlflow:{run_id}"), Access(environ={"MLFLOW_TRACKING_URI": f"sqlite:///{db}"})
    )
    first, cursor = source.read_new(None, KEEP_ALL)
    assert first.records == 10
    python_says(MORE_MLFLOW, {"MLFLOW_TRACKING_URI": f"sqlite:///{db}", "RUN": run_id})
    new, cursor = source.read_new(cursor, KEEP_ALL)
    assert new.records == 3 and new.series["critic/score/mean"].steps.tolist() == [6, 7, 8]
    again, _ = source.read_new(cursor, KEEP_ALL)
    assert again.records == 0


def test_mlflow_sqlite_read_is_an_index_range_scan(sqlite_store):
    import sqlite3

    db, _ = sqlite_store
    conn = sqlite3.connect(db)
    plan = " ".join(
        str(r[-1])
        for r in conn.execute(
            "explain query plan select step, value, is_nan from metrics where run_uuid = ? and key "
            "= ? and step > ? order by step, timestamp",
            ("x", "k", 5),
        )
    )
    conn.close()
    assert "index_metrics_run_uuid_key_step (run_uuid=? AND key=? AND step>?)" in plan


def test_mlflow_sqlite_store_outside_run_roots_is_refused(sqlite_store, tmp_path):
    db, run_id = sqlite_store
    access = Access(run_roots=(tmp_path,), environ={"MLFLOW_TRACKING_URI": f"sqlite:///{db}"})
    with pytest.raises(RunReadError, match="RLMAP_RUN_ROOTS"):
        open_source(parse_source(f"mlflow:{run_id}"), access)


# -- Trackio -------------------------------------------------------------------------------------

TRACKIO_WRITER = """
    import sys, trackio
    trackio.init(project="grpo-demo", name="run-a")
    for s in range(5):
        norm = float("nan") if s == 2 else 1.0
        trackio.log({"train/reward": 0.1 * s, "train/grad_norm": norm}, step=s)
    trackio.log({"train/reward": 9.0}, step=3)  # step 3 again: the later value counts
    print("ready", flush=True)
    sys.stdin.readline()  # the test reads the store while this process is still logging
    for s in range(5, 8):
        trackio.log({"train/reward": 0.1 * s, "train/grad_norm": float("inf")}, step=s)
    trackio.finish()
    print("done", flush=True)
"""


@pytest.fixture
def trackio_dir(tmp_path) -> Path:
    pytest.importorskip("trackio", reason="the trackio test extra is not installed")
    return tmp_path / "trackio"


def _first_rows(source, steps: int):
    """trackio.log hands rows to a background thread that
    writes them about a second later: wait for them.
    """
    deadline = (
        time.monotonic() + 60
    )  # judgement: far past trackio's flush interval on a loaded machine
    while True:
        try:
            run, cursor = source.read_new(None, KEEP_ALL)
            if "train/reward" in run.series and len(run.series["train/reward"]) >= steps:
                return run, cursor
        except RunReadError:
            pass  # the project's database is not created yet
        assert time.monotonic() < deadline, "trackio wrote nothing within 60 s"
        time.sleep(0.2)


def test_trackio_run_read_while_logging_then_only_new_rows(trackio_dir):
    env = {**os.environ, "TRACKIO_DIR": str(trackio_dir), "HF_HUB_OFFLINE": "1"}
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(TRACKIO_WRITER)],
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert writer.stdout is not None and writer.stdin is not None
        while (line := writer.stdout.readline()) and line.strip() != "ready":
            pass
        source = open_source(
            parse_source("trackio:grpo-demo/run-a"),
            Access(environ={"TRACKIO_DIR": str(trackio_dir)}),
        )
        run, cursor = _first_rows(source, 5)
        reward = run.series["train/reward"]
        assert reward.steps.tolist() == [0, 1, 2, 3, 4] and reward.values[3] == 9.0
        assert math.isnan(run.series["train/grad_norm"].values[2])
        writer.stdin.write("go\n")
        writer.stdin.flush()
        while (line := writer.stdout.readline()) and line.strip() != "done":
            pass
        new, _ = source.read_new(cursor, KEEP_ALL)
        assert new.series["train/reward"].steps.tolist() == [5, 6, 7]
        assert new.series["train/grad_norm"].values.tolist() == [math.inf] * 3
    finally:
        writer.kill()
        writer.wait()


def test_trackio_unknown_project_and_run_are_one_line_each(trackio_dir):
    trackio_dir.mkdir()
    access = Access(environ={"TRACKIO_DIR": str(trackio_dir)})
    with pytest.raises(RunReadError, match="no Trackio project"):
        open_source(parse_source("trackio:nosuch/run"), access).read_all(KEEP_ALL)
    with pytest.raises(RunReadError, match="PROJECT/RUN_NAME"):
        open_source(parse_source("trackio:onlyproject"), access)


def test_reading_tracker_modules_imports_no_tracker_client():
    code = (
        "import sys\nimport rlmap_bot.runs.sources.mlflow, rlmap_bot.runs.sources.trackio, "
        "rlmap_bot.runs.sources.wandb_api\nimport rlmap_bot.runs.sources.access\nprint(*(m in "
        "sys.modules for m in ('mlflow', 'trackio', 'wandb')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False"] * 3
