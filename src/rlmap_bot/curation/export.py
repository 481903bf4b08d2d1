"""Approved additions written out as knowledge files, for review in the repository.

Each file holds one paper entry in the layout of ``knowledge/papers/*.yaml``; once such a
file lands (same id), the addition retires at the next build (:mod:`rlmap_bot.knowledge.additions`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import yaml

from rlmap_bot.errors import UsageError

ORDER = (
    "id",
    "kind",
    "title",
    "aliases",
    "authors",
    "et_al",
    "organisation",
    "year",
    "arxiv",
    "url",
    "verification",
    "verification_note",
    "summary",
    "facts",
    "stages",
    "subtopics",
    "related",
    "keywords",
    "questions",
    "added",
)


def export(additions: Iterable, folder: Path) -> list[Path]:
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make the folder {folder}: {exc.strerror or exc}") from None
    written = []
    for addition in additions:
        data = json.loads(addition.data)
        ordered = {k: data[k] for k in ORDER if k in data} | {
            k: v for k, v in data.items() if k not in ORDER
        }
        path = folder / f"{addition.entry_id}.yaml"
        text = yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=100)
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
        written.append(path)
    return written
