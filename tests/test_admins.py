"""Admins per workspace: Slack's own admins and owners (users.info), plus the people
RLMAP_ADMINS names for that workspace; never one list for every workspace. The real Bolt app
over signed requests against the Slack stand-in (which answers users.info as Slack does)."""

from __future__ import annotations

import html
import json
import logging

import pytest

from rlmap_bot.errors import ConfigError
from rlmap_bot.settings import Settings
from rlmap_bot.slack.admins import TTL_S, WorkspaceAdmins, parse_admins
from support.bot import ENCRYPTION_KEY, start_bot
from support.oauth import install
from support.slackio import blocks_of, text_of
from support.standin import SIGNING_SECRET, TEAM


def answer(bot, standin, text: str, user: str, name: str, team: str = TEAM) -> str:
    bot.slack.command(text, user=user, respond_as=name, team=team)
    [call] = standin.wait_for("response_url", lambda c: c.target == name, timeout=15)
    return call.args.get("text", "") + "\n" + text_of(blocks_of(call))


def allowed(said: str) -> bool:
    assert "Only the admins" in said or "tracker credentials" in said.lower(), said
    return "Only the admins" not in said


def test_rlmap_admins_are_per_workspace_and_a_bare_id_is_not_an_admin_everywhere(
    standin, built_db, tmp_path, caplog
):
    caplog.set_level(logging.WARNING)
    bot = start_bot(
        standin,
        built_db,
        tmp_path / "state.db",
        http=True,
        slack_bot_token=None,
        slack_client_id="client-id",
        slack_client_secret="client-secret",
        slack_signing_secret=SIGNING_SECRET,
        rlmap_encryption_key=ENCRYPTION_KEY,
        rlmap_admins="TA:UADMIN, UBARE",
    )
    try:
        assert "RLMAP_ADMINS names UBARE without a workspace" in caplog.text
        install(bot, "TA")
        install(bot, "TB")
        assert allowed(answer(bot, standin, "credentials list", "UADMIN", "a-in-a", team="TA"))
        assert not allowed(answer(bot, standin, "credentials list", "UADMIN", "a-in-b", team="TB"))
        for team in ("TA", "TB"):
            said = answer(bot, standin, "credentials list", "UBARE", f"bare-{team}", team=team)
            assert not allowed(said), "a bare id would be an admin of every workspace"
    finally:
        bot.stop()


def test_slacks_own_admins_and_owners_are_admins_of_their_own_workspace_only(
    standin, built_db, tmp_path
):
    standin.people.update(
        {
            "UOWNER": {"is_owner": True, "is_primary_owner": True},
            "USLACKADMIN": {"is_admin": True},
            "UFOREIGN": {"is_admin": True, "team_id": "TOTHERORG"},  # through a shared channel
            "UGONE": {"is_admin": True, "deleted": True},
        }
    )
    bot = start_bot(standin, built_db, tmp_path / "state.db", http=True, rlmap_admins="")
    try:
        for user, expected in [
            ("UOWNER", True),
            ("USLACKADMIN", True),
            ("UFOREIGN", False),
            ("UGONE", False),
            ("U1", False),
        ]:
            said = answer(bot, standin, "credentials list", user, user)
            assert allowed(said) is expected, (user, said)
        # App Home shows the credentials section to Slack's admin, not to a member.
        for user, shown in (("USLACKADMIN", True), ("U1", False)):
            bot.slack.event(
                {"type": "app_home_opened", "user": user, "channel": "D", "tab": "home"}
            )
            [home] = standin.wait_for(
                "views.publish", lambda c, u=user: c.args.get("user_id") == u, timeout=15
            )
            view = home.args["view"]
            view = json.loads(view) if isinstance(view, str) else view
            assert ("Tracker credentials" in html.unescape(text_of(view["blocks"]))) is shown
    finally:
        bot.stop()


def test_slacks_answer_is_kept_a_while_and_a_failed_look_up_is_not(standin, built_db, tmp_path):
    standin.people["UOWNER"] = {"is_owner": True}
    bot = start_bot(standin, built_db, tmp_path / "state.db", http=True, rlmap_admins="T0001:UL")
    now = [1000.0]
    bot.front.commands.admins.clock = lambda: now[0]
    asked = lambda: len([c for c in standin.of("users.info") if c.args["user"] == "UOWNER"])  # noqa: E731
    try:
        answer(bot, standin, "stages", "UOWNER", "plain")
        assert asked() == 0, "a command that needs no admin asks Slack nothing"
        assert allowed(answer(bot, standin, "credentials list", "UOWNER", "first"))
        standin.people["UOWNER"]["is_owner"] = False  # Slack removes the role
        now[0] += TTL_S - 1
        assert allowed(answer(bot, standin, "credentials list", "UOWNER", "kept"))
        assert asked() == 1, "answered from what Slack said a moment ago"
        now[0] += 2
        assert not allowed(answer(bot, standin, "credentials list", "UOWNER", "expired"))
        assert asked() == 2
        # Slack does not answer: not a Slack admin this once; RLMAP_ADMINS still counts.
        standin.people["UOWNER"]["is_owner"] = True
        now[0] += TTL_S + 1
        standin.fail_next("users.info", "missing_scope")
        assert not allowed(answer(bot, standin, "credentials list", "UOWNER", "failed"))
        assert allowed(answer(bot, standin, "credentials list", "UOWNER", "again"))
        before = len(standin.of("users.info"))
        assert allowed(answer(bot, standin, "credentials list", "UL", "listed"))
        assert len(standin.of("users.info")) == before, "listed for this workspace: Slack not asked"
    finally:
        bot.stop()


def test_the_setting_reads_workspace_and_user_ids_and_names_a_bad_entry():
    assert parse_admins("T0001:U1, T0001:U2,T0002:U1, UOLD") == {
        "T0001": frozenset({"U1", "U2"}),
        "T0002": frozenset({"U1"}),
        "": frozenset({"UOLD"}),
    }
    assert parse_admins("") == {}
    with pytest.raises(ConfigError, match="RLMAP_ADMINS: 'T1:alice' is not WORKSPACE:USER"):
        WorkspaceAdmins(Settings(rlmap_admins="T0001:U1, T1:alice"))
