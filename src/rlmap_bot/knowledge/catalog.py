"""The catalog as loaded, and the one error family a knowledge file's mistake is told in."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rlmap_bot.errors import RlmapError
from rlmap_bot.knowledge.schema import Entry, Paper, Signal, Stage, Topic
from rlmap_bot.knowledge.settings import CatalogSettings


class KnowledgeError(RlmapError, ValueError):
    """A catalog file is wrong; the message names file, entry and field."""

    def __init__(self, path: Path | str, entry: str | None, field_name: str | None, problem: str):
        self.path, self.entry, self.field, self.problem = str(path), entry, field_name, problem
        where = self.path
        if entry:
            where += f": entry '{entry}'"
        if field_name:
            where += f": field '{field_name}'"
        super().__init__(f"{where}: {problem}")

    @property
    def errors(self) -> list[KnowledgeError]:
        return [self]


class KnowledgeErrors(KnowledgeError):
    """Several mistakes at once: every one is reported,
    a line each, so one pull request fixes them all.
    """

    def __init__(self, errors: list[KnowledgeError]):
        self.all = list(errors)
        first = self.all[0]
        super().__init__(first.path, first.entry, first.field, first.problem)
        self.args = ("\n".join(str(e) for e in self.all),)

    def __str__(self) -> str:
        return self.args[0]

    @property
    def errors(self) -> list[KnowledgeError]:
        return self.all


def raise_all(errors: list[KnowledgeError]) -> None:
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise KnowledgeErrors(errors)


@dataclass
class Catalog:
    """Every validated entry, by id, with where each came from."""

    entries: dict[str, Entry]
    sources: dict[str, str] = field(default_factory=dict)
    settings: CatalogSettings = field(default_factory=CatalogSettings)

    def of_kind(self, kind: str) -> list[Entry]:
        return [e for e in self.entries.values() if e.kind == kind]

    @property
    def stages(self) -> list[Stage]:
        return sorted(
            (e for e in self.entries.values() if isinstance(e, Stage)), key=lambda s: s.order
        )

    @property
    def signals(self) -> list[Signal]:
        return [e for e in self.entries.values() if isinstance(e, Signal)]

    @property
    def papers(self) -> list[Paper]:
        return [e for e in self.entries.values() if isinstance(e, Paper)]

    def papers_for(self, entry_id: str) -> list[Paper]:
        """Papers that name ``entry_id`` as a stage or subtopic: main-stage matches first, then the
        source map's own papers (``seed``), verified before unverified, newest first."""
        hits = [p for p in self.papers if entry_id in p.stages or entry_id in p.subtopics]
        order = {"verified": 0, "partial": 1, "unverified": 2}
        return sorted(
            hits,
            key=lambda p: (
                p.stages[0] != entry_id,
                not p.seed,
                order[p.verification],
                -(p.year or 0),
                p.title,
            ),
        )

    def children(self, topic_id: str) -> list[Topic]:
        return [t for t in self.entries.values() if isinstance(t, Topic) and t.parent == topic_id]


def collect_errors(check) -> list[KnowledgeError]:
    try:
        check()
    except KnowledgeError as exc:
        return list(exc.errors)
    return []
