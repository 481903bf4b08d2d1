"""Whole entries as front-end-neutral cards.

The terminal and Slack both show an entry as a title, a kind, sections and
links; building that once here keeps the two front-ends saying the same thing.
"""

from __future__ import annotations

from rlmap_bot.knowledge.schema import Entry, Paper, Signal, Stage, Topic, display_kind
from rlmap_bot.knowledge.store import KnowledgeStore
from rlmap_bot.results.cards import Card, Link, Section


def link(entry: Entry) -> Link:
    return Link(id=entry.id, kind=display_kind(entry), title=entry.title, short=entry.short_name)


def card_for(store: KnowledgeStore, entry: Entry) -> Card:
    """Everything worth showing about ``entry``, in reading order."""
    sections: list[Section] = []
    subtitle = None
    url = None
    if isinstance(entry, Paper):
        bits = [entry.byline] if entry.byline else []
        if entry.year:
            bits.append(str(entry.year))
        if entry.venue:
            bits.append(entry.venue)
        if entry.arxiv:
            bits.append(f"arXiv {entry.arxiv}")
        subtitle = " · ".join(bits)
        url = entry.link
        if entry.facts:
            sections.append(Section(heading="Key facts", items=list(entry.facts)))
        status = {
            "verified": "Verified against the sources.",
            "partial": "Partly verified.",
            "unverified": "Not independently verified.",
        }[entry.verification]
        sections.append(
            Section(
                heading="Verification",
                text=" ".join(x for x in (status, entry.verification_note) if x),
            )
        )
        sections.append(Section(heading="Stages", items=[_title(store, s) for s in entry.stages]))
        if entry.subtopics:
            sections.append(
                Section(heading="Subtopics", items=[_title(store, s) for s in entry.subtopics])
            )
    elif isinstance(entry, Stage):
        subtitle = f"Stage {entry.order} of the map"
        sections += [
            Section(heading="What it covers", text=entry.covers),
            Section(heading="Signs it is the binding constraint", items=list(entry.symptoms)),
            Section(heading="What to measure", items=list(entry.measure)),
            Section(heading="Levers", items=entry.lever_texts),
        ]
    elif isinstance(entry, Topic):
        parent = store.get(entry.parent) if entry.parent else None
        subtitle = f"Subtopic of {parent.title}" if parent else "Topic"
        sections.append(Section(heading="Overview", text=entry.body))
        children = store.catalog.children(entry.id)
        if children:
            sections.append(Section(heading="Subtopics", items=[c.title for c in children]))
    elif isinstance(entry, Signal):
        subtitle = f"Diagnosis signal `{entry.id}` ({entry.type})"
        sections += [
            Section(heading="Question", text=entry.question),
            Section(heading="How to measure", text=entry.how_to_measure),
        ]
        if entry.rules:
            sections.append(Section(heading="How it weighs", items=[r.why for r in entry.rules]))
    return Card(
        id=entry.id,
        kind=display_kind(entry),
        title=entry.title,
        subtitle=subtitle,
        summary=entry.summary,
        sections=sections,
        links=[link(e) for e in store.linked(entry.id)],
        url=url,
    )


def _title(store: KnowledgeStore, entry_id: str) -> str:
    found = store.get(entry_id)
    return found.title if found else entry_id
