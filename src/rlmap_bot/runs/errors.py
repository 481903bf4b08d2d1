"""The one error a front-end has to catch when reading a run."""

from __future__ import annotations

from rlmap_bot.errors import UsageError


class RunReadError(UsageError):
    """A run cannot be read: the message is one line
    a person can act on (exit code 2, bad input).
    """

    #: The HTTP status a tracker answered with, when that is why (404: no such run or experiment).
    status: int | None = None

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))
