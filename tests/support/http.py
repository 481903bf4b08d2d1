"""Plain HTTP reads of a running bot: health, readiness, metrics."""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request


def get(url: str, timeout: float = 5) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus' text format (0 when the sample is absent)."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        found = re.fullmatch(r"([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)", line)
        if not found or found.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', found.group(3) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            return float(found.group(4))
    return 0.0


def stop_server(server, thread: threading.Thread) -> None:
    """Stop a waitress server running ``server.run()`` in ``thread``, and wait for it.

    Everything it holds (listening socket, trigger, open connections) is closed from inside its own
    loop, through waitress's trigger: closed from
    another thread, the loop can be in select() on those
    sockets and die with EBADF (an unhandled thread
    exception pytest pins on a later test), or sit out
    its 1 s select timeout.
    """
    from waitress import wasyncore

    server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
    thread.join(timeout=10)
    assert not thread.is_alive(), "the waitress loop did not stop"
