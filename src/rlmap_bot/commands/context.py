"""What a command handler gets besides its arguments: the core, who asked, and where."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol

if TYPE_CHECKING:
    from rlmap_bot.core import Core
    from rlmap_bot.digest.service import Poster
    from rlmap_bot.watch.service import Poster as WatchPoster


class Channel(Protocol):
    """What a chat front-end lends a command that acts in a channel (Slack implements it)."""

    def announce(self, text: str, actor: str | None = None) -> bool:
        """Post ``text`` (plain) by ``actor`` in the channel for everyone; False (user told why) when the bot cannot."""

    def user_timezone(self) -> str:
        """The asking user's timezone name, ``UTC`` when unknown."""

    def open_thread(self, text: str, actor: str | None = None) -> str | None:
        """Post ``text`` (plain) by ``actor`` as the root of a new thread; its ts, or None (user told why)."""

    def digest_poster(self) -> Poster:
        """Where a digest for this channel is posted."""

    def watch_poster(self) -> WatchPoster:
        """Where this channel's watch alerts are posted."""


@dataclass
class Invocation:
    """One run of one command. The core is opened on first use, so `kb check` works on a broken catalog."""

    open_core: Callable[[], Core]
    surface: str  # cli | shell | slack
    knowledge_root: Path
    db_path: Path
    user: str = "local"
    team: str = "local"
    channel: str = "local"
    thread_ts: str | None = None
    admin: bool = False
    io: Channel | None = None
    json: bool = False  # the result is printed as a document (`--json`): nothing interactive
    lines: Callable[[], Iterable[str]] | None = None  # the terminal's standard input, line by line (`ask -`)
    extra: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def core(self) -> Core:
        return self.open_core()

    @classmethod
    def of(cls, core: Core, surface: str, **fields: Any) -> Invocation:
        """An invocation over an already open core."""
        return cls(open_core=lambda: core, surface=surface, knowledge_root=core.knowledge_root,
                   db_path=core.db_path, **fields)
