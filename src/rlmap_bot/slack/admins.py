"""Who is an admin of a workspace: its own Slack admins and owners, and those RLMAP_ADMINS names
for it. Never one list for every workspace.

Slack says who administers a workspace: ``users.info`` gives each member ``is_admin`` and
``is_owner`` (the primary owner is an owner too), for the workspace in ``team_id``. A member of
another organisation seen through a shared channel is an admin of their own workspace, not of
this one, so the flags count only when that ``team_id`` is the asking workspace. On top of that,
``RLMAP_ADMINS`` may name people per workspace (``T0123:U0456``); a bare user id (the setting's
first form) counts only where the bot serves one workspace (one bot token) and is ignored, with a
warning at start, with OAuth, where it would make the person an admin of every workspace
(:func:`parse_admins`; a malformed entry stops the start in one line).

Answers are kept for :data:`TTL_S` per person and workspace, so an admin command or an App Home
opened again does not ask Slack each time. A failed look-up is not kept: it counts as "not a
Slack admin" that once (RLMAP_ADMINS still counts) and is asked again next time.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rlmap_bot.errors import ConfigError
from rlmap_bot.settings import Settings

log = logging.getLogger(__name__)

# Five minutes, a judgement: how long someone whose admin role Slack removed keeps the bot's admin
# commands, and a newly made admin waits for them. users.info is a Tier 4 method (100+ calls a
# minute per workspace, Slack's method docs), so even a minute would be safe for Slack; five keep
# repeated App Home opens and admin commands to one look-up per person per five minutes, and
# role changes are rare and deliberate.
TTL_S = 300.0
_SLACK_ID = re.compile(r"[A-Z0-9]{2,32}")  # Slack's workspace and user ids: T0123, U0456, W0789


def parse_admins(text: str) -> dict[str, frozenset[str]]:
    """``T1:U1, T1:U2, U3`` -> {"T1": {"U1", "U2"}, "": {"U3"}}; ConfigError naming a bad entry."""
    found: dict[str, set[str]] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        team, _, user = entry.rpartition(":")
        if not all(_SLACK_ID.fullmatch(part) for part in ([team, user] if team else [user])):
            raise ConfigError(
                f"RLMAP_ADMINS: {entry!r} is not WORKSPACE:USER (T0123:U0456, Slack's ids) or a "
                f"user id"
            )
        found.setdefault(team, set()).add(user)
    return {team: frozenset(users) for team, users in found.items()}


class WorkspaceAdmins:
    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic):
        lists = parse_admins(settings.rlmap_admins)
        self.listed = {team: users for team, users in lists.items() if team}
        self.bare = lists.get("", frozenset())
        if self.bare and settings.oauth:
            log.warning(
                "RLMAP_ADMINS names %s without a workspace: ignored with many workspaces (OAuth), "
                "where it would make them admins of every one; write WORKSPACE:USER (T0123:U0456)",
                ", ".join(sorted(self.bare)),
            )
            self.bare = frozenset()
        self.clock = clock
        self._known: dict[tuple[str, str], tuple[bool, float]] = {}  # -> (admin?, asked at)
        self._lock = threading.Lock()

    def allows(self, client: WebClient, team: str, user: str) -> bool:
        """Whether ``user`` is an admin of workspace ``team``."""
        if user in self.bare or user in self.listed.get(team, frozenset()):
            return True
        return self.in_slack(client, team, user)

    def in_slack(self, client: WebClient, team: str, user: str) -> bool:
        """Slack's own flags: an admin or owner of this workspace (users.info, kept TTL_S)."""
        now = self.clock()
        with self._lock:
            known = self._known.get((team, user))
        if known is not None and now - known[1] < TTL_S:
            return known[0]
        try:
            found = client.users_info(user=user)["user"] or {}
        except SlackApiError as exc:
            log.info(
                "users.info for %s failed (%s): only RLMAP_ADMINS counts for them this time",
                user,
                exc.response.get("error"),
            )
            return False
        admin = (
            bool(found.get("is_admin") or found.get("is_owner"))
            and not found.get("deleted")
            and found.get("team_id", team) == team
        )
        with self._lock:
            self._known[(team, user)] = (admin, now)
        return admin
