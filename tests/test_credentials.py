"""A workspace's tracker credentials: set by an admin
over the real Bolt app, sealed at rest, never shown,
never lent to another workspace; and the Access each workspace reads runs with."""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa

from rlmap_bot.crypto import TokenCipher, new_key
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.sources import open_source, parse_source
from rlmap_bot.runs.sources.access import local_access, workspace_access
from rlmap_bot.settings import Settings
from rlmap_bot.slack.sealing import seal_at_start
from rlmap_bot.state.store import StateStore
from support.slackio import blocks_of, text_of
from support.standin import TEAM

SECRET = "wandbsecret" + "0123456789abcdef" * 2


def _raw_values(store: StateStore) -> list[str]:
    with store.engine.connect() as conn:
        return [r[0] for r in conn.execute(sa.text("select value from workspace_credentials"))]


def test_a_credential_is_sealed_at_rest_and_opened_for_its_workspace_only(tmp_path):
    store = StateStore(tmp_path / "state.db")
    cipher = TokenCipher.from_setting(new_key())
    store.credentials.set("T1", "WANDB_API_KEY", SECRET, cipher, "UADMIN")
    assert all(SECRET not in v for v in _raw_values(store))
    assert store.credentials.opened("T1", cipher) == {"WANDB_API_KEY": SECRET}
    assert store.credentials.opened("T2", cipher) == {}
    store.forget_team("T1")
    assert store.credentials.opened("T1", cipher) == {}
    store.close()


def test_after_a_key_rotation_reseal_leaves_values_the_new_key_alone_opens(tmp_path):
    store = StateStore(tmp_path / "state.db")
    old, new = new_key(), new_key()
    store.credentials.set(
        "T1", "MLFLOW_TRACKING_TOKEN", SECRET, TokenCipher.from_setting(old), "UADMIN"
    )
    rotated = Settings(rlmap_encryption_key=f"{new},{old}")
    assert seal_at_start(rotated, store) == 1
    assert store.credentials.opened("T1", TokenCipher.from_setting(new)) == {
        "MLFLOW_TRACKING_TOKEN": SECRET
    }
    store.close()


def test_workspace_access_takes_the_allow_lists_and_its_own_credentials_never_the_environment(
    tmp_path,
):
    key = new_key()
    store = StateStore(tmp_path / "state.db")
    store.credentials.set("T1", "WANDB_API_KEY", SECRET, TokenCipher.from_setting(key), "UADMIN")
    settings = Settings(
        rlmap_encryption_key=key,
        rlmap_wandb_entities="team-a, team-b",
        rlmap_mlflow_hosts="mlflow.internal:5000",
    )
    environ = {"WANDB_API_KEY": "the-operators-own-key", "WANDB_BASE_URL": "http://wandb.internal"}
    mine = workspace_access(settings, store, "T1", environ)
    assert mine.credentials == {"WANDB_API_KEY": SECRET}
    assert mine.wandb_entities == ("team-a", "team-b") and mine.mlflow_hosts == (
        "mlflow.internal:5000",
    )
    assert mine.environ == {"WANDB_BASE_URL": "http://wandb.internal"}
    assert workspace_access(settings, store, "T2", environ).credentials == {}
    with pytest.raises(RunReadError, match="RLMAP_WANDB_ENTITIES"):
        open_source(parse_source("wandb:someone-else/p/r"), mine)
    store.close()


def test_a_workspace_without_allow_lists_is_refused_trackers_and_a_terminal_is_not():
    refused = workspace_access(
        Settings(), None, "T1", {"MLFLOW_TRACKING_URI": "http://mlflow.internal:5000"}
    )  # type: ignore[arg-type]
    with pytest.raises(RunReadError, match="RLMAP_MLFLOW_HOSTS"):
        open_source(parse_source("mlflow:abc"), refused)
    terminal = local_access(
        {"MLFLOW_TRACKING_URI": "http://mlflow.internal:5000", "WANDB_API_KEY": SECRET}
    )
    assert open_source(parse_source("mlflow:abc"), terminal) is not None
    assert terminal.credentials == {"WANDB_API_KEY": SECRET}


# -- the admin command, through the real Bolt app
#  ------------------------------------------------------
@pytest.fixture
def keyed_bot(standin, built_db, tmp_path, monkeypatch):
    from support.bot import start_bot

    key = new_key()
    monkeypatch.setenv("RLMAP_ENCRYPTION_KEY", key)  # the core's settings come from the environment
    running = start_bot(standin, built_db, tmp_path / "state.db", rlmap_encryption_key=key)
    yield running, key
    running.stop()


def _reply(standin, name: str) -> str:
    call = standin.wait_for("response_url", lambda c: c.target == name, timeout=15)[0]
    return call.args.get("text", "") + "\n" + text_of(blocks_of(call))


def test_an_admin_sets_a_key_by_slash_command_and_it_is_never_repeated(keyed_bot, standin, caplog):
    bot, key = keyed_bot
    caplog.set_level(logging.DEBUG)
    bot.slack.command(f"credentials set wandb {SECRET}", user="UADMIN", respond_as="set")
    said = _reply(standin, "set")
    assert "Stored" in said and SECRET not in said
    bot.slack.command("credentials list", user="UADMIN", respond_as="list")
    listed = _reply(standin, "list")
    assert "WANDB_API_KEY" in listed and SECRET not in listed
    state = bot.front.core.state
    assert all(SECRET not in v for v in _raw_values(state))
    assert state.credentials.opened(TEAM, TokenCipher.from_setting(key)) == {
        "WANDB_API_KEY": SECRET
    }
    assert SECRET not in caplog.text
    assert all(SECRET not in str(c.args) for c in standin.calls if c.target != "slash")


def test_a_member_who_is_not_an_admin_cannot_set_or_list(keyed_bot, standin):
    bot, _ = keyed_bot
    bot.slack.command(f"credentials set wandb {SECRET}", user="U1", respond_as="no")
    said = _reply(standin, "no")
    assert "Only the admins" in said and SECRET not in said
    assert _raw_values(bot.front.core.state) == []


def test_a_key_typed_in_a_mention_is_refused_and_not_stored(keyed_bot, standin):
    bot, _ = keyed_bot
    bot.slack.event(
        {
            "type": "app_mention",
            "user": "UADMIN",
            "channel": "C1",
            "ts": "70.1",
            "text": f"<@UBOT> credentials set wandb {SECRET}",
        }
    )
    told = standin.wait_for(
        "chat.postEphemeral", lambda c: "nothing was stored" in str(c.args), timeout=15
    )[0]
    assert SECRET not in str(told.args)
    assert _raw_values(bot.front.core.state) == []


def test_a_mistyped_tracker_is_not_repeated_back(keyed_bot, standin):
    bot, _ = keyed_bot
    bot.slack.command(f"credentials set {SECRET}", user="UADMIN", respond_as="typo")
    said = _reply(standin, "typo")
    assert "Say which tracker" in said and SECRET not in said
