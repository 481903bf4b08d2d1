"""An entry of the catalog as a card: a title, a kind,
sections and links, the same on every surface.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Link(BaseModel):
    id: str
    kind: str
    title: str
    short: str | None = Field(default=None, description="A name short enough for a button.")


class Section(BaseModel):
    heading: str
    text: str | None = None
    items: list[str] = Field(default_factory=list)


class Card(BaseModel):
    id: str
    kind: str
    title: str
    subtitle: str | None = None
    summary: str
    sections: list[Section] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)
    url: str | None = None
