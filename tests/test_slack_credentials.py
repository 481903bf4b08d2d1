"""Tracker credentials in the running Slack app: re-sealed under the current key when the app
starts, and set or cleared by an admin from App Home.  The real Bolt app over real signed HTTP,
against the Slack Web API stand-in."""

from __future__ import annotations

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
        assert again.front.reseal_credentials() == 0
    finally:
        again.stop()
