"""How the stand-ins (Slack's Web API, arXiv's API) serve: a threaded HTTP server on a free port of
127.0.0.1, its handler given by the stand-in, stopped within one short poll."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietServer(ThreadingHTTPServer):
    """A client killed mid-call leaves its answer nowhere
    to go: that is expected, not worth a traceback.
    """

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


class LocalServer:
    """The serving half of a stand-in: ``serve(Handler)``, ``origin``, ``stop()``."""

    server: QuietServer | None = None

    def serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = QuietServer(("127.0.0.1", 0), handler)
        # A short poll: stop() (shutdown) returns within
        # it, instead of up to half a second per test.
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    @property
    def origin(self) -> str:
        assert self.server is not None, "serve() first"
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"
