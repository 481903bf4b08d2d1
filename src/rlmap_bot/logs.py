"""Logging for the running bot: human-readable lines, or one JSON object a line; secrets never.

``RLMAP_LOG_FORMAT=json`` writes each record as one JSON object (``time``, ``level``,
``logger``, ``message``, and ``traceback`` when there is one, as a single string),
for a log collector; the default is one plain line a record. Either way, every
line passes through :class:`Redactor` first: the configured secrets (tokens, the
signing and client secrets, the encryption keys, the database password) and
anything shaped like a Slack token are replaced by ``[redacted]``, in the message
and in tracebacks alike.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import sys
from typing import Iterable

TOKEN_SHAPES = re.compile(r"\b(xox[abeoprs]|xapp)-[A-Za-z0-9-]{6,}")
REDACTED = "[redacted]"
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Fields every LogRecord has; anything else was passed with extra= and goes into the JSON object.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()):
        # Longest first, so a secret containing another is replaced whole; very short values are not
        # secrets worth hiding and would shred ordinary words.
        self.secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return TOKEN_SHAPES.sub(lambda m: f"{m.group(1)}-{REDACTED}", text)


class TextFormatter(logging.Formatter):
    def __init__(self, redact: Redactor):
        super().__init__(TEXT_FORMAT)
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        return self.redact(super().format(record))


class JsonFormatter(logging.Formatter):
    def __init__(self, redact: Redactor):
        super().__init__()
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, str | int | float | None] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": self.redact(record.getMessage()),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = (
                    value
                    if isinstance(value, (int, float, bool)) or value is None
                    else self.redact(str(value))
                )
        if record.exc_info:
            out["traceback"] = self.redact(self.formatException(record.exc_info))
        elif record.stack_info:
            out["traceback"] = self.redact(self.formatStack(record.stack_info))
        return json.dumps(out, ensure_ascii=False)


def secrets_of(settings) -> list[str]:
    """Every secret value the settings hold, and the password inside the state store URL."""
    values = []
    for name in (
        "slack_bot_token",
        "slack_app_token",
        "slack_signing_secret",
        "slack_client_secret",
    ):
        secret = getattr(settings, name, None)
        if secret is not None:
            values.append(secret.get_secret_value())
    key = getattr(settings, "rlmap_encryption_key", None)
    if key is not None:
        values.extend(k.strip() for k in key.get_secret_value().split(","))
    url = getattr(settings, "rlmap_state_url", None)
    if url is not None:
        try:
            import sqlalchemy as sa

            password = sa.engine.make_url(url.get_secret_value()).password
            if password:
                values.append(str(password))
        except Exception:  # noqa: BLE001 - a malformed URL has no password to hide
            pass
    return values


def make_handler(settings, stream=None) -> logging.Handler:
    """A handler writing to ``stream`` (standard error) in the configured format, secrets hidden."""
    redact = Redactor(secrets_of(settings))
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(
        JsonFormatter(redact) if settings.rlmap_log_format == "json" else TextFormatter(redact)
    )
    return handler


def configure(settings, stream=None, level: int = logging.INFO) -> logging.Handler:
    """Send every log record to ``stream`` (standard
    error) in the configured format, secrets hidden.
    """
    handler = make_handler(settings, stream)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("alembic.runtime.plugins").setLevel(
        logging.WARNING
    )  # a line per plugin at every start
    return handler
