"""A digest ready to render: what is new in the catalog over a period, grouped."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field


class DigestItem(BaseModel):
    id: str
    kind: str
    title: str
    byline: str | None = None
    one_line: str
    url: str | None = None
    status: Literal["new", "updated"]
    version: str
    added: dt.date
    group: str
    year: int | None = Field(default=None, description="For papers: the year it came out.")
    month: int | None = Field(
        default=None, description="For papers on arXiv: the month it came out (from its id)."
    )
    recent: bool = Field(
        default=False,
        description="A paper that came out in the digest's period (as far as its arXiv month "
        "tells), not an older paper the catalog took in.",
    )
    suggested_by: str | None = Field(
        default=None, description="Slack user id of who suggested it (an addition)."
    )
    approved_by: str | None = Field(
        default=None, description="Slack user id of the curator who approved it."
    )


class DigestGroup(BaseModel):
    title: str
    items: list[DigestItem]


class Digest(BaseModel):
    """A digest ready to render: header facts, groups, and the items it carries."""

    title: str
    period_start: dt.date | None
    period_end: dt.date
    groups: list[DigestGroup] = Field(default_factory=list)
    filters: list[str] = Field(default_factory=list)
    more: int = Field(default=0, description="Entries left for the next digest (size cap).")

    @property
    def items(self) -> list[DigestItem]:
        return [item for group in self.groups for item in group.items]

    @property
    def empty(self) -> bool:
        return not self.groups

    @property
    def recent(self) -> list[DigestItem]:
        """New papers that came out in the period."""
        return [i for i in self.items if i.status == "new" and i.recent]

    @property
    def added(self) -> list[DigestItem]:
        """New to the catalog, published before the period (or when, it cannot tell)."""
        return [i for i in self.items if i.status == "new" and not i.recent]

    @property
    def updated(self) -> list[DigestItem]:
        return [i for i in self.items if i.status == "updated"]

    def period(self) -> str:
        end = self.period_end.strftime("%d %b %Y").lstrip("0")
        if self.period_start is None or self.period_start == self.period_end:
            return end
        # The start's year is dropped only when it is the end's year: "1 Jan 2025 to 2 Dec 2026".
        fmt = "%d %b" if self.period_start.year == self.period_end.year else "%d %b %Y"
        return f"{self.period_start.strftime(fmt).lstrip('0')} to {end}"


class SubscriptionSet(BaseModel):
    """A channel subscribed to the digest, announced there for everyone before it is kept (the
    announcement doubles as proof that the bot can post there)."""

    when: str = Field(description="The schedule in words: weekly on mon at 09:00 Europe/Paris.")
    filters: list[str] = Field(default_factory=list, description="What the digest is narrowed to.")
    next_run: dt.datetime
    by: str | None = Field(None, description="Who subscribed the channel.")


class Subscribed(BaseModel):
    """`digest subscribe`: the subscription set, told to the person who set it."""

    subscription: SubscriptionSet
