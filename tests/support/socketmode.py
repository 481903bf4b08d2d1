"""Slack's side of Socket Mode over a real WebSocket
server: hello, envelopes out, acks in, refreshes.

A refresh plays what Slack does: it sends ``{"type": "disconnect", "reason": "refresh_requested"}``
on the open connection, keeps that connection open and silent (answering a close frame as any
server does), and expects the client to open a new one. :meth:`SocketStandIn.refresh_and_send`
then sends an envelope on the new connection and records whether its ack arrived while the stand-in
still held the old connection open, or only after the stand-in gave up holding it (``hold``
seconds, the stand-in's own bound). A client whose acks wait on the old connection's reads
finishing cannot ack before that.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field

from websockets.sync.server import ServerConnection, serve

# Slack wants an envelope acked within 3 s; the stand-in holds the old connection open for 2 s, less
# than that and than the built-in client's 3 s read timeout, and far more than the adapter `serve`
# uses needs (it acks on the new connection within milliseconds), so an ack that waits for the old
# connection to go away arrives only after the stand-in closed it.
HOLD_SECONDS = 2.0


@dataclass
class Link:
    """One client connection: what to send on it, and whether the stand-in has let it go."""

    ws: ServerConnection
    outbox: queue.Queue = field(default_factory=queue.Queue)
    released: threading.Event = field(default_factory=threading.Event)  # the stand-in closed it
    gone: threading.Event = field(default_factory=threading.Event)  # closed, by either side


@dataclass
class RefreshOutcome:
    envelope_id: str
    acked: bool
    acked_while_old_held: bool


class SocketStandIn:
    """Start with ``SocketStandIn()``; ``url`` is what the
    Web API stand-in's apps.connections.open returns.
    """

    def __init__(self) -> None:
        self.acks: queue.Queue[dict] = queue.Queue()
        self.links: list[Link] = []
        self._changed = threading.Condition()
        self.server = serve(self.handle, "127.0.0.1", 0)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.server.socket.getsockname()[1]}/link"

    def wait_for_links(self, count: int, timeout: float = 10) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: len(self.links) >= count, timeout)

    def handle(self, ws: ServerConnection) -> None:
        link = Link(ws)
        ws.send(
            json.dumps(
                {
                    "type": "hello",
                    "num_connections": 1,
                    "connection_info": {"app_id": "A1"},
                    "debug_info": {"host": "standin"},
                }
            )
        )
        with self._changed:
            self.links.append(link)
            self._changed.notify_all()
        try:
            while not link.released.is_set():
                try:
                    ws.send(json.dumps(link.outbox.get_nowait()))
                except queue.Empty:
                    pass
                try:
                    message = ws.recv(timeout=0.05)
                except TimeoutError:
                    continue
                data = json.loads(message)
                if "envelope_id" in data:
                    self.acks.put(data)
        except Exception:  # noqa: BLE001 - the client closed the connection
            pass
        finally:
            link.gone.set()
            ws.close()

    def send(
        self,
        envelope_type: str,
        payload: dict,
        accepts_response_payload: bool = False,
        link: Link | None = None,
    ) -> str:
        envelope_id = str(uuid.uuid4())
        target = link or self.links[-1]
        target.outbox.put(
            {
                "envelope_id": envelope_id,
                "type": envelope_type,
                "payload": payload,
                "accepts_response_payload": accepts_response_payload,
                "retry_attempt": 0,
                "retry_reason": "",
            }
        )
        return envelope_id

    def ack_for(self, envelope_id: str, timeout: float = 10) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                ack = self.acks.get(timeout=0.2)
            except queue.Empty:
                continue
            if ack["envelope_id"] == envelope_id:
                return ack
        raise AssertionError(f"no ack for {envelope_id}")

    def refresh_and_send(
        self, envelope_type: str, payload: dict, hold: float = HOLD_SECONDS
    ) -> RefreshOutcome:
        """Ask for a refresh, send an envelope on the new connection, and see when its ack comes."""
        old = self.links[-1]
        before = len(self.links)
        old.outbox.put(
            {"type": "disconnect", "reason": "refresh_requested", "debug_info": {"host": "standin"}}
        )
        assert self.wait_for_links(before + 1), (
            "the client did not open a new connection on refresh_requested"
        )
        envelope_id = self.send(envelope_type, payload, link=self.links[-1])
        held_until = time.monotonic() + hold
        while time.monotonic() < held_until:
            if self._take_ack(envelope_id, timeout=0.05):
                return RefreshOutcome(envelope_id, acked=True, acked_while_old_held=True)
        old.released.set()  # the stand-in stops holding the old connection: it closes it
        acked = any(self._take_ack(envelope_id, timeout=0.2) for _ in range(50))
        return RefreshOutcome(envelope_id, acked=acked, acked_while_old_held=False)

    def _take_ack(self, envelope_id: str, timeout: float) -> bool:
        try:
            ack = self.acks.get(timeout=timeout)
        except queue.Empty:
            return False
        if ack["envelope_id"] == envelope_id:
            return True
        self.acks.put(ack)
        return False

    def stop(self) -> None:
        for link in self.links:
            link.released.set()
        self.server.shutdown()


__all__ = ["SocketStandIn", "RefreshOutcome", "HOLD_SECONDS"]
