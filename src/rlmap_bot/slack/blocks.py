"""Core results as Block Kit, built with ``slack_sdk.models.blocks``.

Everything here is pure: core models in, a list of blocks (or a home view)
out.  All text from users or the catalog is escaped for mrkdwn, so nobody can
make the bot ping @channel or forge a link; every message stays inside Slack's
limits (50 blocks, 3000 characters a section, 75 a button), cutting long text
with a "show more" button instead of letting Slack reject it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from rlmap_bot.diagnosis.engine import Verdict, format_value
from rlmap_bot.digest.content import Digest
from rlmap_bot.diagnosis.flow import Step
from rlmap_bot.knowledge.cards import Card
from rlmap_bot.search.engine import Answer

MAX_BLOCKS = 50
MAX_HOME_BLOCKS = 100
SECTION_LIMIT = 3000
HEADER_LIMIT = 150
BUTTON_TEXT_LIMIT = 75
BUTTON_VALUE_LIMIT = 2000
CONTEXT_LIMIT = 2000
FALLBACK_LIMIT = 3000


# -- text helpers -------------------------------------------------------------------------------
def escape(text: Any) -> str:
    """Neutralise Slack's control characters: no <!channel>, <@U..> or <url|forged> from user text."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_SLACK_MARKUP = re.compile(r"<([@#!][^>|]*)(?:\|([^>]*))?>|<([^>|]+)(?:\|([^>]*))?>")


def from_slack(text: str) -> str:
    """Plain text from Slack's message markup: mentions dropped, links and channels named, &amp; decoded."""

    def plain_markup(match: re.Match) -> str:
        special, special_label, url, label = match.groups()
        if special is not None:
            if special.startswith("#"):
                return "#" + (special_label or special[1:])
            return ""  # user and special mentions carry no meaning for the bot
        return label or url

    text = _SLACK_MARKUP.sub(plain_markup, text or "")
    return " ".join(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").split())


def who(user: str | None) -> str:
    """A real mention for a Slack user id, never for anything else."""
    return f"<@{user}>" if user and re.fullmatch(r"[UW][A-Z0-9]{2,}", user) else "someone"


def cut(text: str, limit: int, more: str = "…") -> str:
    """``text`` shortened to ``limit`` characters without breaking an escape sequence."""
    if len(text) <= limit:
        return text
    shortened = text[: limit - len(more)]
    amp = shortened.rfind("&")
    if amp != -1 and ";" not in shortened[amp:]:
        shortened = shortened[:amp]
    return shortened.rstrip() + more


def plain(text: str, limit: int = HEADER_LIMIT) -> PlainTextObject:
    return PlainTextObject(text=cut(str(text), limit), emoji=False)


def section(mrkdwn: str, accessory: ButtonElement | None = None) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=cut(mrkdwn, SECTION_LIMIT)), accessory=accessory)


def context(mrkdwn: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=cut(mrkdwn, CONTEXT_LIMIT))])


def button(text: str, action_id: str, value: str, style: str | None = None) -> ButtonElement:
    return ButtonElement(
        text=plain(text, BUTTON_TEXT_LIMIT), action_id=action_id, value=value[:BUTTON_VALUE_LIMIT], style=style
    )


def actions(buttons: list[ButtonElement], block_id: str | None = None) -> ActionsBlock:
    return ActionsBlock(elements=buttons[:25], block_id=block_id)


def fit(blocks: list[Block], limit: int = MAX_BLOCKS, tail: Block | None = None) -> list[Block]:
    """At most ``limit`` blocks; when some are dropped, ``tail`` (a "show more") ends the list."""
    if len(blocks) <= limit:
        return blocks
    keep = blocks[: limit - (1 if tail is not None else 0)]
    return keep + ([tail] if tail is not None else [])


def to_dicts(blocks: Iterable[Block]) -> list[dict]:
    """Validated dicts (slack_sdk checks every limit it knows on ``to_dict``)."""
    return [b.to_dict() for b in blocks]


def fallback(text: str) -> str:
    """The notification / screen-reader text that goes with blocks."""
    return cut(escape(text), FALLBACK_LIMIT)


# -- ask ----------------------------------------------------------------------------------------
def _hit_section(hit, index: int) -> list[Block]:
    lines = [f"*{escape(hit.title)}*  ·  _{escape(hit.kind)}_"]
    if hit.verification in {"unverified", "partial"}:
        lines[0] += "  ·  _" + ("listed in the source map, not independently verified" if hit.verification == "unverified"
                                else "partly verified") + "_"
    if hit.byline:
        lines.append(escape(hit.byline))
    lines.append(escape(hit.one_line))
    if hit.url:
        lines.append(f"<{escape(hit.url)}|{escape(hit.url)}>")
    out: list[Block] = [section("\n".join(lines))]
    if hit.why:
        out.append(context("Matched on: " + escape("; ".join(hit.why))))
    out.append(actions([
        button("Full entry", f"entry_show_{index}", hit.id, style="primary" if index == 0 else None),
        button("Related", f"entry_related_{index}", hit.id),
    ]))
    return out


def answer_blocks(answer: Answer, shareable: bool = False, shared_by: str | None = None) -> list[Block]:
    """An answer card; "did you mean" when two are close; what the bot knows when nothing fits."""
    question = escape(answer.query)
    blocks: list[Block] = []
    if shared_by:
        blocks.append(context(f"<@{escape(shared_by)}> asked: _{cut(question, 500)}_"))
    if answer.corrections:
        fixed = ", ".join(f"{escape(a)} → {escape(b)}" for a, b in answer.corrections.items())
        blocks.append(context(f"Searched with corrected spelling: {fixed}"))
    if not answer.results:
        known = ", ".join(escape(k) for k in answer.known_topics)
        blocks.append(section(
            f"Nothing in the map is relevant to _{cut(question, 500)}_.\n"
            f"I know about the five stages, the Scaling Laws topic and the papers on them: {known}."
        ))
        blocks.append(actions([
            button("Show the stages", "stages_show", "stages"),
            button("How to ask", "help_show", "help"),
        ]))
        return blocks
    shown = answer.results[:2] if answer.close_call else answer.results[:1]
    if answer.close_call:
        blocks.append(section("Two entries fit about equally well. Did you mean one of these?"))
    for i, hit in enumerate(shown):
        blocks += _hit_section(hit, i)
    others = answer.results[len(shown):]
    if others:
        listing = "\n".join(f"• *{escape(h.title)}* ({escape(h.kind)})" for h in others[:5])
        blocks.append(section("Also relevant:\n" + listing))
        blocks.append(actions([button(cut(h.title, 70), f"entry_show_{10 + i}", h.id) for i, h in enumerate(others[:5])]))
    if shareable:
        blocks.append(actions([button("Share in channel", "answer_share", answer.query)], block_id="share"))
    return fit(blocks)


def answer_text(answer: Answer) -> str:
    if not answer.results:
        return f"Nothing in the map is relevant to: {answer.query}"
    top = answer.results[0]
    return f"{top.title} ({top.kind}): {top.one_line}"


# -- entries ------------------------------------------------------------------------------------
def card_blocks(card: Card, full: bool = False) -> list[Block]:
    """A whole entry; long sections are cut unless ``full``, with a button for the rest."""
    limit = SECTION_LIMIT if full else 900
    blocks: list[Block] = [HeaderBlock(text=plain(card.title))]
    sub = f"_{escape(card.kind)}_ · `{escape(card.id)}`"
    if card.subtitle:
        sub += f" · {escape(card.subtitle)}"
    if card.url:
        sub += f" · <{escape(card.url)}|link>"
    blocks.append(context(sub))
    blocks.append(section(cut(escape(card.summary), limit)))
    truncated = False
    for sec in card.sections:
        body = f"*{escape(sec.heading)}*\n"
        if sec.text:
            body += escape(sec.text) + "\n"
        body += "\n".join(f"• {escape(item)}" for item in sec.items)
        if len(body) > limit:
            truncated = True
        blocks.append(section(cut(body, limit)))
    if card.links:
        names = ", ".join(f"{escape(l.title)} (`{escape(l.id)}`)" for l in card.links[:15])
        more = f" and {len(card.links) - 15} more" if len(card.links) > 15 else ""
        blocks.append(context(f"Linked: {names}{more}"))
    buttons = [button("Related", "entry_related_0", card.id)]
    if truncated and not full:
        buttons.insert(0, button("Show more", "entry_more", card.id))
    more_tail = actions([button("Show more", "entry_more", card.id)])
    return fit(blocks, MAX_BLOCKS - 1, tail=more_tail) + [actions(buttons)]


def related_blocks(title: str, links) -> list[Block]:
    if not links:
        return [section(f"Nothing is linked to *{escape(title)}* yet.")]
    blocks: list[Block] = [section(f"Entries linked to *{escape(title)}*:")]
    for start in range(0, min(len(links), 40), 5):
        chunk = links[start : start + 5]
        blocks.append(actions([button(cut(f"{l.title} ({l.kind})", 70), f"entry_show_{start + i}", l.id)
                               for i, l in enumerate(chunk)]))
    return fit(blocks)


def stages_blocks(stages) -> list[Block]:
    blocks: list[Block] = [HeaderBlock(text=plain("The RL Scaling Bottleneck Map: five stages"))]
    for stage in stages:
        blocks.append(section(f"*{stage.order}. {escape(stage.title)}*\n{escape(stage.one_line)}",
                              accessory=button("Open", f"entry_show_{stage.order}", stage.id)))
    return blocks


HELP = (
    "*Ask* me about the five stages of an RL system, the Scaling Laws topic and the papers on them:\n"
    "• mention me in a channel (`@rlmap what is reward hacking?`): I answer in a thread\n"
    "• send me a DM\n"
    "• `/rlmap ask QUESTION`: a private answer, with a button to share it\n\n"
    "*Diagnose* your run: `/rlmap diagnose` (or mention me with `diagnose`) opens a thread; answer with the "
    "buttons or type numbers in the thread, and get the stage that binds, with evidence and papers.\n\n"
    "*Other commands*: `/rlmap stages`, `/rlmap show ID`, `/rlmap help`."
)


def help_blocks(problem: str | None = None) -> list[Block]:
    blocks: list[Block] = []
    if problem:
        blocks.append(section(f":warning: {escape(problem)}"))
    blocks.append(section(HELP))
    return blocks


# -- diagnosis ----------------------------------------------------------------------------------
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
        HeaderBlock(text=plain(f"Diagnosis · question {q.number}")),
        section(f"*{escape(q.title)}*\n{escape(q.text)}"),
        context(f"How to measure: {escape(q.how_to_measure)}"),
    ]
    presets = [
        button(p.label, f"diag_preset_{i}", action_value(step.session.id, q.signal, str(i)))
        for i, p in enumerate(q.presets[:20])
    ]
    if presets:
        blocks.append(actions(presets, block_id="diag_presets"))
    controls = [button("Don't know", "diag_skip", action_value(step.session.id, q.signal))]
    if q.can_go_back:
        controls.append(button("Back", "diag_back", action_value(step.session.id, q.signal)))
    controls.append(button("Stop: verdict now", "diag_stop", action_value(step.session.id, q.signal), style="danger"))
    blocks.append(actions(controls, block_id="diag_controls"))
    hint = "Or reply in this thread with a value" if q.type in {"fraction", "number", "integer"} else "Or reply in this thread"
    if q.type == "fraction":
        hint += " (0.3 or 30%)"
    leaning = step.leaning
    status = f"{hint}. {answered} answered so far."
    if leaning is not None and leaning.ranking and leaning.ranking[0].score > 0:
        status += f" Leaning: {escape(leaning.ranking[0].title)} ({leaning.ranking[0].score:g} points)."
    if note:
        status = f"{who(by) + ': ' if by else ''}{escape(note)} · {status}"
    blocks.append(context(status))
    return blocks


def question_text(step: Step) -> str:
    q = step.question
    return f"Diagnosis question {q.number}: {q.text}" if q else "Diagnosis"


def verdict_blocks(verdict: Verdict, note: str | None = None, by: str | None = None) -> list[Block]:
    """The verdict card: binding stage, confidence, evidence, next checks, papers."""
    if verdict.binding_stage:
        head = f"Verdict: {verdict.binding_title} binds ({verdict.confidence:.0%} sure)"
    elif verdict.tied:
        names = " and ".join(r.title for r in verdict.ranking if r.stage in verdict.tied)
        head = f"Verdict: {names} tie ({verdict.confidence:.0%} it is one of them)"
    else:
        head = f"Verdict: no single stage stands out ({verdict.confidence:.0%})"
    blocks: list[Block] = [HeaderBlock(text=plain(head)), section(escape(verdict.summary))]
    ranking = "\n".join(
        f"{'*' if r.stage == verdict.binding_stage else ''}{escape(r.title)}{'*' if r.stage == verdict.binding_stage else ''}"
        f": {r.score:g} points" for r in verdict.ranking
    )
    blocks.append(section("*Stages by score*\n" + ranking))
    if verdict.evidence:
        lines = []
        for ev in verdict.evidence[:8]:
            seen = ", ".join(f"`{escape(k)}` = {escape(format_value(v))}" for k, v in ev.signals.items())
            moves = ", ".join(f"{escape(s)} {p:+g}" for s, p in ev.points.items())
            lines.append(f"• {seen} ({moves}): {escape(ev.why)} _[{escape(ev.source.title)}]_")
        if len(verdict.evidence) > 8:
            lines.append(f"…and {len(verdict.evidence) - 8} more")
        blocks.append(section("*Evidence*\n" + "\n".join(lines)))
    if verdict.next_checks:
        checks = "\n".join(f"• `{escape(c.signal)}`: {escape(c.question)}" for c in verdict.next_checks)
        blocks.append(section("*Check next*\n" + checks))
    if verdict.papers:
        blocks.append(section("*Read*"))
        blocks.append(actions([button(cut(p.title, 70), f"entry_show_{i}", p.id) for i, p in enumerate(verdict.papers[:10])]))
    if note:
        blocks.append(context(f"{who(by) + ': ' if by else ''}{escape(note)}"))
    return fit(blocks)


def verdict_text(verdict: Verdict) -> str:
    return verdict.summary


def step_blocks(step: Step, note: str | None = None, by: str | None = None) -> list[Block]:
    return verdict_blocks(step.verdict, note, by) if step.finished else question_blocks(step, note, by)


# -- App Home -----------------------------------------------------------------------------------
def home_view(stages, newest, sessions) -> View:
    """The map at a glance, newest entries, the user's open diagnoses, how to use the bot."""
    blocks: list[Block] = [HeaderBlock(text=plain("The RL Scaling Bottleneck Map"))]
    blocks.append(section("Locate the *binding constraint* of an RL system across five stages."))
    for stage in stages:
        blocks.append(section(f"*{stage.order}. {escape(stage.title)}*  {escape(stage.one_line)}",
                              accessory=button("Open", f"entry_show_{stage.order}", stage.id)))
    blocks.append(DividerBlock())
    blocks.append(section("*Newest in the catalog*"))
    for i, (entry, when) in enumerate(newest[:8]):
        blocks.append(section(f"*{escape(entry.title)}*  _{escape(entry.kind)}, added {escape(when)}_\n{escape(entry.one_line)}",
                              accessory=button("Open", f"entry_show_{20 + i}", entry.id)))
    blocks.append(DividerBlock())
    if sessions:
        blocks.append(section("*Your open diagnoses*"))
        for session in sessions[:10]:
            where = f"<#{escape(session.channel)}>" if session.channel.startswith(("C", "G")) else "a DM"
            blocks.append(section(
                f"In {where}: {len(session.answers)} answered, next `{escape(session.current or '-')}`, "
                f"updated {session.updated_at:%Y-%m-%d %H:%M} UTC"))
    else:
        blocks.append(section("*Your open diagnoses*\nNone. Start one with `/rlmap diagnose` in a channel."))
    blocks.append(DividerBlock())
    blocks.append(section(HELP))
    return View(type="home", blocks=fit(blocks, MAX_HOME_BLOCKS))


# -- digests ------------------------------------------------------------------------------------
def digest_blocks(digest: Digest, preview: bool = False) -> list[Block]:
    """A digest: header with the period, entries grouped by stage or subtopic, 'and N more' last."""
    head = ("Preview: " if preview else "") + digest.title
    blocks: list[Block] = [HeaderBlock(text=plain(head)), context(f"Covering {escape(digest.period())}"
                                                                   + (f" · filters: {escape(', '.join(digest.filters))}" if digest.filters else ""))]
    if digest.empty:
        blocks.append(section("Nothing new since the last digest."))
        return blocks
    tail_more = digest.more
    body: list[Block] = []
    for group in digest.groups:
        body.append(section(f"*{escape(group.title)}*"))
        for item in group.items:
            line = f"{'*New*' if item.status == 'new' else '*Updated*'} · *{escape(item.title)}*"
            if item.byline:
                line += f"\n{escape(item.byline)}"
            line += f"\n{escape(item.one_line)}"
            if item.url:
                line += f"\n<{escape(item.url)}|{escape(item.url)}>"
            body.append(section(line, accessory=button("Open", f"entry_show_{len(body)}", item.id)))
    room = MAX_BLOCKS - len(blocks) - 1
    if len(body) > room:
        dropped = [b for b in body[room:] if b.accessory is not None]
        tail_more += len(dropped)
        body = body[:room]
    blocks += body
    if tail_more:
        blocks.append(context(f"…and {tail_more} more, in the next digest; `/rlmap digest preview` shows them now."))
    return blocks


def digest_text(digest: Digest) -> str:
    return f"{digest.title} ({digest.period()})"
