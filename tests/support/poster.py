"""The front-end side of a watch (what Slack implements, `watch.service.Poster`), keeping what
would be posted, for tests of the watch core without Slack."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rlmap_bot.results.watch import Alert


class Recorder:
    def __init__(self) -> None:
        self.posts: list[Alert] = []

    def post_alert(self, channel: str, alert: Alert) -> str:
        self.posts.append(alert)
        return f"{len(self.posts)}.0"

    def attach_chart(self, channel: str, ts: str, chart: Path, alert: Alert) -> None:
        assert chart.exists()

    def find(self, channel: str, post_id: str, since: dt.datetime) -> str | None:
        """No earlier post carries this id: nothing was posted by a run that crashed."""
        return None
