"""Curation cards and forms: a suggested paper for the curators, the Edit and Reject modals."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    Block,
    HeaderBlock,
    InputBlock,
    Option,
    PlainTextInputElement,
    StaticMultiSelectElement,
)
from slack_sdk.models.views import View

from rlmap_bot import wording
from rlmap_bot.results.curation import AdditionList, Candidate
from rlmap_bot.slack.blocks.common import actions, button, context, plain, section
from rlmap_bot.slack.markup import code, cut, escape, link, mention

APPROVE, EDIT, REJECT = "curate_approve", "curate_edit", "curate_reject"
EDIT_VIEW, REJECT_VIEW = "curate_edit_view", "curate_reject_view"
ABSTRACT_SHOWN = 700  # enough to judge a paper by; the link has the rest


def _tags(tags) -> str:
    return ", ".join(f"{escape(t.title)} ({t.score:.2f})" for t in tags) or "none proposed"


def _about(candidate: Candidate) -> list[Block]:
    record = candidate.record
    authors = ", ".join(record.authors[:6]) + (
        " et al." if len(record.authors) > 6 or record.more_authors else ""
    )
    head = f"*{link(record.url, cut(record.title, 280))}*\n{escape(authors or 'no authors given')}"
    head += f" · {record.year or 'year unknown'} · arXiv {escape(record.arxiv_id)}"
    if record.categories:
        head += f" · {escape(', '.join(record.categories[:6]))}"
    return [
        section(head),
        section(escape(cut(record.abstract, ABSTRACT_SHOWN)) or "_no abstract_"),
        section(
            f"*Proposed stages:* {_tags(candidate.stages)}\n*Proposed subtopics:* "
            f"{_tags(candidate.subtopics)}"
        ),
    ]


def card_blocks(suggestion_id: str, candidate: Candidate, suggested_by: str) -> list[Block]:
    who = "the weekly scan" if suggested_by == "scout" else mention(suggested_by)
    return [
        HeaderBlock(text=plain("Paper suggested for the catalog")),
        *_about(candidate),
        context(f"Suggested by {who}. Curators: Approve takes the proposed tags."),
        actions(
            [
                button("Approve", APPROVE, suggestion_id, style="primary"),
                button("Edit", EDIT, suggestion_id),
                button("Reject", REJECT, suggestion_id, style="danger"),
            ],
            block_id=f"curate:{suggestion_id}",
        ),
    ]


def closed_blocks(candidate: Candidate, outcome: str) -> list[Block]:
    return [
        HeaderBlock(text=plain("Paper suggested for the catalog")),
        *_about(candidate),
        section(outcome),
    ]


def candidate_blocks(candidate: Candidate) -> list[Block]:
    """A candidate shown to the person who asked about
    it (not yet a suggestion on the curators' card).
    """
    return [HeaderBlock(text=plain("A paper that could join the catalog")), *_about(candidate)]


def card_text(candidate: Candidate) -> str:
    return f"Paper suggested for the catalog: {candidate.record.title}"


def _options(pairs: list[tuple[str, str]]) -> list[Option]:
    return [Option(value=key, text=cut(title, 75)) for key, title in pairs][:100]


def edit_modal(
    suggestion_id: str,
    candidate: Candidate,
    stages: list[tuple[str, str]],
    subtopics: list[tuple[str, str]],
) -> View:
    """Stages, subtopics, a one-line summary and key facts; the proposals are preselected."""
    stage_options = _options(stages)
    chosen_stages = [o for o in stage_options if o.value in {t.id for t in candidate.stages}]
    sub_options = _options(subtopics)
    chosen_subs = [o for o in sub_options if o.value in {t.id for t in candidate.subtopics}]
    blocks: list[Block] = [
        section(
            f"*{escape(cut(candidate.record.title, 280))}* (arXiv "
            f"{escape(candidate.record.arxiv_id)})"
        ),
        InputBlock(
            block_id="stages",
            label=plain("Stages (the main one first)"),
            element=StaticMultiSelectElement(
                action_id="value", options=stage_options, initial_options=chosen_stages or None
            ),
        ),
    ]
    if sub_options:
        blocks.append(
            InputBlock(
                block_id="subtopics",
                label=plain("Subtopics"),
                optional=True,
                element=StaticMultiSelectElement(
                    action_id="value", options=sub_options, initial_options=chosen_subs or None
                ),
            )
        )
    blocks += [
        InputBlock(
            block_id="summary",
            label=plain("One-line summary, in your words"),
            optional=True,
            element=PlainTextInputElement(action_id="value", max_length=300),
        ),
        InputBlock(
            block_id="facts",
            label=plain("Key facts, one a line"),
            optional=True,
            element=PlainTextInputElement(action_id="value", multiline=True, max_length=2000),
        ),
    ]
    return View(
        type="modal",
        callback_id=EDIT_VIEW,
        private_metadata=suggestion_id,
        title=plain("Edit and approve", 24),
        submit=plain("Approve", 24),
        close=plain("Cancel", 24),
        blocks=blocks,
    )


def reject_modal(suggestion_id: str, candidate: Candidate) -> View:
    return View(
        type="modal",
        callback_id=REJECT_VIEW,
        private_metadata=suggestion_id,
        title=plain("Reject", 24),
        submit=plain("Reject", 24),
        close=plain("Cancel", 24),
        blocks=[
            section(f"*{escape(cut(candidate.record.title, 280))}*"),
            InputBlock(
                block_id="reason",
                label=plain("Why (the suggester is told)"),
                element=PlainTextInputElement(action_id="value", multiline=True, max_length=500),
            ),
        ],
    )


def form_values(view: dict) -> dict[str, Any]:
    """A submitted modal's values: a list for multi-selects, text for inputs (block id -> value)."""
    out: dict[str, Any] = {}
    for block_id, fields in ((view.get("state") or {}).get("values") or {}).items():
        field = (fields or {}).get("value") or {}
        if "selected_options" in field:
            out[block_id] = [
                o.get("value") for o in field.get("selected_options") or [] if o.get("value")
            ]
        else:
            out[block_id] = field.get("value") or ""
    return out


def additions_blocks(result: AdditionList) -> list[Block]:
    if not result.additions:
        return [section("No papers approved from Slack are live in the catalog.")]
    lines = [
        f"• {code(a.id)} *{escape(cut(a.title, 150))}* (arXiv {escape(a.arxiv)}), suggested by "
        f"{'the weekly scan' if a.suggested_by == 'scout' else mention(a.suggested_by)}, approved "
        f"by {mention(a.approved_by)} on {escape(a.added)}"
        for a in result.additions
    ]
    out: list[Block] = [section(f"*{wording.counted(len(lines), 'paper')} approved from Slack*")]
    for start in range(0, len(lines), 10):
        out.append(section("\n".join(lines[start : start + 10])))
    return out[:50]
