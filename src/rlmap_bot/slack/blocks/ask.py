"""Answers to questions: the best entry, "did you mean" when
two are close, what the bot knows when nothing fits.
"""

from __future__ import annotations

from slack_sdk.models.blocks import Block, ButtonElement

from rlmap_bot import wording
from rlmap_bot.commands.declare import surface_prefix
from rlmap_bot.results.ask import Answer, Hit
from rlmap_bot.slack.blocks.common import actions, button, context, fit, section
from rlmap_bot.slack.markup import cut, escape, link, mention, prose

DIAGNOSE = surface_prefix("slack") + "diagnose"  # as Slack spells the command (`/rlmap diagnose`)
# The button under no answer or a guess: the guided diagnosis, one click.
DIAGNOSE_ACTION = "diagnose_start"


def _diagnose_button() -> ButtonElement:
    return button("Diagnose a run", DIAGNOSE_ACTION, "diagnose")


def _hit(hit: Hit, index: int) -> list[Block]:
    lines = [f"*{escape(hit.title)}*  ·  _{escape(hit.kind)}_"]
    label = wording.verification_label(hit.verification)
    if label:
        lines[0] += f"  ·  _{label}_"
    if hit.byline:
        lines.append(escape(hit.byline))
    lines.append(prose(hit.one_line))
    if hit.url:
        lines.append(link(hit.url, hit.url))
    out: list[Block] = [section("\n".join(lines))]
    if hit.points_to:  # a signal: what the map reads into it
        out.append(context("Points to " + prose(hit.points_to)))
    if hit.why:
        out.append(context("Matched on: " + escape("; ".join(hit.why))))
    out.append(
        actions(
            [
                button(
                    "Full entry",
                    f"entry_show_{index}",
                    hit.id,
                    style="primary" if index == 0 else None,
                ),
                button("Related", f"entry_related_{index}", hit.id),
            ]
        )
    )
    return out


def answer_blocks(
    answer: Answer, shareable: bool = False, shared_by: str | None = None
) -> list[Block]:
    """An answer card; "did you mean" when two are close; what the bot knows when nothing fits."""
    question = cut(escape(answer.query), 500)
    blocks: list[Block] = []
    if shared_by:
        blocks.append(context(f"{mention(shared_by)} asked: _{question}_"))
    if answer.english_only:
        blocks.append(context(escape(wording.english_only(answer.shows_entries))))
    if answer.corrections:
        blocks.append(context(escape(wording.corrected(answer.corrections))))
    if (
        answer.tier == "guess"
    ):  # one compact card: heading, entries, their buttons, "Diagnose a run"
        listing = "\n".join(
            f"• *{escape(h.title)}* ({escape(h.kind)}): {prose(h.one_line)}" for h in answer.guesses
        )
        blocks.append(section(escape(wording.GUESS) + "\n" + listing))
        blocks.append(context(wording.about_your_run(DIAGNOSE)))
        entries = [
            button(h.short or h.title, f"entry_show_{10 + i}", h.id)
            for i, h in enumerate(answer.guesses)
        ]
        blocks.append(actions(entries + [_diagnose_button()], block_id="diagnose"))
        return fit(blocks)
    if not answer.results:
        blocks.append(
            section(
                escape(wording.nothing_relevant(answer.query))
                + "\n"
                + escape(wording.known_topics(answer.known_topics))
            )
        )
        blocks.append(context(wording.about_your_run(DIAGNOSE)))
        blocks.append(
            actions(
                [
                    _diagnose_button(),
                    button("Show the stages", "stages_show", "stages"),
                    button("How to ask", "help_show", "help"),
                ]
            )
        )
        return blocks
    shown = answer.results[:2] if answer.close_call else answer.results[:1]
    if answer.close_call:
        blocks.append(section(wording.CLOSE_CALL))
    for i, hit in enumerate(shown):
        blocks += _hit(hit, i)
    others = answer.results[len(shown) :]
    if others:
        listing = "\n".join(f"• *{escape(h.title)}* ({escape(h.kind)})" for h in others[:5])
        blocks.append(section("Also relevant:\n" + listing))
        blocks.append(
            actions(
                [
                    button(h.short or h.title, f"entry_show_{10 + i}", h.id)
                    for i, h in enumerate(others[:5])
                ]
            )
        )
    if shareable:
        blocks.append(
            actions([button("Share in channel", "answer_share", answer.query)], block_id="share")
        )
    return fit(blocks)


def answer_text(answer: Answer) -> str:
    note = wording.english_only(answer.shows_entries) + " " if answer.english_only else ""
    return note + _answer_text(answer)


def _answer_text(answer: Answer) -> str:
    if answer.tier == "guess":
        return wording.GUESS + " " + "; ".join(h.title for h in answer.guesses)
    if not answer.results:
        return wording.nothing_relevant(answer.query)
    top = answer.results[0]
    return f"{top.title} ({top.kind}): {top.one_line}"
