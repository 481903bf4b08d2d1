"""A real ``mlflow server`` on 127.0.0.1 (SQLite backend) that a test can stop and start again on
the same port and store, as a tracker taken down for maintenance and brought back."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

#: Judgement: several times the slowest start measured on 2 loaded cores (10-40 s).
START_TIMEOUT = 180.0
#: The server's own job runner (a second process, huey's consumer, for MLflow's GenAI jobs) is
#: switched off: nothing here runs MLflow jobs, and the tracking API the tests read is served the
#: same. Measured on 2 cores: a fresh start 16-22 s with it, 6-7 s without.
SERVER_ENV = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
#: How often a starting server is asked for /health (it answers within a second or so of listening).
POLL = 0.1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MlflowServer:
    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> MlflowServer:
        mlflow_bin = Path(sys.executable).with_name("mlflow")
        log = open(self.folder / "server.log", "ab")
        self.proc = subprocess.Popen(
            [
                str(mlflow_bin),
                "server",
                "--backend-store-uri",
                f"sqlite:///{self.folder}/mlflow.db",
                "--default-artifact-root",
                str(self.folder / "artifacts"),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--workers",
                "1",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **SERVER_ENV},
        )
        log.close()
        started = time.monotonic()
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() - started > START_TIMEOUT:
                self.stop()
                raise RuntimeError(
                    "mlflow server did not start: "
                    + (self.folder / "server.log").read_text()[-2000:]
                )
            time.sleep(POLL)

    def stop(self) -> None:
        """Stop it (its workers too): new connections to its port are refused."""
        import signal

        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)
        # The port is closed once every worker of its process group has gone.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) != 0:
                    return
            time.sleep(0.2)
