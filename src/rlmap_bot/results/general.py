"""Results of the catalog, help, session and digest-subscription commands, and the notice.

Front-ends render these (text in the terminal, Block Kit in Slack) or print
them as JSON; handlers never format anything.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, Field, RootModel

from rlmap_bot.parts import Part


class StageRow(BaseModel):
    order: int
    id: str
    title: str
    one_line: str


class StageList(BaseModel):
    stages: list[StageRow]


class PaperRow(BaseModel):
    id: str
    title: str
    byline: str | None = None
    year: int | None = None
    stages: list[str] = Field(default_factory=list)
    verification: str
    url: str | None = None


class PaperList(BaseModel):
    papers: list[PaperRow]
    filters: list[str] = Field(
        default_factory=list, description="What the list was narrowed to, in words."
    )
    total: int = Field(description="Papers in the catalog before filtering.")
    near: list[str] = Field(
        default_factory=list,
        description="When no paper is by the name asked for: bylines like it, as written.",
    )


class SessionRow(BaseModel):
    id: str
    user: str
    answers: int
    updated_at: dt.datetime
    next: str | None


class SessionList(BaseModel):
    sessions: list[SessionRow]


class KindCount(BaseModel):
    kind: str
    count: int


class KbStats(BaseModel):
    counts: list[KindCount]
    total: int
    built_at: str | None = None
    knowledge_root: str | None = None


class KbBuilt(BaseModel):
    path: str
    counts: list[KindCount]
    checked_only: bool = False


class HelpEntry(BaseModel):
    usage: str
    summary: str
    kind: Literal["command", "option", "example"] = Field(
        default="command",
        description="A command, one of its options, or an example of it (renderers indent).",
    )


class Help(BaseModel):
    """The commands offered on one surface, written as they are typed there; each surface's
    renderer adds its own words around a listing of every command."""

    surface: str = Field(description="Where the usages are typed: cli, shell or slack.")
    command: str | None = Field(
        default=None, description="The command asked about (`help papers`); None: every command."
    )
    commands: list[HelpEntry]
    problem: str | None = None


class Notice(BaseModel):
    """A short confirmation or status line; ``public`` when everyone in the channel should see it.

    ``text`` is plain (front-ends escape it for their markup); ``actor`` is the user who did
    what it tells, named by each front-end its own way (a mention in Slack) before the text.
    """

    text: str
    public: bool = False
    actor: str | None = None
    parts: list[Part] | None = Field(
        None,
        description="The same line with the names in it (titles, channels, people) as parts, for a "
        "surface that shows them its way.",
    )


class SubscriptionRow(BaseModel):
    channel: str
    when: str
    filters: list[str] = Field(default_factory=list)
    next_run: dt.datetime


class SubscriptionList(BaseModel):
    """`digest list`: every digest subscription of the workspace."""

    subscriptions: list[SubscriptionRow]


class CatalogExport(RootModel[list[dict[str, Any]]]):
    """`kb export`: every entry with all its fields
    (and when it was first seen and last changed).
    """
