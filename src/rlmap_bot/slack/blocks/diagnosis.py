"""The diagnosis card: the current question with its buttons, then the verdict, updated in place."""

from __future__ import annotations

import json

from slack_sdk.models.blocks import ActionsBlock, Block, CheckboxesElement, HeaderBlock, Option

from rlmap_bot import wording
from rlmap_bot.results.diagnosis import Step, Verdict
from rlmap_bot.slack.blocks import verdicts
from rlmap_bot.slack.blocks.common import actions, button, context, plain, section
from rlmap_bot.slack.markup import escape, mention, prose

PICK_BLOCK = "diag_pick_block"
PICK_ACTION = "diag_pick"


# Slack's checkboxes element holds at most 10 options: a longer list is shown as several groups,
# the first named PICK_ACTION, the next PICK_ACTION_2 and so on.
PICK_GROUP = 10


def picked(body: dict) -> list[str]:
    """The values ticked in the card's checkboxes (every group), from a click's ``state``."""
    block = ((body.get("state") or {}).get("values") or {}).get(PICK_BLOCK, {})
    numbers = {PICK_ACTION: 1}
    numbers.update((f"{PICK_ACTION}_{n}", n) for n in range(2, len(block) + 2))
    groups = sorted(((numbers[k], v) for k, v in block.items() if k in numbers), key=lambda g: g[0])
    return [o.get("value", "") for _, g in groups for o in g.get("selected_options") or []]


def action_value(session_id: str, signal: str, extra: str = "") -> str:
    return json.dumps({"s": session_id, "q": signal, "v": extra}, separators=(",", ":"))


def parse_action_value(value: str) -> dict:
    data = json.loads(value)
    if not isinstance(data, dict) or "s" not in data:
        raise ValueError("not a diagnosis button")
    return data


def question_blocks(step: Step, note: str | None = None, by: str | None = None) -> list[Block]:
    """The current question of a diagnosis, as the card that is updated in place."""
    q = step.question
    assert q is not None
    answered = len(step.session.answers)
    blocks: list[Block] = [
        HeaderBlock(text=plain(f"Diagnosis · {q.progress or f'question {q.number}'}")),
        section(f"*{escape(q.title)}*\n{prose(q.text)}"),
        context(f"How to measure: {prose(q.how_to_measure)}"),
    ]
    # it stopped asking: what would tell most comes first, the question stays answerable
    if step.paused:
        checks = "\n".join(
            f"{i}. *{escape(c.title)}*: {prose(c.how_to_measure)}"
            for i, c in enumerate(step.paused, 1)
        )
        blocks[1:1] = [section(f"{prose(wording.PAUSED)}\n{checks}")]
    if q.multiple:  # several may apply: tick boxes, then Continue
        options = [Option(text=plain(p.label, 75), value=str(p.value)) for p in q.presets]
        groups = [options[i : i + PICK_GROUP] for i in range(0, len(options), PICK_GROUP)]
        blocks.append(
            ActionsBlock(
                block_id=PICK_BLOCK,
                elements=[
                    *(
                        CheckboxesElement(
                            action_id=PICK_ACTION if i == 0 else f"{PICK_ACTION}_{i + 1}",
                            options=group,
                        )
                        for i, group in enumerate(groups)
                    ),
                    button(
                        "Continue",
                        "diag_choose",
                        action_value(step.session.id, q.signal),
                        style="primary",
                    ),
                ],
            )
        )
    else:
        presets = [
            button(p.label, f"diag_preset_{i}", action_value(step.session.id, q.signal, str(i)))
            for i, p in enumerate(q.presets[:20])
        ]
        if presets:
            blocks.append(actions(presets, block_id="diag_presets"))
    controls = [
        button(
            "Don't know" if not q.multiple else "None of these",
            "diag_skip",
            action_value(step.session.id, q.signal),
        )
    ]
    if q.can_go_back:
        controls.append(button("Back", "diag_back", action_value(step.session.id, q.signal)))
    controls.append(
        button(
            "Stop: verdict now",
            "diag_stop",
            action_value(step.session.id, q.signal),
            style="danger",
        )
    )
    blocks.append(actions(controls, block_id="diag_controls"))
    hint = (
        f"Or reply in this thread: {q.answer_hint}" if q.answer_hint else "Or reply in this thread"
    )
    leaning = step.leaning
    status = f"{hint}. {answered} answered so far."
    if leaning is not None and leaning.ranking and leaning.ranking[0].score > 0:
        status += (
            f" Leaning: {escape(leaning.ranking[0].title)} ({leaning.ranking[0].score:g} points)."
        )
    if note:
        status = f"{mention(by) + ': ' if by else ''}{prose(note)} · {status}"
    blocks.append(context(status))
    return blocks


def question_text(step: Step) -> str:
    q = step.question
    return f"Diagnosis question {q.number}: {q.text}" if q else "Diagnosis"


def verdict_blocks(
    verdict: Verdict,
    note: str | None = None,
    by: str | None = None,
    details: str | None = None,
) -> list[Block]:
    """The verdict card (:mod:`rlmap_bot.slack.blocks.verdicts`): three lines, a few readings and
    the Details button carrying ``details``."""
    return verdicts.brief_blocks(verdict, details=details, note=note, by=by)


def verdict_text(verdict: Verdict) -> str:
    return verdict.summary


def step_blocks(
    step: Step, note: str | None = None, by: str | None = None, details: str | None = None
) -> list[Block]:
    return (
        verdict_blocks(step.verdict, note, by, details)
        if step.verdict is not None
        else question_blocks(step, note, by)
    )


def step_text(step: Step) -> str:
    return verdict_text(step.verdict) if step.verdict is not None else question_text(step)
