"""What timed work needs from a front-end to post: find
a post again by its id; say when one surely failed.
"""

from __future__ import annotations

import datetime as dt
from typing import Protocol

from rlmap_bot.errors import RlmapError


class NotPosted(RlmapError):
    """The front-end is sure the post was not made (the
    bot is not in the channel, ...): safe to try again.
    """

    def __init__(self, code: str, hint: str | None = None, what: str = "post"):
        super().__init__(hint or f"could not {what} ({code})")
        self.code = code
        self.hint = hint


class Poster(Protocol):
    """The part every poster of timed work shares (each kind adds its own ``post_...`` methods).

    Every post carries its id in the message metadata, so a post made by a run that
    crashed before recording it is found again instead of posted twice.
    """

    def find(self, channel: str, post_id: str, since: dt.datetime) -> str | None:
        """The ts of a post carrying ``post_id`` in its
        metadata, posted after ``since``; None if none.
        """
        ...
