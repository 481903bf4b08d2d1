"""Result models of commands that have no home of their own in the core.

Front-ends render these (text in the terminal, Block Kit in Slack) or print
them as JSON; handlers never format anything.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field


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
    filters: list[str] = Field(default_factory=list, description="What the list was narrowed to, in words.")
    total: int = Field(description="Papers in the catalog before filtering.")


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
        default="command", description="A command, one of its options, or an example of it (renderers indent).")


class Help(BaseModel):
    intro: str
    commands: list[HelpEntry]
    outro: str = ""
    problem: str | None = None


class Notice(BaseModel):
    """A short confirmation or status line; ``public`` when everyone in the channel should see it."""

    text: str
    public: bool = False


class AdditionRow(BaseModel):
    id: str
    title: str
    arxiv: str
    suggested_by: str
    approved_by: str
    added: str


class AdditionList(BaseModel):
    """Papers approved from Slack and live in the catalog (until a knowledge file takes them over)."""

    additions: list[AdditionRow]
