"""Plain-text rendering of command results for the terminal (CLI and shell).

:func:`text` dispatches on the result's type; the sentences themselves come from
:mod:`rlmap_bot.wording`, so the terminal says what Slack says.
"""

from __future__ import annotations

import json
import sys
import textwrap
from functools import singledispatch
from typing import Any

from pydantic import BaseModel

from rlmap_bot import wording
from rlmap_bot.results.ask import Answer

WIDTH = 88


def wrapped(text: str, indent: str = "  ") -> str:
    """``text`` filled to the terminal's width, every line indented (the features' renderers)."""
    return textwrap.fill(text, width=WIDTH, initial_indent=indent, subsequent_indent=indent)


def list_item(text: str, bullet: str = "  - ", indent: str = "    ") -> str:
    """``text`` as a list item: its bullet, then its wrapped lines under it."""
    return textwrap.fill(text, width=WIDTH, initial_indent=bullet, subsequent_indent=indent)


#: The terminal's features, loaded when a result no loaded renderer or presenter takes first comes
#: (``load_features``): each registers its renderers on :func:`text` (and the conversations their
#: presenters on ``Terminal.show``) by result type. A plain ``ask`` imports none of them, nor the
#: result models they render.
FEATURES = (
    "rlmap_bot.cli.render_catalog",
    "rlmap_bot.cli.render_diagnosis",
    "rlmap_bot.cli.render_posts",
    "rlmap_bot.cli.render_scaling",
    "rlmap_bot.cli.conversations",
)
_loaded: list[str] = []


def load_features() -> bool:
    """Import every feature not yet imported; whether any was (a renderer or presenter may have
    been registered since the caller looked)."""
    import importlib

    fresh = [name for name in FEATURES if name not in _loaded]
    for name in fresh:
        importlib.import_module(name)
        _loaded.append(name)
    return bool(fresh)


def worded() -> dict:
    """What JSON output adds to a watch post: its title and sentences, as the post reads
    (``results.watch.Alert`` takes them through pydantic's serialization context).  Loaded when
    a post is printed as JSON: a plain ask never loads the watch's result models (an Alert to
    word means its module is loaded)."""
    if "rlmap_bot.results.watch" not in sys.modules:
        return {}
    from rlmap_bot.wording.posts import alert_changes, alert_title

    return {"alert_wording": (alert_title, alert_changes)}


@singledispatch
def text(result: Any) -> str:
    """Any command result as terminal text: the renderer registered for its type (or a base of it);
    a type with none prints as JSON (``tests/test_renderers.py`` holds every declared result to
    one). The features are loaded on the first result no loaded renderer takes."""
    if load_features():
        return text(result)
    if isinstance(result, BaseModel):
        return result.model_dump_json(indent=2, context=worded())
    return json.dumps(result, indent=2, ensure_ascii=False, default=str)


def as_json(result: Any, indent: int | None = 2) -> str:
    """A command result as JSON (models through pydantic, lists of models too)."""
    if isinstance(result, BaseModel):
        return result.model_dump_json(indent=indent, context=worded())
    if isinstance(result, list):
        items = [
            r.model_dump(mode="json", context=worded()) if isinstance(r, BaseModel) else r
            for r in result
        ]
        return json.dumps(items, indent=indent, ensure_ascii=False, default=str)
    return json.dumps(result, indent=indent, ensure_ascii=False, default=str)


@text.register
def answer_text(answer: Answer) -> str:
    lines: list[str] = []
    if answer.english_only:
        lines.append(f"({wording.english_only(answer.shows_entries)})")
    if answer.corrections:
        lines.append(f"({wording.corrected(answer.corrections)})")
    if answer.tier == "guess":  # three lines: the heading, the entries (`show ID`), diagnose
        lines.append(wording.GUESS)
        # One line, left for the terminal to wrap: the guess stays three lines wherever it is read.
        lines.append("  " + "; ".join(f"{h.title} ({h.id})" for h in answer.guesses))
        lines.append(wording.about_your_run("diagnose"))
        return "\n".join(lines)
    if not answer.results:
        lines.append(wording.nothing_relevant(answer.query))
        if answer.known_topics:
            lines.append(wrapped(wording.known_topics(answer.known_topics), ""))
        lines.append(wording.TRY_INSTEAD)
        lines.append(wording.about_your_run("diagnose"))
        return "\n".join(lines)
    if (
        answer.close_call
    ):  # the two that fit alike under the question, the rest as Slack shows them: apart
        lines.append(wording.CLOSE_CALL)
        lines += _hit_lines(answer.results[:2])
        if answer.results[2:]:
            lines.append("Also relevant:")
            lines += _hit_lines(answer.results[2:], first=3)
    else:
        lines += _hit_lines(answer.results)
    lines.append("Use `show ID` for the whole entry.")
    return "\n".join(lines)


def _hit_lines(hits, first: int = 1) -> list[str]:
    lines: list[str] = []
    for i, hit in enumerate(hits, first):
        label = wording.verification_label(hit.verification)
        lines.append(
            f"{i}. [{hit.kind}] {hit.title}  ({hit.id}, score {hit.score:.2f})"
            + (f" [{label}]" if label else "")
        )
        if hit.byline:
            lines.append(f"   {hit.byline}")
        lines.append(wrapped(hit.one_line, "   "))
        if hit.points_to:  # a signal: what the map reads into it
            lines.append(list_item("points to " + hit.points_to, "   ", "        "))
        if hit.why:
            lines.append(list_item("why: " + "; ".join(hit.why), "   ", "        "))
    return lines
