"""What the curation core hands the front-ends: an
arXiv record, a candidate with its proposed tags.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field

from rlmap_bot.results.general import Notice

# Caps on what arXiv sends (a feed is outside data): a title past 300 characters, 50 authors or an
# abstract past 5,000 characters is not a paper's metadata but a broken or hostile feed; arXiv's own
# abstract limit is 1,920 characters, so the cap never cuts a real one.
TITLE_CAP = 300
AUTHOR_CAP = 50
AUTHOR_NAME_CAP = 100
ABSTRACT_CAP = 5000
CATEGORY_CAP = 20


class ArxivRecord(BaseModel):
    """One paper as arXiv describes it, whitespace collapsed and capped."""

    arxiv_id: str = Field(description="The new-style id without version, e.g. 2305.18290.")
    title: str
    authors: list[str] = Field(default_factory=list)
    more_authors: int = Field(default=0, description="Authors beyond the cap, counted.")
    year: int | None = None
    published: dt.datetime | None = None
    abstract: str = ""
    categories: list[str] = Field(default_factory=list)
    primary_category: str | None = None

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv_id}"


class Tag(BaseModel):
    """A proposed stage or subtopic and how strongly the
    bot's search ties the abstract to it (0 to 1).
    """

    id: str
    title: str
    score: float = Field(ge=0, le=1)


class Existing(BaseModel):
    """Why a paper need not go to the curators: in the catalog, already suggested, or rejected."""

    status: Literal["in_catalog", "pending", "rejected", "approved"]
    entry_id: str | None = None
    title: str | None = None
    how: str = Field(
        default="", description="arxiv id | title (fuzzy, with its score) | suggestion"
    )
    by: str | None = Field(default=None, description="Who decided (a Slack user id) or suggested.")
    reason: str | None = None
    when: dt.datetime | None = None
    where: list[str] = Field(
        default_factory=list, description="In the catalog: the stages the entry is on, by title."
    )


class Candidate(BaseModel):
    """A paper proposed for the catalog: arXiv's record,
    the tags the bot proposes, and whether it is new.
    """

    record: ArxivRecord
    stages: list[Tag] = Field(default_factory=list)
    subtopics: list[Tag] = Field(default_factory=list)
    existing: Existing | None = None
    relevance: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="How well the paper fits the map (the scout ranks by it).",
    )


class AdditionRow(BaseModel):
    id: str
    title: str
    arxiv: str
    suggested_by: str
    approved_by: str
    added: str


class AdditionList(BaseModel):
    """Papers approved from Slack and live in the
    catalog (until a knowledge file takes them over).
    """

    additions: list[AdditionRow]


class Choice(BaseModel):
    """One option a curator can pick in a form: a stage or a subtopic of the catalog."""

    id: str
    title: str


class CurationForm(BaseModel):
    """A form over a pending suggestion that only a curator opens: ``edit`` (the tags, a summary
    and key facts, then approve) or ``reject`` (the reason the suggester is told)."""

    kind: Literal["edit", "reject"]
    suggestion_id: str
    candidate: Candidate
    stages: list[Choice] = Field(default_factory=list, description="The catalog's stages.")
    subtopics: list[Choice] = Field(default_factory=list, description="The catalog's subtopics.")


class Decision(Notice):
    """A curator's decision on a suggestion, in a line for the curator. The suggestion's card is
    closed with the outcome and the suggester told (the curation flow's front-end does both)."""

    suggestion_id: str
    status: Literal["approved", "rejected"]
