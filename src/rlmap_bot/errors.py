"""One error family for everything a user can act on.

Every front-end maps :class:`RlmapError` once: the CLI prints ``error: <message>``
and exits with ``exit_code``; the shell prints the line and carries on; Slack
answers privately with the message. Anything else is a bug: logged with its
traceback, and the user is told only that something went wrong.
"""

from __future__ import annotations


class RlmapError(Exception):
    """A problem with a one-line message a person can act on."""

    exit_code: int = 1

    def __init__(self, message: str = "", *, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(RlmapError, ValueError):
    """Bad input or usage: a malformed command, a value out of range, an unknown id (exit 2)."""

    exit_code = 2


class NotFoundError(UsageError):
    """Something named does not exist; the message may suggest what was meant."""


class ConfigError(RlmapError):
    """The environment is wrong (a setting, an unwritable
    folder); the message names what to fix (exit 2).
    """

    exit_code = 2


class UnavailableError(RlmapError):
    """A service the bot depends on (the state store) is briefly unreachable; try again shortly."""

    exit_code = 3
