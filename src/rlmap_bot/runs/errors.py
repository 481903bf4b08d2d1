"""The one error a front-end has to catch when reading a run."""

from __future__ import annotations


class RunReadError(ValueError):
    """A run cannot be read: the message is one line a person can act on.

    ``exit_code`` is 2, the project's code for bad input, so a command line can
    ``sys.exit(exc.exit_code)`` without knowing the cause.
    """

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))
