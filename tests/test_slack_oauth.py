"""Many workspaces: Bolt's OAuth install flow against the stand-in, isolation, and uninstall."""

from __future__ import annotations

import json

import pytest

from rlmap_bot.settings import Settings
from rlmap_bot.slack import preflight
from support.bot import ENCRYPTION_KEY, start_oauth_bot
from support.oauth import get, install
from support.standin import BOT_USER, mention


@pytest.fixture
def oauth_bot(standin, built_db, tmp_path):
    bot = start_oauth_bot(standin, built_db, tmp_path / "state.db")
    yield bot
    bot.stop()


def test_install_two_workspaces_and_answer_each_with_its_own_token(oauth_bot, standin):
    install(oauth_bot, "TA")
    install(oauth_bot, "TB")
    access = standin.of("oauth.v2.access")
    assert [c.args["code"] for c in access] == ["code-TA", "code-TB"]
    store = oauth_bot.front.installations
    assert store.find_bot(enterprise_id=None, team_id="TA").bot_token == "xoxb-TA-installed"
    for team in ("TA", "TB"):
        oauth_bot.slack.event(
            mention(f"{team}.1", "PPO"),
            team=team,
        )
    posts = standin.wait_for("chat.postMessage", count=2)
    by_thread = {c.args["thread_ts"]: c.headers["authorization"] for c in posts}
    assert by_thread == {"TA.1": "Bearer xoxb-TA-installed", "TB.1": "Bearer xoxb-TB-installed"}


def test_a_replayed_or_forged_oauth_state_is_refused(oauth_bot, standin):
    status, _, _ = get(
        f"{oauth_bot.url}/slack/oauth_redirect?code=code-TX&state=forged",
        "slack-app-oauth-state=forged",
    )
    assert status >= 400
    assert standin.of("oauth.v2.access") == []


def test_workspaces_cannot_reach_each_other(oauth_bot, standin):
    install(oauth_bot, "TA")
    install(oauth_bot, "TB")
    oauth_bot.slack.command("digest subscribe", team="TA", channel="C1", respond_as="sa")
    standin.wait_for("response_url", lambda c: c.target == "sa")
    oauth_bot.slack.command("digest list", team="TB", channel="C1", respond_as="lb")
    listing = standin.wait_for("response_url", lambda c: c.target == "lb")[0].args["text"]
    assert "No channel in this workspace" in listing
    oauth_bot.slack.command("digest now", team="TB", channel="C1", respond_as="nb")
    assert (
        "no digest subscription"
        in standin.wait_for("response_url", lambda c: c.target == "nb")[0].args["text"]
    )
    # A diagnosis in workspace A; a click from workspace B with A's session id is refused.
    oauth_bot.slack.command("diagnose", team="TA", channel="C9", respond_as="da")
    card = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "C9", count=2)[1]
    blocks = (
        card.args["blocks"]
        if isinstance(card.args["blocks"], list)
        else json.loads(card.args["blocks"])
    )
    skip = next(
        e
        for b in blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == "diag_skip"
    )
    oauth_bot.slack.click("diag_skip", skip["value"], team="TB", channel="C9", respond_as="cross")
    refused = standin.wait_for("response_url", lambda c: c.target == "cross")[0]
    assert "no longer exists" in refused.args["text"]
    session = json.loads(skip["value"])["s"]
    assert (
        oauth_bot.front.core.state.sessions.get(session).answers == {}
        and oauth_bot.front.core.state.sessions.get(session).history == []
    )
    assert oauth_bot.front.core.state.sessions.find("TB", "C9", card.args["thread_ts"]) is None


def test_uninstall_removes_tokens_and_subscriptions(oauth_bot, standin):
    install(oauth_bot, "TA")
    install(oauth_bot, "TB")
    for team in ("TA", "TB"):
        oauth_bot.slack.command("digest subscribe", team=team, channel="C1", respond_as=f"s{team}")
        standin.wait_for("response_url", lambda c, t=team: c.target == f"s{t}")
    oauth_bot.slack.event({"type": "app_uninstalled"}, team="TA")
    state = oauth_bot.front.core.state
    store = oauth_bot.front.installations
    import time

    deadline = time.time() + 10
    while (
        state.subscriptions.get("TA", "C1") is not None and time.time() < deadline
    ):  # the last step
        time.sleep(0.05)
    assert store.find_bot(enterprise_id=None, team_id="TA") is None
    assert state.subscriptions.get("TA", "C1") is None
    assert state.subscriptions.get("TB", "C1") is not None
    assert store.find_bot(enterprise_id=None, team_id="TB") is not None
    # Workspace B loses only a revoked bot token's data when it revokes.
    oauth_bot.slack.event({"type": "tokens_revoked", "tokens": {"bot": [BOT_USER]}}, team="TB")
    deadline = time.time() + 10
    while state.subscriptions.get("TB", "C1") is not None and time.time() < deadline:
        time.sleep(0.05)
    assert (
        state.subscriptions.get("TB", "C1") is None
        and store.find_bot(enterprise_id=None, team_id="TB") is None
    )


def test_oauth_needs_http_and_a_secret():
    from rlmap_bot.errors import ConfigError

    with pytest.raises(ConfigError, match="needs HTTP mode"):
        preflight.require(Settings(slack_client_id="x", slack_client_secret="y"), http=False)
    with pytest.raises(ConfigError, match="SLACK_CLIENT_SECRET"):
        preflight.require(
            Settings(
                slack_client_id="x", slack_signing_secret="s", rlmap_encryption_key=ENCRYPTION_KEY
            ),
            http=True,
        )
    with pytest.raises(ConfigError, match="RLMAP_ENCRYPTION_KEY"):
        preflight.require(
            Settings(slack_client_id="x", slack_client_secret="y", slack_signing_secret="s"),
            http=True,
        )
    assert preflight.require(
        Settings(
            slack_client_id="x",
            slack_client_secret="y",
            slack_signing_secret="s",
            rlmap_encryption_key=ENCRYPTION_KEY,
        ),
        http=True,
    )
