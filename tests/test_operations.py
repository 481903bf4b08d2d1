"""Security and operations: tokens encrypted at rest, /metrics, logs without secrets."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import time

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet
from slack_sdk.oauth.installation_store.models.installation import Installation

from rlmap_bot.crypto import SEALED, TokenCipher, new_key
from rlmap_bot.logs import make_handler
from rlmap_bot.settings import Settings
from rlmap_bot.slack.oauth import EncryptedInstallationStore, oauth_setup
from rlmap_bot.slack.sealing import seal_at_start
from rlmap_bot.state.store import StateStore
from support.bot import ENCRYPTION_KEY, start_oauth_bot
from support.http import get, metric, stop_server
from support.oauth import install
from support.serve import EXE
from support.slackio import start as start_diagnosis
from support.standin import BOT_TOKEN, BOT_USER, SIGNING_SECRET, mention

OTHER_KEY = Fernet.generate_key().decode()


# Every bot token these tests store begins so. A
# sealed token is URL-safe base64, which holds a short
# string such as "xox" by chance (1 token in about
# 2,700, measured with 200,000 Fernet tokens: the likely
# cause of one failed CI run); six characters, once in more than 10^8.
PLAIN = "xoxb-T"


def raw_rows(state_url: str) -> list[dict]:
    """Every row of slack-sdk's installation tables, as the database holds them."""
    engine = sa.create_engine(state_url if "://" in state_url else f"sqlite:///{state_url}")
    with engine.connect() as conn:
        rows = [
            dict(r)
            for table in ("slack_installations", "slack_bots")
            for r in conn.execute(sa.text(f"select * from {table}")).mappings()
        ]
    engine.dispose()
    return rows


def installation(team: str) -> Installation:
    return Installation(
        app_id="A1",
        team_id=team,
        user_id="UINSTALLER",
        bot_token=f"xoxb-{team}-plain-token",
        bot_id="B1",
        bot_user_id=BOT_USER,
        bot_scopes="chat:write",
        incoming_webhook_url=f"https://hooks.example/{team}/secret",
    )


def error_lines(stderr: str) -> int:
    """How many lines say what is wrong (start-up logs may come before): one, and no traceback."""
    assert "Traceback" not in stderr
    return sum(1 for line in stderr.splitlines() if line.startswith("error:"))


def oauth_settings(key: str | None) -> Settings:
    return Settings(
        slack_client_id="client-id",
        slack_client_secret="client-secret",
        slack_signing_secret="s",
        rlmap_encryption_key=key,
    )


# -- tokens at rest
#  ---------------------------------------------------------------------------------
def test_no_token_is_stored_in_plain_text(standin, built_db, tmp_path):
    state = tmp_path / "state.db"
    bot = start_oauth_bot(standin, built_db, state)
    try:
        install(bot, "TA")
        install(bot, "TB")
        rows = raw_rows(str(state))
        assert len(rows) == 4, "an installation and a bot row per workspace"
        assert not any(PLAIN in str(value) for row in rows for value in row.values()), (
            "a token in plain text"
        )
        assert all(row["bot_token"].startswith(SEALED) for row in rows), "marked sealed"
        assert (
            Fernet(ENCRYPTION_KEY)
            .decrypt(rows[0]["bot_token"][len(SEALED) :].encode())
            .decode()
            .startswith("xoxb-T")
        )
        assert (
            bot.front.installations.find_bot(enterprise_id=None, team_id="TA").bot_token
            == "xoxb-TA-installed"
        )
        bot.slack.event(
            mention("5.1", "PPO"),
            team="TB",
        )
        assert (
            standin.wait_for("chat.postMessage")[0].headers["authorization"]
            == "Bearer xoxb-TB-installed"
        )
    finally:
        bot.stop()


def test_old_key_tokens_are_resealed_and_a_plain_row_is_refused_loudly(state_url, caplog):
    store = StateStore(state_url)
    from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

    old = EncryptedInstallationStore("client-id", store.engine, TokenCipher.from_setting(OTHER_KEY))
    old.create_tables()
    old.save(installation("TOLD"))
    # Written into the store by something other than the bot, after this version's migration.
    SQLAlchemyInstallationStore(client_id="client-id", engine=store.engine).save(
        installation("TPLAIN")
    )
    assert any(r["bot_token"] == "xoxb-TPLAIN-plain-token" for r in raw_rows(state_url))

    rotated = new_key()
    settings = oauth_settings(f"{rotated},{OTHER_KEY}")
    installations, _ = oauth_setup(settings, store.engine)
    caplog.set_level(logging.INFO)
    assert seal_at_start(settings, store, installations) == 3, "TOLD: two bot tokens, a webhook"
    said = caplog.text
    assert "the Slack bot token of workspace TPLAIN does not open" in said
    assert "stored in clear" in said and "reinstall the app" in said
    assert "xoxb-TPLAIN" not in said, "named, never shown"
    told = [r for r in raw_rows(state_url) if r["team_id"] == "TOLD"]
    newest = Fernet(rotated)  # the first key alone opens them now: the old one can be dropped
    assert {newest.decrypt(r["bot_token"][len(SEALED) :].encode()).decode() for r in told} == {
        "xoxb-TOLD-plain-token"
    }
    again, _ = oauth_setup(oauth_settings(rotated), store.engine)
    assert again.find_bot(enterprise_id=None, team_id="TOLD").bot_token == "xoxb-TOLD-plain-token"
    assert again.find_bot(enterprise_id=None, team_id="TPLAIN") is None, "never used as it is"
    assert again.find_installation(enterprise_id=None, team_id="TPLAIN") is None
    store.close()


def test_oauth_without_a_key_or_with_a_wrong_key_refuses_to_start_in_one_line(serve_env, tmp_path):
    env = dict(
        serve_env,
        SLACK_CLIENT_ID="client-id",
        SLACK_CLIENT_SECRET="client-secret",
        RLMAP_STATE_DB=str(tmp_path / "state.db"),
    )
    env.pop("SLACK_BOT_TOKEN")
    out = subprocess.run(
        [EXE, "serve", "--http"], env=env, capture_output=True, text=True, timeout=60
    )
    assert (
        out.returncode == 2
        and "RLMAP_ENCRYPTION_KEY" in out.stderr
        and "rlmap-bot key new" in out.stderr
    )
    assert error_lines(out.stderr) == 1

    store = StateStore(tmp_path / "state.db")
    sealed = EncryptedInstallationStore(
        "client-id", store.engine, TokenCipher.from_setting(OTHER_KEY)
    )
    sealed.create_tables()
    sealed.save(installation("TK"))
    store.close()
    out = subprocess.run(
        [EXE, "serve", "--http"],
        env=dict(env, RLMAP_ENCRYPTION_KEY=ENCRYPTION_KEY),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and (
        "RLMAP_ENCRYPTION_KEY opens nothing sealed in the state store (the Slack bot token of "
        "workspace TK" in out.stderr
    ), out.stderr
    assert error_lines(out.stderr) == 1
    assert ENCRYPTION_KEY not in out.stderr and OTHER_KEY not in out.stderr

    out = subprocess.run(
        [EXE, "serve", "--http"],
        env=dict(env, RLMAP_ENCRYPTION_KEY="not-a-key"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        out.returncode == 2 and "RLMAP_ENCRYPTION_KEY: the value is not a Fernet key" in out.stderr
    )
    assert "not-a-key" not in out.stderr and error_lines(out.stderr) == 1


# -- metrics
#  ----------------------------------------------------------------------------------------
def test_metrics_count_what_the_bot_receives_answers_and_posts(http_bot, standin):
    _, before = get(http_bot.url + "/metrics")
    after = before

    def delta(name: str, **labels: str) -> float:
        return metric(after, name, **labels) - metric(before, name, **labels)

    http_bot.slack.event(
        mention("6.1", "PPO"),
        event_id="EvCounted",
    )
    http_bot.slack.event(
        mention("6.1", "PPO"),
        event_id="EvCounted",
        headers={"X-Slack-Retry-Num": "1"},
    )
    card = start_diagnosis(http_bot, standin, channel="CX")  # a command
    card.click("diag_skip")  # a click
    standin.rate_limit_next("chat.postEphemeral")
    http_bot.slack.command("stages", channel="CY", respond_as="stages")
    standin.wait_for("response_url", lambda c: c.target == "stages")
    http_bot.slack.event(
        {
            "type": "message",
            "channel_type": "channel",
            "user": "U1",
            "channel": "CX",
            "ts": "6.9",
            "thread_ts": card.thread,
            "text": "not a number",
        },
        event_id="EvRateLimited",
    )
    standin.wait_for("chat.postEphemeral", count=2, timeout=15)  # a 429, then the retry
    # A request counts as answered when its listener returns, a moment after its last post: wait for
    # the three kinds to be counted rather than for a quiet spell (under load that can come first).
    answered = {"event": 2, "command": 2, "action": 1}
    deadline = time.monotonic() + 30
    while True:
        status, after = get(http_bot.url + "/metrics")
        assert status == 200
        if all(delta("rlmap_events_answered_total", kind=k) >= n for k, n in answered.items()):
            break
        assert time.monotonic() < deadline, "requests were never all counted as answered"
        time.sleep(0.05)

    assert delta("rlmap_events_received_total", kind="event") == 3
    assert delta("rlmap_events_deduplicated_total", kind="event") == 1
    assert delta("rlmap_events_answered_total", kind="event") == 2
    assert delta("rlmap_events_received_total", kind="command") == 2
    assert delta("rlmap_events_answered_total", kind="command") == 2
    assert delta("rlmap_events_answered_total", kind="action") == 1
    assert delta("rlmap_ack_seconds_count", kind="event") == 3
    assert delta("rlmap_reply_seconds_count", kind="command") == 2
    assert delta("rlmap_slack_rate_limited_total", method="chat.postEphemeral") == 1
    assert metric(after, "rlmap_state_store_up") == 1
    for name in (
        "rlmap_digest_posts_total",
        "rlmap_watch_posts_total",
        "rlmap_state_store_errors_total",
        "rlmap_event_claims_unfinished",
        "rlmap_event_claims_oldest_unfinished_seconds",
        "rlmap_events_taken_over_total",
        "rlmap_events_failed_total",
    ):
        assert f"# TYPE {name.removesuffix('_total')}" in after, name


def test_socket_mode_serves_health_readiness_and_metrics_on_their_own_port():
    from rlmap_bot.slack.http import make_server

    ready = {"now": False}
    server = make_server(
        None, "127.0.0.1", 0, threads=2, health={"entries": 1}, ready=lambda: ready["now"]
    )
    thread = __import__("threading").Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.effective_port}"
    try:
        assert get(url + "/healthz") == (200, '{"ok": true, "entries": 1}')
        assert get(url + "/readyz")[0] == 503
        ready["now"] = True
        assert get(url + "/readyz")[0] == 200
        status, text = get(url + "/metrics")
        assert status == 200 and "# TYPE rlmap_events_received" in text
        assert get(url + "/slack/events")[0] == 404, "no Slack endpoint on the metrics port"
    finally:
        stop_server(server, thread)


# -- logs
#  -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_logs_never_show_a_secret(fmt):
    password = "pg-Pa55word-7Qx"
    settings = Settings(
        slack_bot_token=BOT_TOKEN,
        slack_signing_secret=SIGNING_SECRET,
        slack_app_token="xapp-1-A1-z9",
        slack_client_secret="client-secret-8f2",
        rlmap_encryption_key=ENCRYPTION_KEY,
        rlmap_state_url=f"postgresql+psycopg://rlmap:{password}@db:5432/rlmap",
        rlmap_log_format=fmt,
    )
    stream = io.StringIO()
    logger = logging.getLogger("rlmap_bot.test.secrets")
    logger.propagate, logger.level = False, logging.INFO
    logger.addHandler(make_handler(settings, stream))
    try:
        logger.info(
            "token %s, secret %s, client %s, key %s",
            BOT_TOKEN,
            SIGNING_SECRET,
            "client-secret-8f2",
            ENCRYPTION_KEY,
        )
        logger.warning(
            "connecting to postgresql://rlmap:%s@db/rlmap failed",
            password,
            extra={"event_id": "Ev1"},
        )
        try:
            raise RuntimeError(f"Slack said no to xoxb-77-another-token-abc and {SIGNING_SECRET}")
        except RuntimeError:
            logger.exception("listener failed")
    finally:
        logger.handlers.clear()
    out = stream.getvalue()
    for secret in (
        BOT_TOKEN,
        SIGNING_SECRET,
        "client-secret-8f2",
        ENCRYPTION_KEY,
        password,
        "another-token",
    ):
        assert secret not in out, secret
    assert out.count("[redacted]") >= 7
    lines = out.strip().splitlines()
    if fmt == "json":
        records = [json.loads(line) for line in lines]
        assert (
            len(records) == 3
            and records[1]["event_id"] == "Ev1"
            and records[1]["level"] == "WARNING"
        )
        assert (
            "Traceback" in records[2]["traceback"]
            and records[2]["logger"] == "rlmap_bot.test.secrets"
        )
    else:
        assert lines[0].split()[2] == "INFO" and "Traceback" in out
