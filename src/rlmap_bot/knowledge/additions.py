"""Approved additions merged beside the knowledge files, each validated like a file entry.

An addition is a paper entry kept in the state store. Before it joins a build it passes the
same pydantic schema (:func:`~rlmap_bot.knowledge.loader.parse_entry`) and the same link
checks as a file; one that fails is left out and reported, never breaking the store. An
addition whose id (or arXiv id) a knowledge file now holds is retired: the file wins, and
the digest, which remembers entries by id, does not announce it twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable

from rlmap_bot.knowledge.catalog import Catalog, KnowledgeError
from rlmap_bot.knowledge.checks import check_entry
from rlmap_bot.knowledge.loader import parse_entry
from rlmap_bot.knowledge.schema import Paper

SOURCE_PREFIX = "slack:"


def source_of(suggested_by: str, approved_by: str) -> str:
    """What the store records as an addition's source: who suggested it and who approved it."""
    return f"{SOURCE_PREFIX}{suggested_by}:{approved_by}"


def credit(source: str) -> tuple[str, str] | None:
    """(suggested_by, approved_by) of an entry that came from Slack, else None."""
    if not source.startswith(SOURCE_PREFIX):
        return None
    suggested, _, approved = source[len(SOURCE_PREFIX) :].partition(":")
    return suggested, approved


@dataclass
class Merged:
    catalog: Catalog
    added: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    problems: list[KnowledgeError] = field(default_factory=list)


def validate(data: dict, shown: str, catalog: Catalog) -> Paper:
    """An addition's entry as the catalog would take
    it; KnowledgeError (every problem) otherwise.
    """
    entry = parse_entry(data, shown, 0, "paper")
    assert isinstance(entry, Paper), "parse_entry with folder kind 'paper' returns a paper"
    trial = Catalog(
        entries={**catalog.entries, entry.id: entry},
        sources={**catalog.sources, entry.id: shown},
        settings=catalog.settings,
    )
    errors = check_entry(trial, entry)
    if errors:
        raise (
            errors[0]
            if len(errors) == 1
            else KnowledgeError(shown, entry.id, errors[0].field, errors[0].problem)
        )
    return entry


def merge(files: Catalog, additions: Iterable) -> Merged:
    """The file catalog plus every valid addition (objects with
    entry_id, arxiv_id, data, suggested_by, approved_by).
    """
    entries = dict(files.entries)
    sources = dict(files.sources)
    arxiv_ids = {p.arxiv for p in files.papers if p.arxiv}
    out = Merged(Catalog(entries=entries, sources=sources, settings=files.settings))
    for addition in additions:
        if addition.entry_id in files.entries or addition.arxiv_id in arxiv_ids:
            out.retired.append(addition.entry_id)
            continue
        shown = f"additions/{addition.entry_id}"
        try:
            entry = validate(json.loads(addition.data), shown, out.catalog)
        except KnowledgeError as exc:
            out.problems += exc.errors
            continue
        except ValueError as exc:  # not JSON at all
            out.problems.append(
                KnowledgeError(shown, addition.entry_id, None, f"not a valid entry: {exc}")
            )
            continue
        if entry.id in entries:
            out.problems.append(
                KnowledgeError(shown, entry.id, "id", "another addition has this id")
            )
            continue
        entries[entry.id] = entry
        sources[entry.id] = source_of(addition.suggested_by, addition.approved_by)
        out.added.append(entry.id)
    return out
