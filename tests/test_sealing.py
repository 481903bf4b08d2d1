"""Sealed values carry the bot's own marker, a value that does not open is its workspace's
problem, and a start with the wrong key still stops in one line; stores from before the marker
are migrated. Real SQLite and PostgreSQL, the real Bolt app against the Slack stand-in."""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet

from rlmap_bot.crypto import LEGACY, SEALED, TokenCipher, WrongKeyError, new_key
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.sources import open_source, parse_source
from rlmap_bot.runs.sources.access import workspace_access
from rlmap_bot.settings import Settings
from rlmap_bot.slack.sealing import seal_at_start
from rlmap_bot.state.store import StateStore
from support.standin import TEAM

# A W&B key is 40 hex characters; this one begins as every Fernet token does, which the old code
# took for "sealed already" and stored in clear.
LOOKS_SEALED = "gAAAAA" + "0123456789abcdef0123456789abcdef01"
KEY_T1 = "aaaa0000bbbb1111cccc2222dddd3333eeee4444"
KEY_T2 = "ffff5555eeee6666dddd7777cccc8888bbbb9999"


def raw(store: StateStore, table: str = "workspace_credentials", column: str = "value") -> list:
    with store.engine.connect() as conn:
        return [r[0] for r in conn.execute(sa.text(f"select {column} from {table}"))]


def put_raw(store: StateStore, team: str, name: str, value: str) -> None:
    """A row written into the table by something other than the bot."""
    with store.engine.begin() as conn:
        conn.execute(
            sa.text(
                "insert into workspace_credentials (team, name, value, set_by, set_at) values (:t, "
                ":n, :v, 'someone', '2026-01-01T00:00:00+00:00')"
            ),
            {"t": team, "n": name, "v": value},
        )


def test_a_value_that_looks_sealed_is_sealed_like_any_other(state_url):
    store = StateStore(state_url)
    cipher = TokenCipher.from_setting(new_key())
    store.credentials.set("T1", "WANDB_API_KEY", LOOKS_SEALED, cipher, "UADMIN")
    [stored] = raw(store)
    assert stored.startswith(SEALED) and LOOKS_SEALED not in stored, "marked, never in clear"
    assert store.credentials.opened("T1", cipher) == {"WANDB_API_KEY": LOOKS_SEALED}
    store.close()


def test_a_plain_row_is_never_used_as_it_is_and_says_what_and_whose(state_url):
    store = StateStore(state_url)
    key = new_key()
    cipher = TokenCipher.from_setting(key)
    store.credentials.set("T1", "WANDB_API_KEY", KEY_T1, cipher, "UADMIN")
    put_raw(store, "T2", "WANDB_API_KEY", KEY_T2)  # in clear, without the marker
    values, unopened = store.credentials.open_all("T2", cipher)
    assert values == {} and set(unopened) == {"WANDB_API_KEY"}
    said = str(unopened["WANDB_API_KEY"])
    assert "W&B API key of workspace T2" in said and "stored in clear" in said
    assert "credentials set wandb" in said and KEY_T2 not in said
    # A reader of that workspace is told so, rather than reading without a key.
    settings = Settings(rlmap_encryption_key=key, rlmap_wandb_entities="team-a")
    access = workspace_access(settings, store, "T2", {})
    with pytest.raises(RunReadError, match="W&B API key of workspace T2 does not open") as told:
        open_source(parse_source("wandb:team-a/p/run1"), access)
    assert KEY_T2 not in str(told.value)
    assert workspace_access(settings, store, "T1", {}).credentials == {"WANDB_API_KEY": KEY_T1}
    store.close()


def test_one_workspaces_bad_value_does_not_stop_the_start_and_its_admin_is_told(
    standin, built_db, tmp_path, monkeypatch, caplog
):
    from support.bot import start_bot
    from support.slackio import blocks_of, text_of

    key, other = new_key(), new_key()
    state = tmp_path / "state.db"
    store = StateStore(state)
    store.credentials.set("TOTHER", "WANDB_API_KEY", KEY_T2, TokenCipher.from_setting(key), "U9")
    # This workspace's MLflow token sealed under a key the bot was never given.
    store.credentials.set(
        TEAM, "MLFLOW_TRACKING_TOKEN", KEY_T1, TokenCipher.from_setting(other), "U"
    )
    store.close()
    caplog.set_level(logging.INFO)
    monkeypatch.setenv("RLMAP_ENCRYPTION_KEY", key)
    bot = start_bot(standin, built_db, state, rlmap_encryption_key=key)
    try:
        assert f"the MLflow token of workspace {TEAM} does not open" in caplog.text
        assert KEY_T1 not in caplog.text and KEY_T2 not in caplog.text
        cipher = TokenCipher.from_setting(key)
        assert bot.front.core.state.credentials.opened("TOTHER", cipher) == {
            "WANDB_API_KEY": KEY_T2
        }, "the other workspace reads as before"
        bot.slack.command("credentials list", user="UADMIN", respond_as="list")
        [call] = standin.wait_for("response_url", lambda c: c.target == "list", timeout=15)
        listed = call.args.get("text", "") + text_of(blocks_of(call))
        assert "MLFLOW_TRACKING_TOKEN" in listed and "does not open" in listed
        assert KEY_T1 not in listed
    finally:
        bot.stop()


def test_a_wrong_key_stops_the_start_in_one_line_naming_what_and_whose(state_url):
    store = StateStore(state_url)
    key = new_key()
    store.credentials.set("T1", "WANDB_API_KEY", KEY_T1, TokenCipher.from_setting(key), "U")
    store.credentials.set("T2", "MLFLOW_TRACKING_TOKEN", KEY_T2, TokenCipher.from_setting(key), "U")
    before = raw(store)
    with pytest.raises(WrongKeyError) as stopped:
        seal_at_start(Settings(rlmap_encryption_key=new_key()), store)
    said = str(stopped.value)
    assert "\n" not in said and "opens nothing sealed" in said
    assert "the MLflow token of workspace T2" in said and "the W&B API key of workspace T1" in said
    assert "Slack" not in said, "a tracker credential is named as one, not as a Slack token"
    assert KEY_T1 not in said and key not in said
    assert raw(store) == before, "nothing written"
    store.close()


def test_the_key_check_tells_a_right_key_from_a_wrong_one_when_no_value_opens(state_url):
    store = StateStore(state_url)
    key = new_key()
    settings = Settings(rlmap_encryption_key=key)
    store.credentials.set("T1", "WANDB_API_KEY", KEY_T1, TokenCipher.from_setting(key), "U")
    seal_at_start(settings, store)  # a good start: it seals the key check
    assert (store.credentials.key_check() or "").startswith(SEALED)
    # The workspace's only value is replaced by one sealed under another key.
    store.credentials.set("T1", "WANDB_API_KEY", KEY_T1, TokenCipher.from_setting(new_key()), "U")
    assert seal_at_start(settings, store) == 0, "the right key: the bad value is T1's alone"
    with pytest.raises(WrongKeyError):
        seal_at_start(Settings(rlmap_encryption_key=new_key()), store)
    store.close()


def test_a_store_from_before_markers_is_migrated_and_plain_rows_are_not_trusted(state_url, caplog):
    """0009's store: values sealed as bare Fernet tokens, one W&B key kept in clear because it
    began like one, a bot token from before encryption, and a claim body in clear."""
    from alembic import command
    from alembic.config import Config
    from slack_sdk.oauth.installation_store.models.installation import Installation
    from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

    from rlmap_bot.slack.oauth import EncryptedInstallationStore
    from rlmap_bot.state.db import MIGRATIONS

    key = new_key()
    fernet = Fernet(key)
    engine = sa.create_engine(state_url if "://" in state_url else f"sqlite:///{state_url}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0009")
        rows = [
            ("T1", "WANDB_API_KEY", fernet.encrypt(KEY_T1.encode()).decode()),
            ("T2", "WANDB_API_KEY", LOOKS_SEALED),
        ]
        for team, name, value in rows:
            conn.execute(
                sa.text("insert into workspace_credentials values (:t, :n, :v, 'U', '2026-01-01')"),
                {"t": team, "n": name, "v": value},
            )
        conn.execute(
            sa.text(
                "insert into event_claims (key, kind, team, status, owner, attempts, lease_until, "
                "body, replies, claimed_at) values ('command:1', 'command', 'T1', 'working', "
                "'gone', 1, '2000-01-01', :b, '{}', '2000-01-01')"
            ),
            {"b": '{"text": "credentials set wandb ' + KEY_T1 + '"}'},
        )
    slack = SQLAlchemyInstallationStore(client_id="c", engine=engine)
    slack.create_tables()
    for team, token in (("TS", fernet.encrypt(b"xoxb-TS-token").decode()), ("TP", "xoxb-TP")):
        slack.save(Installation(app_id="A", team_id=team, user_id="U", bot_token=token))
    engine.dispose()

    store = StateStore(state_url)  # migrates to the head
    assert all(v.startswith(LEGACY) for v in raw(store)), "marked, not yet proven"
    assert raw(store, "event_claims", "body") == [None], "the body in clear is dropped"
    installations = EncryptedInstallationStore("c", store.engine, TokenCipher.from_setting(key))
    caplog.set_level(logging.WARNING)
    written = seal_at_start(Settings(rlmap_encryption_key=key), store, installations)
    assert written == 6, "two credentials, and TS's and TP's bot token in two rows each"
    cipher = TokenCipher.from_setting(key)
    assert all(v.startswith(SEALED) for v in raw(store)), "every value now carries the seal"
    assert store.credentials.opened("T1", cipher) == {"WANDB_API_KEY": KEY_T1}
    assert store.credentials.opened("T2", cipher) == {"WANDB_API_KEY": LOOKS_SEALED}
    assert "the W&B API key of workspace T2 was kept in clear by an older version" in caplog.text
    assert "the Slack bot token of workspace TP was kept in clear" in caplog.text
    assert installations.find_bot(enterprise_id=None, team_id="TS").bot_token == "xoxb-TS-token"
    assert installations.find_bot(enterprise_id=None, team_id="TP").bot_token == "xoxb-TP"
    for text in (caplog.text, *raw(store), *(str(v) for v in raw_slack(store))):
        assert KEY_T1 not in text and LOOKS_SEALED not in text and "xoxb-T" not in text
    # A value under a key no longer configured stays, is reported and is not used.
    store.credentials.set("T3", "WANDB_API_KEY", KEY_T2, TokenCipher.from_setting(new_key()), "U")
    seal_at_start(Settings(rlmap_encryption_key=key), store, installations)
    assert "the W&B API key of workspace T3 does not open" in caplog.text
    store.close()


def raw_slack(store: StateStore) -> list:
    with store.engine.connect() as conn:
        return [
            v
            for table in ("slack_installations", "slack_bots")
            for row in conn.execute(sa.text(f"select * from {table}"))
            for v in row
        ]
