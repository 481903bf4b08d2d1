"""What a command handler gets besides its arguments: the core, who asked, where, and what the
front-end lends it.

Handlers never ask which surface they run on: what differs between the terminal and Slack is a
typed field here (a chat channel to post in, the workspace, a conversation at a prompt, the
front-end's own services), set by the front-end that builds the invocation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol

if TYPE_CHECKING:
    from pydantic import BaseModel

    from rlmap_bot.core import Core
    from rlmap_bot.curation.service import Cards, Curation
    from rlmap_bot.digest.service import Poster
    from rlmap_bot.runs.sources.access import Access
    from rlmap_bot.watch.service import Poster as WatchPoster
    from rlmap_bot.watch.service import WatchService


class Channel(Protocol):
    """What a chat front-end lends a command that acts in a channel (Slack implements it)."""

    def announce(self, news: BaseModel) -> bool:
        """Post ``news`` (a result model, which the front-end words and which names who acted)
        in the channel for everyone; False (user told why) when the bot cannot.
        """

    def user_timezone(self) -> str:
        """The asking user's timezone name, ``UTC`` when unknown."""

    def open_thread(self, news: BaseModel) -> str | None:
        """Post ``news`` (a result model the front-end words) as the root of a new thread; its
        ts, or None (user told why).
        """

    def digest_poster(self) -> Poster:
        """Where a digest for this channel is posted."""

    def watch_poster(self) -> WatchPoster:
        """Where this channel's watch alerts are posted."""


@dataclass
class Invocation:
    """One run of one command. The core is opened on first
    use, so `kb check` works on a broken catalog.
    """

    open_core: Callable[[], Core]
    surface: str  # cli | shell | slack
    knowledge_root: Path
    db_path: Path
    user: str = "local"
    team: str = "local"
    channel: str = "local"
    thread_ts: str | None = None
    admin: bool = False
    io: Channel | None = None  # a chat channel to post in (Slack); None in a terminal
    json: bool = False  # the result is printed as a document (`--json`): nothing interactive
    lines: Callable[[], Iterable[str]] | None = (
        None  # the terminal's standard input, line by line (`ask -`)
    )
    #: The Slack workspace the request came from; None in a terminal, which sees every workspace's
    #: open diagnoses.
    workspace: str | None = None
    #: The person is at this machine (a terminal): trusted with its files and the catalog, unlike a
    #: chat user, whose rights come from their workspace's admins (Slack's and RLMAP_ADMINS') and
    #: RLMAP_CURATORS.
    local: bool = False
    #: The front-end holds a conversation at a prompt (an interactive terminal): a run's logs go on
    #: to a guided diagnosis that asks only what they could not tell.
    conversation: bool = False
    #: Where a run's chart goes when none is asked for (the shell draws every run it reads).
    charts: Path | None = None
    # : The front-end's services: the watch service
    # (Slack's posts alerts), the curation flow (Slack's
    #: with its arXiv client) and where curation cards are posted. None: one over the core, or none.
    watch_service: WatchService | None = None
    curation: Curation | None = None
    curator_cards: Cards | None = None
    #: What may be read of runs, handed in by the front-end (asked for only when a run is read):
    #: a terminal's own environment (``runs.sources.access.local_access``), or a chat workspace's
    #: paths under RLMAP_RUN_ROOTS, allowed trackers and sealed credentials (``workspace_access``).
    run_access: Callable[[], Access] = field(kw_only=True)

    @cached_property
    def core(self) -> Core:
        return self.open_core()

    @classmethod
    def of(cls, core: Core, surface: str, **fields: Any) -> Invocation:
        """An invocation over an already open core."""
        return cls(
            open_core=lambda: core,
            surface=surface,
            knowledge_root=core.knowledge_root,
            db_path=core.db_path,
            **fields,
        )
