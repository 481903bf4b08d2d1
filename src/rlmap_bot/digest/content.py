"""What a digest says: which entries are new (or worth announcing as updated), grouped.

Pure functions over the knowledge store's history and a channel's ledger, so
the Slack post, `/rlmap digest preview` and `rlmap-bot digest preview` all say
exactly the same thing.
"""

from __future__ import annotations

import datetime as dt
from typing import Iterable

from rlmap_bot.knowledge.schema import Paper, Stage, Topic, display_kind
from rlmap_bot.knowledge.store import KnowledgeStore, StoredEntry
from rlmap_bot.results.digest import Digest, DigestGroup, DigestItem

MAX_ITEMS = (
    30  # what one Slack post shows; the rest are counted ("and N more") and lead the next one
)


def _matches(stored: StoredEntry, filters: Iterable[str]) -> bool:
    filters = list(filters)
    if not filters:
        return True
    entry = stored.entry
    stages = set(getattr(entry, "stages", []) or [])
    topics = set(getattr(entry, "subtopics", []) or [])
    if isinstance(entry, Stage):
        stages.add(entry.id)
        topics.update(entry.subtopics)
    if isinstance(entry, Topic):
        topics.update({entry.id, entry.parent or ""})
        stages.update(entry.stages)
    for f in filters:
        kind, _, value = f.partition(":")
        if (kind == "stage" and value in stages) or (kind == "topic" and value in topics):
            return True
    return False


def _group(store: KnowledgeStore, stored: StoredEntry, filters: list[str]) -> str:
    """Group under the filtered subtopic when a topic filter is set, else the main stage."""
    entry = stored.entry
    topic_filters = [f.partition(":")[2] for f in filters if f.startswith("topic:")]
    subtopics = list(getattr(entry, "subtopics", []) or [])
    for topic_id in topic_filters:
        if topic_id in subtopics:
            found = store.get(topic_id)
            return found.title if found else topic_id
    stages = list(getattr(entry, "stages", []) or [])
    if isinstance(entry, Stage):
        stages = [entry.id]
    if stages:
        found = store.get(stages[0])
        return found.title if found else stages[0]
    return "Scaling Laws" if isinstance(entry, Topic) else "Other"


def list_item(
    store: KnowledgeStore, stored: StoredEntry, status: str, filters: list[str]
) -> DigestItem:
    from rlmap_bot.knowledge.additions import credit

    entry = stored.entry
    paper = entry if isinstance(entry, Paper) else None
    suggested_by, approved_by = credit(stored.source) or (None, None)
    month = published_month(paper) if paper else None
    return DigestItem(
        year=paper.year or (month[0] if month else None) if paper else None,
        month=month[1] if month else None,
        suggested_by=suggested_by,
        approved_by=approved_by,
        id=entry.id,
        kind=display_kind(entry),
        title=entry.title,
        one_line=entry.one_line,
        # the first author (or the organisation): a digest is read on phones
        byline=(paper.short_byline or None) if paper else None,
        url=paper.link if paper else None,
        status=status,
        version=stored.version,
        added=entry.added,
        group=_group(store, stored, filters),
    )


def published_month(paper: Paper) -> tuple[int, int] | None:
    """(year, month) a paper came out, read from its arXiv id (YYMM: arXiv's scheme since April
    2007); None without one. The month is as precise as the catalog's dates go."""
    if not paper.arxiv:
        return None
    yymm = paper.arxiv.split(".", 1)[0]
    year, month = 2000 + int(yymm[:2]), int(yymm[2:4])
    return (year, month) if 1 <= month <= 12 else None


def _in_period(item: DigestItem, since: dt.date | None, today: dt.date) -> bool:
    """Whether a paper came out in the period: its arXiv month is the month the period starts in,
    or later. A paper dated by its year alone, or a period with no start, says nothing of it."""
    if since is None or item.year is None or item.month is None:
        return False
    return (since.year, since.month) <= (item.year, item.month) <= (today.year, today.month)


def select_items(
    store: KnowledgeStore,
    delivered: set[tuple[str, str]],
    filters: list[str] | None = None,
    since: dt.datetime | None = None,
) -> list[DigestItem]:
    """Entries a channel has not received since ``since`` (a subscription's start).

    New: dated (the curated ``added``) on or after that day and never sent to the
    channel.  The curated date, not the store's build time, decides, so a replica
    with a freshly built store, or a lost store, agrees on what is new.
    Updated: an entry whose content changed after ``since``, that a curator marked
    ``announce: true``, in a version the channel has not received.
    """
    filters = filters or []
    delivered_ids = {entry_id for entry_id, _ in delivered}
    first_day = since.date() if since else None
    items: list[DigestItem] = []
    for stored in store.history():
        entry = stored.entry
        if entry.kind == "signal" or not _matches(stored, filters):
            continue
        if entry.id not in delivered_ids and (first_day is None or entry.added >= first_day):
            items.append(list_item(store, stored, "new", filters))
        elif (
            entry.announce
            and (entry.id, stored.version) not in delivered
            and (since is None or _parse(stored.changed_at) > since)
        ):
            items.append(list_item(store, stored, "updated", filters))
    return items


def build_digest(
    items: list[DigestItem],
    since: dt.date | None,
    today: dt.date,
    filters: list[str] | None = None,
    more: int = 0,
) -> Digest:
    """Group items (new before updated, newest first) under stage or subtopic headings; a paper
    that came out in the period is told apart from an older one the catalog took in."""
    groups: dict[str, list[DigestItem]] = {}
    items = [i.model_copy(update={"recent": _in_period(i, since, today)}) for i in items]
    for item in sorted(items, key=lambda i: (i.status != "new", -i.added.toordinal(), i.title)):
        groups.setdefault(item.group, []).append(item)
    recent = sum(1 for i in items if i.status == "new" and i.recent)
    added = sum(1 for i in items if i.status == "new" and not i.recent)
    updated = len(items) - recent - added
    parts = [
        f"{recent} new paper{'' if recent == 1 else 's'}" if recent else "",
        f"{added} {'more ' if recent else ''}added to the catalog" if added else "",
        f"{updated} updated" if updated else "",
    ]
    title = "RL Map digest: " + (", ".join(p for p in parts if p) or "nothing new")
    return Digest(
        title=title,
        period_start=since,
        period_end=today,
        filters=list(filters or []),
        more=more,
        groups=[
            DigestGroup(title=t, items=v) for t, v in sorted(groups.items(), key=lambda kv: kv[0])
        ],
    )


def _parse(moment: str) -> dt.datetime:
    parsed = dt.datetime.fromisoformat(moment)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def capped_digest(
    items: list[DigestItem],
    since: dt.date | None,
    today: dt.date,
    filters: list[str] | None = None,
    max_items: int = MAX_ITEMS,
) -> Digest:
    """A digest of at most ``max_items`` entries (newest first); ``more`` counts the rest."""
    full = build_digest(items, since, today, filters)
    shown = full.items[:max_items]
    if len(shown) == len(items):
        return full
    return build_digest(shown, since, today, filters, more=len(items) - len(shown))
