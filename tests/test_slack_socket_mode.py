"""Socket Mode: a local WebSocket stand-in hands the bot envelopes; the bot acks and replies."""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid

import pytest
from websockets.sync.server import serve

from rlmap_bot.core import Core
from rlmap_bot.settings import Settings
from rlmap_bot.slack.app import SlackFrontEnd
from support import KNOWLEDGE
from support.standin import BOT_TOKEN, BOT_USER, TEAM


class SocketStandIn:
    """Plays Slack's side of Socket Mode: hello, envelopes out, acks in."""

    def __init__(self):
        self.acks: queue.Queue[dict] = queue.Queue()
        self.outbox: queue.Queue[dict] = queue.Queue()
        self.connected = threading.Event()
        self.server = serve(self.handle, "127.0.0.1", 0)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.server.socket.getsockname()[1]}/link"

    def handle(self, ws) -> None:
        ws.send(json.dumps({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"},
                            "debug_info": {"host": "standin"}}))
        self.connected.set()
        while True:
            try:
                envelope = self.outbox.get(timeout=0.05)
                ws.send(json.dumps(envelope))
            except queue.Empty:
                pass
            try:
                message = ws.recv(timeout=0.05)
            except TimeoutError:
                continue
            except Exception:  # noqa: BLE001 - the client went away
                return
            data = json.loads(message)
            if "envelope_id" in data:
                self.acks.put(data)

    def send(self, envelope_type: str, payload: dict, accepts_response_payload: bool = False) -> str:
        envelope_id = str(uuid.uuid4())
        self.outbox.put({"envelope_id": envelope_id, "type": envelope_type, "payload": payload,
                         "accepts_response_payload": accepts_response_payload, "retry_attempt": 0,
                         "retry_reason": ""})
        return envelope_id

    def ack_for(self, envelope_id: str, timeout: float = 10) -> dict:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                ack = self.acks.get(timeout=0.2)
            except queue.Empty:
                continue
            if ack["envelope_id"] == envelope_id:
                return ack
        raise AssertionError(f"no ack for {envelope_id}")

    def stop(self) -> None:
        self.server.shutdown()


@pytest.fixture
def socket_bot(standin, built_db, tmp_path):
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    ws = SocketStandIn()
    standin.ws_url = ws.url
    settings = Settings(slack_bot_token=BOT_TOKEN, slack_app_token="xapp-test-app-token",
                             slack_api_url=standin.base_url)
    front = SlackFrontEnd(Core(KNOWLEDGE, built_db, state_url=tmp_path / "state.db"), settings)
    handler = SocketModeHandler(front.app, settings.slack_app_token.get_secret_value())
    handler.connect()
    assert ws.connected.wait(10), "the bot never connected to the WebSocket stand-in"
    yield ws
    handler.close()
    ws.stop()


def test_socket_mode_event_is_acked_and_answered(socket_bot, standin):
    opened = standin.wait_for("apps.connections.open")[0]
    assert opened.headers["authorization"] == "Bearer xapp-test-app-token"
    envelope = socket_bot.send("events_api", {
        "type": "event_callback", "team_id": TEAM, "api_app_id": "A1", "event_id": "EvSocket1",
        "event": {"type": "app_mention", "user": "U1", "channel": "C1", "ts": "77.1",
                  "text": f"<@{BOT_USER}> what is DAPO?"},
    })
    assert socket_bot.ack_for(envelope) == {"envelope_id": envelope}
    reply = standin.wait_for("chat.postMessage")[0]
    assert reply.args["thread_ts"] == "77.1"
    assert "DAPO" in json.dumps(reply.args["blocks"])


def test_socket_mode_slash_command(socket_bot, standin):
    envelope = socket_bot.send("slash_commands", {
        "token": "legacy", "team_id": TEAM, "channel_id": "C1", "user_id": "U1", "command": "/rlmap",
        "text": "ask what is in the payload of a reward model?", "response_url": standin.response_url("sock"),
        "trigger_id": "1.2",
    }, accepts_response_payload=True)
    assert socket_bot.ack_for(envelope)["envelope_id"] == envelope
    reply = standin.wait_for("response_url")[0]
    assert reply.args["response_type"] == "ephemeral" and reply.args["blocks"]
