"""Tracker credentials in the running Slack app: re-sealed under the current key when the app
starts, and set or cleared by an admin from App Home.  The real Bolt app over real signed HTTP,
against the Slack Web API stand-in."""

from __future__ import annotations

import html
import json
import logging

import sqlalchemy as sa

from rlmap_bot.crypto import TokenCipher, new_key
from rlmap_bot.state.store import StateStore
from support.slackio import blocks_of, text_of
from support.standin import TEAM

SECRET = "wandbsecret" + "fedcba9876543210" * 2


def _raw_values(store: StateStore) -> list[str]:
    with store.engine.connect() as conn:
        return [r[0] for r in conn.execute(sa.text("select value from workspace_credentials"))]


def test_credentials_sealed_under_an_old_key_are_resealed_once_at_start_and_still_read(
    standin, built_db, tmp_path, monkeypatch
):
    from support.bot import start_bot

    old, new = new_key(), new_key()
    state = tmp_path / "state.db"
    store = StateStore(state)
    store.credentials.set(TEAM, "WANDB_API_KEY", SECRET, TokenCipher.from_setting(old), "UADMIN")
    [before] = _raw_values(store)
    store.close()

    rotated = f"{new},{old}"  # the new key first, the old one after it
    monkeypatch.setenv("RLMAP_ENCRYPTION_KEY", rotated)
    bot = start_bot(standin, built_db, state, http=True, rlmap_encryption_key=rotated)
    try:
        [after] = _raw_values(bot.front.core.state)
        assert after != before and SECRET not in after
        assert bot.front.core.state.credentials.opened(TEAM, TokenCipher.from_setting(new)) == {
            "WANDB_API_KEY": SECRET
        }, "the new key alone opens it: the old key can be dropped"
        bot.slack.command("credentials list", user="UADMIN", respond_as="list")
        [call] = standin.wait_for("response_url", lambda c: c.target == "list", timeout=15)
        listed = call.args.get("text", "") + text_of(blocks_of(call))
        assert "WANDB_API_KEY" in listed and SECRET not in listed
    finally:
        bot.stop()

    monkeypatch.setenv("RLMAP_ENCRYPTION_KEY", new)
    again = start_bot(standin, built_db, state, http=True, rlmap_encryption_key=new)
    try:
        assert _raw_values(again.front.core.state) == [after], "a second start changes nothing"
        assert again.front.seal_at_start() == 0
    finally:
        again.stop()


def _view(call) -> dict:
    view = call.args["view"]
    return json.loads(view) if isinstance(view, str) else view


def _home(bot, standin, user: str) -> str:
    mine = lambda c: c.args.get("user_id") == user  # noqa: E731
    before = len([c for c in standin.of("views.publish") if mine(c)])
    bot.slack.event({"type": "app_home_opened", "user": user, "channel": "D5", "tab": "home"})
    published = standin.wait_for("views.publish", mine, timeout=15, count=before + 1)
    return html.unescape(text_of(_view(published[-1])["blocks"]))


def _form(tracker: str, action: str, secret: str | None) -> dict:
    """state.values as Slack sends them for the form's select, radio buttons and text input."""
    values = {
        "tracker": {"tracker": {"type": "static_select", "selected_option": {"value": tracker}}},
        "action": {"action": {"type": "radio_buttons", "selected_option": {"value": action}}},
        "secret": {"secret": {"type": "plain_text_input", "value": secret}},
    }
    return values


def _submitted(bot, user: str, values: dict) -> str:
    status, body = bot.slack.submit_view("credentials_form", "", values, user=user)
    assert status == 200, body
    answer = json.loads(body)
    assert answer["response_action"] == "update"
    return html.unescape(text_of(answer["view"]["blocks"]))  # mrkdwn escapes & < >


def test_an_admin_sets_and_clears_a_key_from_app_home_and_no_one_else_can(
    standin, built_db, tmp_path, monkeypatch, caplog
):
    from support.bot import start_bot

    caplog.set_level(logging.DEBUG)
    key = new_key()
    monkeypatch.setenv("RLMAP_ENCRYPTION_KEY", key)
    bot = start_bot(standin, built_db, tmp_path / "state.db", http=True, rlmap_encryption_key=key)
    state = bot.front.core.state
    try:
        home = _home(bot, standin, "UADMIN")
        assert "Tracker credentials" in home and "W&B API key: not set" in home, home
        assert "Tracker credentials" not in _home(bot, standin, "U1"), "admins only"

        bot.slack.click("credentials_open", "open", user="UADMIN", container="view")
        [opened] = standin.wait_for("views.open", timeout=15)
        form = _view(opened)
        assert form["callback_id"] == "credentials_form"
        inputs = [b["element"] for b in form["blocks"] if b["type"] == "input"]
        assert [e["type"] for e in inputs] == ["static_select", "radio_buttons", "plain_text_input"]
        assert "initial_value" not in inputs[2]

        said = _submitted(bot, "UADMIN", _form("wandb", "set", SECRET))
        assert "Stored this workspace's W&B API key" in said and SECRET not in said
        assert state.credentials.opened(TEAM, TokenCipher.from_setting(key)) == {
            "WANDB_API_KEY": SECRET
        }
        assert all(SECRET not in v for v in _raw_values(state))
        home = _home(bot, standin, "UADMIN")
        assert "W&B API key: set by <@UADMIN>" in home and SECRET not in home

        # A member who is not an admin: refused at the button and at the form, nothing stored.
        refused = _submitted(bot, "U1", _form("mlflow", "set", "mlflow-token-of-U1"))
        assert "Only the admins" in refused
        assert [n for n, _, _ in state.credentials.names(TEAM)] == ["WANDB_API_KEY"]
        bot.slack.click("credentials_open", "open", user="U1", container="view")
        refusal = standin.wait_for("views.open", count=2, timeout=15)[-1]
        assert "Only the admins" in text_of(_view(refusal)["blocks"])
        assert _submitted(bot, "U1", _form("wandb", "clear", None)).startswith("Only the admins")
        assert state.credentials.names(TEAM) != []

        cleared = _submitted(bot, "UADMIN", _form("wandb", "clear", None))
        assert "Removed this workspace's W&B API key" in cleared
        assert state.credentials.names(TEAM) == []
        assert "W&B API key: not set" in _home(bot, standin, "UADMIN")
    finally:
        bot.stop()
    assert SECRET not in caplog.text
    assert all(SECRET not in str(c.args) for c in standin.calls)
