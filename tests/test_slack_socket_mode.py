"""Socket Mode: a local WebSocket stand-in hands the bot envelopes; the bot acks and replies."""

from __future__ import annotations

import json

import pytest

from rlmap_bot.core import Core
from rlmap_bot.settings import Settings
from rlmap_bot.slack.app import SlackFrontEnd
from rlmap_bot.slack.serve import SocketModeRunner
from support import KNOWLEDGE
from support.socketmode import SocketStandIn
from support.standin import BOT_TOKEN, TEAM, mention


def _mention(event_id: str, ts: str, text: str) -> dict:
    return {
        "type": "event_callback",
        "team_id": TEAM,
        "api_app_id": "A1",
        "event_id": event_id,
        "event": mention(ts, text),
    }


@pytest.fixture
def socket_bot(standin, built_db, tmp_path):
    ws = SocketStandIn()
    standin.ws_url = ws.url
    settings = Settings(
        slack_bot_token=BOT_TOKEN,
        slack_app_token="xapp-test-app-token",
        slack_api_url=standin.base_url,
    )
    front = SlackFrontEnd(Core(KNOWLEDGE, built_db, state_url=tmp_path / "state.db"), settings)
    handler = SocketModeRunner(
        front.app, settings.slack_app_token.get_secret_value(), standin.base_url
    )  # as `serve`
    handler.connect()
    assert ws.wait_for_links(1), "the bot never connected to the WebSocket stand-in"
    yield ws
    handler.close()
    ws.stop()


def test_socket_mode_event_is_acked_and_answered(socket_bot, standin):
    opened = standin.wait_for("apps.connections.open")[0]
    assert opened.headers["authorization"] == "Bearer xapp-test-app-token"
    envelope = socket_bot.send(
        "events_api",
        {
            "type": "event_callback",
            "team_id": TEAM,
            "api_app_id": "A1",
            "event_id": "EvSocket1",
            "event": mention("77.1", "what is DAPO?"),
        },
    )
    assert socket_bot.ack_for(envelope) == {"envelope_id": envelope}
    reply = standin.wait_for("chat.postMessage")[0]
    assert reply.args["thread_ts"] == "77.1"
    assert "DAPO" in json.dumps(reply.args["blocks"])


def test_socket_mode_slash_command(socket_bot, standin):
    envelope = socket_bot.send(
        "slash_commands",
        {
            "token": "legacy",
            "team_id": TEAM,
            "channel_id": "C1",
            "user_id": "U1",
            "command": "/rlmap",
            "text": "ask what is in the payload of a reward model?",
            "response_url": standin.response_url("sock"),
            "trigger_id": "1.2",
        },
        accepts_response_payload=True,
    )
    assert socket_bot.ack_for(envelope)["envelope_id"] == envelope
    reply = standin.wait_for("response_url")[0]
    assert reply.args["response_type"] == "ephemeral" and reply.args["blocks"]


def test_envelopes_on_a_refreshed_connection_are_acked_while_the_old_one_is_still_open(
    socket_bot, standin
):
    # Slack refreshes Socket Mode connections every few
    # hours: `disconnect` (refresh_requested) on the
    # old one, then events on the new one. The stand-in keeps the old connection open and silent for
    # less than Slack's ack deadline; slack-sdk's built-in client acks nothing on the new connection
    # until its read of the old one times out, so it fails this three times of three.
    for n in range(3):
        outcome = socket_bot.refresh_and_send(
            "events_api", _mention(f"EvRefresh{n}", f"80.{n}", "what is DAPO?")
        )
        assert outcome.acked, f"refresh {n}: the envelope on the new connection was never acked"
        assert outcome.acked_while_old_held, (
            f"refresh {n}: the ack waited until the stand-in closed the old connection"
        )
    answers = standin.wait_for("chat.postMessage", count=3)
    assert sorted(c.args["thread_ts"] for c in answers) == ["80.0", "80.1", "80.2"]
