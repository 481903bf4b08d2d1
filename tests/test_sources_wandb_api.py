"""wandb:ENTITY/PROJECT/RUN_ID through the real
wandb.Api against a stand-in of W&B's GraphQL server.

The stand-in (tests/support/wandb_standin.py) answers only the queries the client sends; the
check against W&B itself, with a real key, is in docs/user-guide.md. Skipped, with the reason,
when the wandb extra is not installed.
"""

from __future__ import annotations

import math
import os
import socket

import pytest

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.sources import open_source, parse_source
from rlmap_bot.runs.sources.access import Access
from support.wandb_standin import WandbStandIn

pytest.importorskip("wandb", reason="the wandb extra is not installed")

KEY = "wandbkey" + "0123456789abcdef" * 2  # 40 characters, like a W&B API key
KEEP_ALL = lambda name: True  # noqa: E731 - every metric kept as a series


@pytest.fixture(autouse=True)
def wandb_scratch(tmp_path, monkeypatch):
    """The client's files (settings, cache, service
    logs) in a scratch folder, never the developer's.
    """
    for name in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.delenv("WANDB_API_KEY", raising=False)


@pytest.fixture
def standin():
    server = WandbStandIn(KEY).start()
    yield server
    server.stop()


def _access(standin: WandbStandIn, key: str = KEY, entities: tuple[str, ...] = ("team",)) -> Access:
    return Access(
        wandb_entities=entities,
        credentials={"WANDB_API_KEY": key},
        environ={"WANDB_BASE_URL": standin.origin},
    )


def _rows(steps: range, **extra: float) -> list[dict]:
    return [{"_step": s, "_runtime": float(s), "train/reward": s / 100, **extra} for s in steps]


def test_full_history_is_read_past_the_500_row_sample(standin):
    standin.add_run("grpo", "abc123", _rows(range(1200)))
    run = open_source(parse_source("wandb:team/grpo/abc123"), _access(standin)).read_all(KEEP_ALL)
    assert run.series["train/reward"].steps.tolist() == list(range(1200))
    assert "_runtime" not in run.metrics
    assert {"Run", "HistoryPage"} <= set(standin.queries)


def test_read_new_pages_from_the_step_after_the_cursor_and_sees_fresh_rows(standin):
    rows = standin.add_run("grpo", "abc123", _rows(range(10)))
    source = open_source(parse_source("wandb:team/grpo/abc123"), _access(standin))
    first, cursor = source.read_new(None, KEEP_ALL)
    assert first.series["train/reward"].steps.tolist() == list(range(10))
    rows.extend(_rows(range(10, 13)))
    standin.history_pages.clear()
    new, cursor = source.read_new(cursor, KEEP_ALL)
    assert new.series["train/reward"].steps.tolist() == [10, 11, 12]
    assert min(low for low, _ in standin.history_pages) == 10


def test_nan_and_infinity_are_read_as_logged(standin):
    standin.add_run(
        "grpo",
        "nan1",
        [
            {"_step": 0, "loss": math.nan},
            {"_step": 1, "loss": math.inf},
            {"_step": 2, "loss": "NaN"},
        ],
    )
    run = open_source(parse_source("wandb:team/grpo/nan1"), _access(standin)).read_all(KEEP_ALL)
    values = run.series["loss"].values
    assert math.isnan(values[0]) and values[1] == math.inf and math.isnan(values[2])
    assert run.nonfinite["loss"] == [0, 1, 2]


def test_rate_limited_requests_are_retried_with_backoff(standin, monkeypatch):
    from rlmap_bot.runs.sources import wandb_api

    monkeypatch.setattr(wandb_api, "BACKOFF_SECONDS", (0.01, 0.05))
    standin.add_run("grpo", "abc123", _rows(range(5)))
    standin.rate_limited = 2
    run = open_source(parse_source("wandb:team/grpo/abc123"), _access(standin)).read_all(KEEP_ALL)
    assert len(run.series["train/reward"]) == 5
    assert standin.rate_limited == 0


def test_a_wrong_key_is_one_line_that_never_shows_a_key(standin):
    standin.add_run("grpo", "abc123", _rows(range(5)))
    wrong = "wrongkey" + "f" * 32
    with pytest.raises(RunReadError, match="refused the API key") as err:
        open_source(parse_source("wandb:team/grpo/abc123"), _access(standin, key=wrong)).read_all(
            KEEP_ALL
        )
    text = str(err.value)
    assert wrong not in text and KEY not in text and "\n" not in text


def test_two_workspaces_keys_stay_apart_in_one_process(standin):
    standin.add_run("grpo", "abc123", _rows(range(5)))
    good = open_source(parse_source("wandb:team/grpo/abc123"), _access(standin)).read_all(KEEP_ALL)
    assert len(good.series["train/reward"]) == 5
    with pytest.raises(RunReadError, match="refused the API key"):
        open_source(
            parse_source("wandb:team/grpo/abc123"), _access(standin, key="other" + "e" * 35)
        ).read_all(KEEP_ALL)


def test_a_missing_run_is_one_line(standin):
    with pytest.raises(RunReadError) as err:
        open_source(parse_source("wandb:team/grpo/nosuch"), _access(standin)).read_all(KEEP_ALL)
    assert "\n" not in str(err.value) and KEY not in str(err.value)


def test_a_server_that_is_down_is_one_retryable_line(monkeypatch):
    from rlmap_bot.runs.sources import wandb_api

    monkeypatch.setattr(wandb_api, "BACKOFF_SECONDS", (0.01, 0.05))
    monkeypatch.setattr(
        wandb_api, "API_TIMEOUT_SECONDS", 2
    )  # the client waits this long for a login answer
    monkeypatch.setattr(wandb_api, "RETRIES", 2)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    access = Access(
        wandb_entities=("team",),
        credentials={"WANDB_API_KEY": KEY},
        environ={"WANDB_BASE_URL": f"http://127.0.0.1:{port}"},
    )
    with pytest.raises(RunReadError, match="retried") as err:
        open_source(parse_source("wandb:team/grpo/abc123"), access).read_all(KEEP_ALL)
    assert KEY not in str(err.value) and "\n" not in str(err.value)


def test_an_entity_outside_the_allow_list_is_refused_before_any_request(standin):
    with pytest.raises(RunReadError, match="RLMAP_WANDB_ENTITIES"):
        open_source(parse_source("wandb:other-team/grpo/abc123"), _access(standin))
    assert standin.queries == []


def test_no_key_says_how_an_admin_sets_one(standin):
    access = Access(wandb_entities=("team",), environ={"WANDB_BASE_URL": standin.origin})
    with pytest.raises(RunReadError, match="credentials set wandb"):
        open_source(parse_source("wandb:team/grpo/abc123"), access)
    assert "WANDB_API_KEY" not in os.environ
