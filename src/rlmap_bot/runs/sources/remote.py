"""What the tracker readers (MLflow, Trackio, W&B's API) share: JSON over HTTP with one-line errors,
a store opened read-only, and the clamp MLflow applies to infinities (what they may read is
:mod:`rlmap_bot.runs.sources.access`'s).

Every message built here names a server by scheme, host and port only (never a user, password,
token or query string), and every credential the reader was given is replaced by ``[redacted]``
in any text that leaves it, so an error cannot carry a secret even when a server echoes one.
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterable

from rlmap_bot.runs.errors import RunReadError

#: The largest double: MLflow's SQL store writes +-inf as this (and NaN as 0 with ``is_nan``).
DOUBLE_MAX = 1.7976931348623157e308
#: Judgement: a tracking server answers a metric page in well under a second on a LAN; ten times
#: that is an outage (the check is retried later), not a slow day.
HTTP_TIMEOUT_SECONDS = 10.0


def tracker_value(value: Any) -> float | None:
    """A tracker's stored scalar as a float: JSON's
    ``"NaN"``/``"Infinity"`` strings, the clamped max.
    """
    if isinstance(value, str):
        try:
            value = float(value)  # "NaN", "Infinity", "-Infinity" as protobuf's JSON writes them
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    if math.isfinite(value) and abs(value) >= DOUBLE_MAX:
        return math.copysign(math.inf, value)
    return value


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL: what a message may show of it."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")


def host_of(url: str) -> tuple[str, int | None]:
    parts = urllib.parse.urlsplit(url)
    return (parts.hostname or "").lower(), parts.port


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every credential value replaced (longest
    first), for any message built from outside text.
    """
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, "[redacted]")
    return text


class Http:
    """GET JSON from one server with its credentials;
    every failure is one :class:`RunReadError` line.
    """

    def __init__(self, base: str, what: str, headers: dict[str, str], secrets: Iterable[str]):
        self.base = base.rstrip("/")
        self.what = what  # "the MLflow tracking server at http://127.0.0.1:5000"
        self.headers = headers
        self.secrets = [s for s in secrets if s]
        self.requests = 0  # over this object's life: what a check costs

    def get(self, path: str, params: dict[str, Any] | list[tuple[str, Any]]) -> dict:
        url = f"{self.base}{path}?{urllib.parse.urlencode(params)}"
        return self._send(
            urllib.request.Request(url, headers={"Accept": "application/json", **self.headers})
        )

    def post(self, path: str, body: dict[str, Any]) -> dict:
        """POST a JSON body (the endpoints that take one, such as MLflow's runs/search)."""
        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        return self._send(
            urllib.request.Request(
                f"{self.base}{path}",
                data=json.dumps(body).encode(),
                headers={**headers, **self.headers},
                method="POST",
            )
        )

    def _send(self, request: urllib.request.Request) -> dict:
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_SECONDS) as response:  # noqa: S310 - configured URL
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise RunReadError(
                scrub(
                    f"{self.what} is not answering ({reason}); the read can be retried",
                    self.secrets,
                )
            ) from None
        except ValueError:
            raise RunReadError(
                f"{self.what} sent an answer that is not JSON; is the URL a tracking server?"
            ) from None

    def _http_error(self, exc: urllib.error.HTTPError) -> RunReadError:
        try:
            body = json.loads(exc.read() or b"{}")
        except ValueError:
            body = {}
        message = body.get("message") if isinstance(body, dict) else None
        if exc.code in (401, 403):
            text = (
                f"{self.what} refused the credentials (HTTP {exc.code}); an admin sets them per "
                f"workspace"
            )
        elif exc.code == 404 and message:
            text = f"{self.what}: {message}"
        else:
            text = f"{self.what} answered HTTP {exc.code}" + (f": {message}" if message else "")
        error = RunReadError(scrub(" ".join(str(text).split())[:300], self.secrets))
        error.status = exc.code  # a caller may tell "no such thing" (404) from the rest
        return error


def bearer_or_basic(token: str | None, user: str | None, password: str | None) -> dict[str, str]:
    """The Authorization header MLflow's client sends: a bearer token, else HTTP basic auth."""
    if token:
        return {"Authorization": f"Bearer {token}"}
    if user and password:
        pair = base64.b64encode(f"{user}:{password}".encode()).decode()
        return {"Authorization": f"Basic {pair}"}
    return {}


#: Judgement: a tracker's writer holds SQLite's lock for one batch (milliseconds); five seconds of
#: "locked" is a stuck writer, said as a retryable outage.
SQLITE_BUSY_SECONDS = 5.0


def open_store(path: Path, source: str, what: str) -> sqlite3.Connection:
    """A tracker's SQLite store opened read-only (its WAL still read: never ``immutable``);
    RunReadError, one line, when it cannot be."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=SQLITE_BUSY_SECONDS)
        conn.execute("select 1 from sqlite_master limit 1")
        return conn
    except sqlite3.Error as exc:
        raise RunReadError(f"{source}: cannot open the {what} store {path}: {exc}") from None
