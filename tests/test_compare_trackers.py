"""`compare` over a tracker's project, group or experiment (issue 37, item 4), and `forecast`'s
one-line refusal of one: from the terminal (click's runner, the person's own environment) and from
Slack (`/rlmap compare ...`, the real Bolt app, signed requests, the workspace's allow-lists and
sealed key).

Real parts: the real wandb client against the W&B stand-in (tests/support/wandb_standin.py, which
answers only the queries the client sends), MLflow's own client writing a ``sqlite:///`` store,
and the trackio SDK writing a project. The curves are ScaleRL sigmoids with known ceilings
(tests/support/scalingcurves.py), so the run with the higher ceiling is known before reading.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rlmap_bot.cli.main import cli
from rlmap_bot.crypto import TokenCipher, new_key
from rlmap_bot.state.store import StateStore
from support import KNOWLEDGE
from support.bot import start_bot
from support.scalingcurves import Truth, run
from support.shared import once_per_run
from support.slackio import slash, text_of
from support.standin import TEAM
from support.sweeps import mlflow_experiment, trackio_project
from support.wandb_standin import WandbStandIn

KEY = "wandbkey" + "fedcba9876543210" * 2  # 40 characters, like a W&B API key
STEPS = 200


def curve(ceiling: float, seed: int) -> list[tuple[int, float]]:
    x, y = run(Truth(ceiling, 1.5, 40), STEPS, noise=0.01, seed=seed)
    return [(int(s), round(float(v), 5)) for s, v in zip(x, y, strict=True)]


def invoke(built_db, *args: str):
    return CliRunner().invoke(cli, ["--knowledge", str(KNOWLEDGE), "--db", str(built_db), *args])


def one_line(output: str) -> str:
    assert "Traceback" not in output and len(output.strip().splitlines()) == 1, output
    return output.strip()


def said(reply: dict) -> str:
    blocks = reply.get("blocks") or []
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    return " ".join((reply.get("text", "") + " " + text_of(blocks)).split())


# -- W&B: a project and a group through the public API ---------------------------------------------
@pytest.fixture
def wandb(tmp_path, monkeypatch):
    """The W&B stand-in holding the project team/grpo: ten runs created a day apart, run i with
    the ceiling 0.30 + 0.04 i but the newest, grpo-9, well above them (0.9); run 3 crashed; runs 2
    and 9 in the group g1, run 8 alone in the group solo."""
    pytest.importorskip("wandb", reason="the wandb extra is not installed")
    for name in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    server = WandbStandIn(KEY).start()
    groups = {2: "g1", 9: "g1", 8: "solo"}
    for i in range(10):
        rows = [
            {"_step": s, "train/reward": v}
            for s, v in curve(0.9 if i == 9 else 0.30 + 0.04 * i, seed=i)
        ]
        server.add_run(
            "grpo",
            f"run{i}id",
            rows,
            state="crashed" if i == 3 else ("running" if i == 9 else "finished"),
            group=groups.get(i),
            name=f"grpo-{i}",
            created=f"2026-01-{i + 1:02d}T00:00:00",
        )
    monkeypatch.setenv("WANDB_BASE_URL", server.origin)
    yield server
    server.stop()


def test_compare_a_wandb_project_reads_its_eight_newest_finished_or_running_runs(
    wandb, built_db, monkeypatch
):
    # Expected before running: runs 9 to 4 and 2, 1 (3 crashed, 0 the oldest left out), named by
    # their display names; grpo-9 has the highest ceiling (0.9); a note says 9 such runs and 8
    # compared. The key is never said.
    monkeypatch.setenv("WANDB_API_KEY", KEY)
    out = invoke(built_db, "compare", "wandb:team/grpo", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["labels"] == [f"grpo-{i}" for i in (9, 8, 7, 6, 5, 4, 2, 1)]
    assert data["higher_ceiling"] == "grpo-9", data["verdict"]
    assert data["notes"] == [
        (
            "the W&B project team/grpo holds 9 finished or running runs; these are the 8 most "
            "recent. Name others one by one to compare them (wandb:team/grpo/run9id, ...)."
        )
    ]
    text = " ".join(invoke(built_db, "compare", "wandb:team/grpo").output.split())
    assert "Comparing 8 runs" in text and "these are the 8 most recent" in text, text
    assert KEY not in out.output + text


def test_compare_a_wandb_group_and_a_group_of_one_run_is_one_line(wandb, built_db, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", KEY)
    out = invoke(built_db, "compare", "wandb:team/grpo/group:g1", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["labels"] == ["grpo-9", "grpo-2"] and data["higher_ceiling"] == "grpo-9"
    assert data["notes"] == []
    solo = invoke(built_db, "compare", "wandb:team/grpo/group:solo")
    assert solo.exit_code == 2
    assert one_line(solo.output) == (
        "error: wandb:team/grpo/group:solo: the W&B group solo of the project team/grpo holds one "
        "finished or running run (grpo-8: wandb:team/grpo/run8id); compare takes two runs or more"
    )
    empty = invoke(built_db, "compare", "wandb:team/nosuch")
    assert empty.exit_code == 2, empty.output
    assert (
        "W&B at http://127.0.0.1" in one_line(empty.output)
        and "has no project team/nosuch" in empty.output
    )


def test_forecast_of_a_wandb_project_names_its_runs_and_points_to_compare(
    wandb, built_db, monkeypatch
):
    monkeypatch.setenv("WANDB_API_KEY", KEY)
    out = invoke(built_db, "forecast", "wandb:team/grpo")
    assert out.exit_code == 2
    line = one_line(out.output)
    assert "forecast fits one run" in line and "holds 9 finished or running runs" in line, line
    assert "grpo-9 (wandb:team/grpo/run9id), grpo-8 (wandb:team/grpo/run8id)" in line, line
    assert "and 6 more" in line and line.endswith("compare them all: compare wandb:team/grpo")


def test_a_wandb_run_source_still_reads_one_run_and_diagnose_refuses_a_project_in_one_line(
    wandb, built_db, monkeypatch
):
    monkeypatch.setenv("WANDB_API_KEY", KEY)
    out = invoke(built_db, "forecast", "wandb:team/grpo/run9id", "--json")
    assert out.exit_code == 0, out.output
    assert 0.85 < json.loads(out.output)["asymptote"]["value"] < 0.95
    refused = invoke(built_db, "diagnose", "--run", "wandb:team/grpo")
    assert refused.exit_code == 2
    line = one_line(refused.output)
    assert "names the W&B project team/grpo, not one run" in line, line
    assert "wandb:ENTITY/PROJECT/RUN_ID" in line


def _keyed_bot(standin, built_db, tmp_path, monkeypatch, **settings):
    """A bot whose workspace has the W&B key sealed (set by an admin before it started)."""
    key = new_key()
    state = tmp_path / "state.db"
    store = StateStore(state)
    store.credentials.set(TEAM, "WANDB_API_KEY", KEY, TokenCipher.from_setting(key), "UADMIN")
    store.close()
    monkeypatch.setenv("RLMAP_ENCRYPTION_KEY", key)
    return start_bot(standin, built_db, state, rlmap_encryption_key=key, **settings)


def test_slash_compare_a_wandb_project_with_the_workspaces_sealed_key(
    wandb, standin, built_db, tmp_path, monkeypatch
):
    bot = _keyed_bot(standin, built_db, tmp_path, monkeypatch, rlmap_wandb_entities="team")
    try:
        reply = slash(bot, standin, "compare wandb:team/grpo")
        text = said(reply)
        assert "grpo-9 has the higher ceiling" in text, text
        assert "these are the 8 most recent" in text, text
        refused = said(slash(bot, standin, "compare wandb:other/grpo"))
        assert "RLMAP_WANDB_ENTITIES" in refused and "Traceback" not in refused, refused
        assert all(KEY not in json.dumps(c.args) for c in standin.calls)
    finally:
        bot.stop()


# -- MLflow: an experiment in a sqlite:/// store, written by MLflow's own client -------------------
def _mlflow_sweep(folder) -> str:
    """An experiment of three runs: lr-low (ceiling 0.5), lr-high (0.8), and lr-bad, failed."""
    runs = [
        ("lr-low", curve(0.5, 1), "FINISHED"),
        ("lr-high", curve(0.8, 2), "FINISHED"),
        ("lr-bad", curve(0.2, 3), "FAILED"),
    ]
    return mlflow_experiment(f"sqlite:///{folder}/mlflow.db", "grpo-sweep", runs)


@pytest.fixture(scope="session")
def mlflow_store(tmp_path_factory):
    pytest.importorskip("mlflow", reason="the mlflow test extra is not installed")
    folder, _ = once_per_run(tmp_path_factory, "mlflow-sweep", _mlflow_sweep)
    return folder


def test_compare_an_mlflow_experiment_leaves_its_failed_run_out(
    mlflow_store, built_db, monkeypatch
):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{mlflow_store}/mlflow.db")
    out = invoke(built_db, "compare", "mlflow:experiment:grpo-sweep", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["labels"] == ["lr-high", "lr-low"] and data["higher_ceiling"] == "lr-high"
    missing = invoke(built_db, "compare", "mlflow:experiment:nosuch")
    assert missing.exit_code == 2
    assert "no experiment 'nosuch' in the MLflow store" in one_line(missing.output)


def test_slash_compare_an_mlflow_experiment_in_a_store_under_the_run_roots(
    mlflow_store, standin, built_db, tmp_path, monkeypatch
):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{mlflow_store}/mlflow.db")
    bot = start_bot(standin, built_db, tmp_path / "state.db", rlmap_run_roots=str(mlflow_store))
    try:
        text = said(slash(bot, standin, "compare mlflow:experiment:grpo-sweep"))
        assert "lr-high has the higher ceiling" in text, text
        assert str(mlflow_store) not in text, "no server path in the card"
    finally:
        bot.stop()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bot = start_bot(standin, built_db, tmp_path / "state2.db", rlmap_run_roots=str(elsewhere))
    try:
        text = said(slash(bot, standin, "compare mlflow:experiment:grpo-sweep"))
        assert "names a store outside the folders runs may be read from" in text, text
    finally:
        bot.stop()


# -- Trackio: a project written by the trackio SDK -------------------------------------------------
def _trackio_sweep(folder) -> str:
    """A project of three runs, logged in this order: kl-0 (ceiling 0.6), kl-1 (0.75), kl-2
    (0.45)."""
    runs = [("kl-0", curve(0.6, 4)), ("kl-1", curve(0.75, 5)), ("kl-2", curve(0.45, 6))]
    return trackio_project(folder / "trackio", "sweep", runs)


@pytest.fixture(scope="session")
def trackio_store(tmp_path_factory):
    pytest.importorskip("trackio", reason="the trackio test extra is not installed")
    folder, _ = once_per_run(tmp_path_factory, "trackio-sweep", _trackio_sweep)
    return folder


def test_compare_a_trackio_project_newest_first_and_forecast_refuses_it(
    trackio_store, built_db, monkeypatch
):
    monkeypatch.setenv("TRACKIO_DIR", str(trackio_store / "trackio"))
    out = invoke(built_db, "compare", "trackio:sweep", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["labels"] == ["kl-2", "kl-1", "kl-0"] and data["higher_ceiling"] == "kl-1"
    refused = invoke(built_db, "forecast", "trackio:sweep")
    assert refused.exit_code == 2
    line = one_line(refused.output)
    assert "the Trackio project sweep, which holds 3 runs: kl-2 (trackio:sweep/kl-2)" in line


def test_slash_compare_a_trackio_project_under_the_run_roots(
    trackio_store, standin, built_db, tmp_path, monkeypatch
):
    monkeypatch.setenv("TRACKIO_DIR", str(trackio_store / "trackio"))
    bot = start_bot(standin, built_db, tmp_path / "state.db", rlmap_run_roots=str(trackio_store))
    try:
        reply = slash(bot, standin, "compare trackio:sweep")
        text = said(reply)
        assert "kl-1 has the higher ceiling" in text, text
        blocks = reply["blocks"]
        blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
        assert blocks[0]["text"]["text"].startswith(":scales: *")
        # A watch follows one run: a whole project is refused in one line, and nothing is kept.
        refused = said(slash(bot, standin, "watch trackio:sweep every 5m"))
        assert "names the Trackio project sweep, not one run" in refused, refused
        assert "trackio:PROJECT/RUN_NAME" in refused and "Traceback" not in refused
        assert bot.front.core.state.watches.list() == []
    finally:
        bot.stop()
