"""No secret written in clear anywhere: the raw bytes of the state store after keys are set,
refused and mistyped, over the real Bolt app against the Slack stand-in.

Slack's requests are claimed with their body before any work, and a slash command's body is
its text, key included. Each test sends keys every way they can arrive (a slash command that
sets one, one refused to a member who is not an admin, a mistyped command, a mention, a click
carrying typed text, the App Home form) and reads the bytes of every file of the SQLite store
(main, WAL, journal; ``secure_delete`` off, as SQLite is often built) or a ``pg_dump`` of the
PostgreSQL database, while the requests are still in flight (held at the stand-in) and after.
"""

from __future__ import annotations

import json
import logging
import subprocess
import threading
import time
from pathlib import Path

import sqlalchemy as sa

from rlmap_bot.crypto import new_key
from support.standin import BOT_USER

# A W&B key is 40 hex characters; an MLflow token is anything. One per way in, so a find says which.
SECRETS = {
    "set": "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
    "refused": "1b2c3d4e5f60718293a4b5c6d7e8f90123456789",
    "mistyped_command": "2c3d4e5f60718293a4b5c6d7e8f9012345678901",
    "mistyped_tracker": "3d4e5f60718293a4b5c6d7e8f901234567890123",
    "mlflow": "mlflow-Tok_9Qz4.like/anything+at-all",
    "mention": "4e5f60718293a4b5c6d7e8f90123456789012345",
    "click": "5f60718293a4b5c6d7e8f9012345678901234567",
    "modal": "60718293a4b5c6d7e8f901234567890123456789",
}


def found_in(data: bytes) -> list[str]:
    return [name for name, secret in SECRETS.items() if secret.encode() in data]


def sqlite_files(state: Path) -> dict[str, bytes]:
    files = [state, Path(f"{state}-wal"), Path(f"{state}-journal"), Path(f"{state}-shm")]
    return {p.name: p.read_bytes() for p in files if p.exists()}


def pg_dump(url: str) -> bytes:
    libpq = sa.engine.make_url(url).set(drivername="postgresql")
    out = subprocess.run(
        ["pg_dump", "--no-owner", libpq.render_as_string(hide_password=False)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    return out.stdout


def secure_delete_off(engine: sa.Engine) -> None:
    """Every connection of the bot's from now on with SQLite's secure_delete off."""

    def off(dbapi_conn, _record) -> None:
        dbapi_conn.execute("PRAGMA secure_delete=OFF")

    sa.event.listen(engine, "connect", off)
    engine.dispose()
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA secure_delete").scalar() == 0


def form(secret: str) -> dict:
    return {
        "tracker": {"tracker": {"type": "static_select", "selected_option": {"value": "wandb"}}},
        "action": {"action": {"type": "radio_buttons", "selected_option": {"value": "set"}}},
        "secret": {"secret": {"type": "plain_text_input", "value": secret}},
    }


def kept_bodies(bot) -> int:
    """How many claims keep a request body now (unfinished ones)."""
    with bot.front.core.state.engine.connect() as conn:
        return conn.exec_driver_sql(
            "select count(*) from event_claims where body is not null"
        ).scalar()


class Held:
    """Replies held at the stand-in until the test has looked: the request's claim is in flight
    (unfinished, its body kept) for as long as the look takes."""

    def __init__(self, bot, standin, methods=("response_url", "chat.postEphemeral")):
        self.bot, self.standin, self.gate = bot, standin, threading.Event()
        standin.gates.update({m: self.gate for m in methods})

    def look(self, method: str, where, look) -> tuple[int, list[str]]:
        """Wait for the held reply, count the kept bodies, ``look()``, then let the reply go."""
        self.standin.wait_for(method, where, timeout=30)
        kept, seen = kept_bodies(self.bot), look()
        self.gate.set()
        deadline = time.time() + 30
        while kept_bodies(self.bot) and time.time() < deadline:  # the claim finishes
            time.sleep(0.05)
        self.gate.clear()
        return kept, seen

    def release(self) -> None:
        self.gate.set()
        self.standin.gates.clear()


def send_every_way(bot, standin, look) -> list[tuple[str, list[str]]]:
    """Send each secret its way; ``look()`` the store while each request is in flight."""
    seen = []
    in_flight = []
    held = Held(bot, standin)
    typed = [
        ("set", "UADMIN", f"credentials set wandb {SECRETS['set']}"),
        ("refused", "U1", f"credentials set wandb {SECRETS['refused']}"),
        ("mistyped_command", "UADMIN", f"credentails set wandb {SECRETS['mistyped_command']}"),
        ("mistyped_tracker", "UADMIN", f"credentials set wnadb {SECRETS['mistyped_tracker']}"),
        ("mlflow", "UADMIN", f"credentials set mlflow {SECRETS['mlflow']}"),
    ]
    try:
        for name, user, text in typed:
            bot.slack.command(text, user=user, respond_as=name)
            kept, found = held.look("response_url", lambda c, n=name: c.target == n, look)
            in_flight.append(kept)
            seen.append((name, found))
        mention = f"<@{BOT_USER}> credentials set wandb {SECRETS['mention']}"
        bot.slack.event(
            {"type": "app_mention", "user": "UADMIN", "channel": "C1", "ts": "9.1", "text": mention}
        )
        kept, found = held.look("chat.postEphemeral", lambda c: True, look)
        in_flight.append(kept)
        seen.append(("mention", found))
        typed_in = {"b": {"note": {"type": "plain_text_input", "value": SECRETS["click"]}}}
        bot.slack.click("stages_show", "stages", respond_as="click", state=typed_in)
        kept, found = held.look("response_url", lambda c: c.target == "click", look)
        in_flight.append(kept)
        seen.append(("click", found))
    finally:
        held.release()
    form_values = form(SECRETS["modal"])
    status, body = bot.slack.submit_view("credentials_form", "", form_values, "UADMIN")
    assert status == 200 and json.loads(body)["response_action"] == "update"
    seen.append(("modal", look()))
    standin.settle()
    assert all(in_flight), "each request's claim kept its body while it was looked at"
    return seen


def keyed_bot(standin, built_db, state, monkeypatch):
    from support.bot import start_bot

    key = new_key()
    monkeypatch.setenv("RLMAP_ENCRYPTION_KEY", key)  # the core's settings come from the environment
    return start_bot(standin, built_db, state, http=True, rlmap_encryption_key=key)


def stored(bot) -> set[str]:
    return {name for name, _, _ in bot.front.core.state.credentials.names("T0001")}


def test_no_key_in_the_sqlite_files_in_flight_or_after(
    standin, built_db, tmp_path, monkeypatch, caplog
):
    caplog.set_level(logging.DEBUG)
    state = tmp_path / "state.db"
    bot = keyed_bot(standin, built_db, state, monkeypatch)
    try:
        secure_delete_off(bot.front.core.state.engine)
        seen = send_every_way(
            bot,
            standin,
            lambda: [f"{n}: {f}" for n, d in sqlite_files(state).items() for f in found_in(d)],
        )
        assert stored(bot) == {"WANDB_API_KEY", "MLFLOW_TRACKING_TOKEN"}, "the keys were set"
        after = {n: found_in(d) for n, d in sqlite_files(state).items()}
    finally:
        bot.stop()
    stopped = {n: found_in(d) for n, d in sqlite_files(state).items()}
    assert [(name, found) for name, found in seen if found] == [], "in flight"
    assert all(not f for f in after.values()), after
    assert all(not f for f in stopped.values()), stopped
    assert found_in(caplog.text.encode()) == []
    outgoing = json.dumps([c.args for c in standin.calls]).encode()
    assert found_in(outgoing) == [], "in no reply, post or form"


def test_no_key_in_a_postgresql_dump_in_flight_or_after(
    standin, built_db, pg_url, monkeypatch, caplog
):
    caplog.set_level(logging.DEBUG)
    bot = keyed_bot(standin, built_db, pg_url, monkeypatch)
    try:
        seen = send_every_way(bot, standin, lambda: found_in(pg_dump(pg_url)))
        assert stored(bot) == {"WANDB_API_KEY", "MLFLOW_TRACKING_TOKEN"}, "the keys were set"
        dump = pg_dump(pg_url)
        assert b"event_claims" in dump and b"workspace_credentials" in dump
        after = found_in(dump)
    finally:
        bot.stop()
    assert [(name, found) for name, found in seen if found] == [], "in flight"
    assert after == []
    assert found_in(caplog.text.encode()) == []


def test_without_an_encryption_key_a_refused_key_is_still_not_kept(
    standin, built_db, tmp_path, caplog
):
    """No RLMAP_ENCRYPTION_KEY (one workspace): setting a key is refused, and the request that
    carried it is kept sealed under the key derived from the bot token while in flight."""
    from support.bot import start_bot

    state = tmp_path / "state.db"
    bot = start_bot(standin, built_db, state)
    try:
        secure_delete_off(bot.front.core.state.engine)
        held = Held(bot, standin)
        bot.slack.command(f"credentials set wandb {SECRETS['set']}", user="UADMIN", respond_as="k")
        try:
            kept, in_flight = held.look(
                "response_url",
                lambda c: c.target == "k",
                lambda: {n: found_in(d) for n, d in sqlite_files(state).items()},
            )
        finally:
            held.release()
        [said] = standin.of("response_url")
        assert "RLMAP_ENCRYPTION_KEY first" in said.args["text"]
        with bot.front.core.state.engine.connect() as conn:
            kinds = conn.exec_driver_sql("select kind, status from event_claims").all()
    finally:
        bot.stop()
    assert kept == 1, "the request was kept while in flight (sealed: no file holds the key)"
    assert [tuple(k) for k in kinds] == [("command", "done")], "and answered once"
    assert all(not f for f in in_flight.values()), in_flight
    assert all(not f for f in ({n: found_in(d) for n, d in sqlite_files(state).items()}).values())
