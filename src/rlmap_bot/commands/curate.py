"""Curation commands: suggest a paper, choose the
curators' channel, and the approved additions' upkeep.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rlmap_bot import wording
from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.declare import Said
from rlmap_bot.commands.registry import Param, Registry
from rlmap_bot.errors import UsageError

if TYPE_CHECKING:
    from rlmap_bot.curation.service import Cards, Curation
    from rlmap_bot.results.curation import AdditionList, Candidate, CurationForm, Decision
    from rlmap_bot.results.general import Notice

CLI = frozenset({"cli"})
SLACK = frozenset({"slack"})
REFERENCE = (
    "an arXiv id, an arxiv.org abs or pdf URL, or arXiv's DOI (10.48550/arXiv.ID); a paper the "
    "catalog has (by its id, or its title) is said at once"
)


def register(registry: Registry) -> None:
    registry.command(
        "suggest",
        Said(
            slack="propose an arXiv paper for the catalog: the curators decide",
            terminal="show an arXiv paper as a candidate for the catalog, with the stages it would "
            "get (in Slack, `/rlmap suggest` sends it to the curators)",
        ),
        Param("reference", REFERENCE, kind="rest", required=True, metavar="ARXIV"),
        surfaces=frozenset({"cli", "slack"}),
        json=True,
        strict=True,
        order=30,
        examples=("suggest 2305.18290", "suggest https://arxiv.org/abs/2305.18290"),
    )(suggest)
    registry.command(
        "curate here",
        "send paper suggestions to this channel (workspace admins)",
        surfaces=SLACK,
        strict=True,
        admin=True,
        order=31,
    )(curate_here)
    registry.command(
        "kb additions",
        "papers approved from Slack: list, remove ID, or export DIR as knowledge files",
        Param(
            "action",
            "list, remove or export",
            kind="arg",
            required=True,
            choices=("list", "remove", "export"),
            metavar="list|remove|export",
        ),
        Param(
            "target", "the entry id (remove) or the folder (export)", kind="arg", metavar="[ID|DIR]"
        ),
        surfaces=frozenset({"cli", "slack"}),
        json=True,
        strict=True,
        order=64,
        examples=("kb additions list", "kb additions export knowledge/papers"),
    )(kb_additions)
    # The buttons and forms of a suggestion's card in the curators' channel.
    suggestion = Param("suggestion", "the suggestion's id", kind="arg", required=True, metavar="ID")
    registry.command(
        "curate approve",
        "approve a suggestion with its proposed tags, or with the tags a curator chose",
        suggestion,
        Param("stage", "a stage the paper belongs to, the main one first", multiple=True),
        Param("subtopic", "a subtopic the paper belongs to", multiple=True),
        Param("summary", "the entry's one-line summary"),
        Param("fact", "a key fact of the paper", multiple=True),
        surfaces=SLACK,
        hidden=True,
    )(curate_approve)
    registry.command(
        "curate edit",
        "the form to choose a suggestion's tags, summary and facts before approving it",
        suggestion,
        surfaces=SLACK,
        hidden=True,
    )(curate_edit)
    registry.command(
        "curate reject",
        "reject a suggestion with a reason (without one: the form that asks for it)",
        suggestion,
        Param("reason", "why, for the suggester", kind="rest", metavar="REASON"),
        surfaces=SLACK,
        hidden=True,
    )(curate_reject)


def _curation(ctx: Invocation) -> Curation:
    """The front-end's curation flow (Slack lends its own,
    with its arXiv client), else one over the core.
    """
    if ctx.curation is not None:
        return ctx.curation
    from rlmap_bot.curation.service import Curation

    return Curation(ctx.core)


def _cards(ctx: Invocation) -> Cards:
    """Where the suggestion's card is: decisions close it, so they need the chat's cards."""
    if ctx.curator_cards is None:
        raise UsageError("Suggestions are decided on their cards in the curators' channel.")
    return ctx.curator_cards


def curate_approve(
    ctx: Invocation,
    suggestion: str,
    stage: list[str] | None = None,
    subtopic: list[str] | None = None,
    summary: str | None = None,
    fact: list[str] | None = None,
) -> Decision:
    """Approve: with no ``stage`` given, the proposed tags (the card's Approve button); with the
    ones a curator chose in the edit form otherwise (an empty ``subtopic`` list is none)."""
    from rlmap_bot.parts import plain
    from rlmap_bot.results.curation import Decision

    outcome = _curation(ctx).approve(
        suggestion,
        ctx.user,
        _cards(ctx),
        stages=list(stage) if stage is not None else None,
        subtopics=list(subtopic or []) if stage is not None else None,
        summary=summary or None,
        facts=list(fact or []),
    )
    text = plain(outcome.text)
    return Decision(text=text, parts=outcome.text, suggestion_id=suggestion, status="approved")


def curate_edit(ctx: Invocation, suggestion: str) -> CurationForm:
    return _form(ctx, suggestion, "edit")


def curate_reject(
    ctx: Invocation, suggestion: str, reason: str | None = None
) -> Decision | CurationForm:
    from rlmap_bot.parts import plain
    from rlmap_bot.results.curation import Decision

    if reason is None:
        return _form(ctx, suggestion, "reject")
    outcome = _curation(ctx).reject(suggestion, ctx.user, reason, _cards(ctx))
    text = plain(outcome.text)
    return Decision(text=text, parts=outcome.text, suggestion_id=suggestion, status="rejected")


def _form(ctx: Invocation, suggestion: str, kind: Literal["edit", "reject"]) -> CurationForm:
    """The form over a pending suggestion, for a curator (anyone else is refused)."""
    from rlmap_bot.results.curation import Choice, CurationForm

    found, candidate = _curation(ctx).open_suggestion(suggestion, ctx.user)
    core = ctx.core
    stages = [Choice(id=s.id, title=s.title) for s in core.stages()] if kind == "edit" else []
    subtopics = (
        sorted(
            (
                Choice(id=t.id, title=t.title)
                for t in core.store.all("topic")
                if getattr(t, "parent", None)
            ),
            key=lambda c: (c.id, c.title),
        )
        if kind == "edit"
        else []
    )
    return CurationForm(
        kind=kind,
        suggestion_id=found.id,
        candidate=candidate,
        stages=stages,
        subtopics=subtopics,
    )


def suggest(ctx: Invocation, reference: str) -> Candidate | Notice:
    from rlmap_bot.results.general import Notice

    curation = _curation(ctx)
    cards = ctx.curator_cards
    if cards is None:  # no curators' channel to post to (a terminal): show the candidate only
        return curation.describe(reference)
    from rlmap_bot.parts import plain

    outcome = curation.suggest(reference, ctx.team, ctx.channel, ctx.user, cards)
    return Notice(text=plain(outcome.text), parts=outcome.text)


def curate_here(ctx: Invocation) -> Notice:
    from rlmap_bot.results.general import Notice

    if not ctx.admin:
        raise UsageError(
            "Only the admins of this workspace (its Slack admins and owners, and anyone "
            "RLMAP_ADMINS names for it) can choose the curators' channel."
        )
    if ctx.io is None or not ctx.channel.startswith(("C", "G")):
        raise UsageError("Run `/rlmap curate here` in the channel the curators read (not in a DM).")
    ctx.core.state.curation.set_channel(ctx.team, ctx.channel, ctx.user)
    return Notice(
        text="made this the curators' channel: paper suggestions come here.",
        public=True,
        actor=ctx.user,
    )


def kb_additions(ctx: Invocation, action: str, target: str | None = None) -> AdditionList | Notice:
    from rlmap_bot.results.curation import AdditionList, AdditionRow
    from rlmap_bot.results.general import Notice

    if not ctx.local and not _curation(ctx).is_curator(ctx.user):
        raise UsageError("Only the curators in RLMAP_CURATORS can manage additions.")
    repo = ctx.core.state.curation
    if action == "list":
        import json

        rows = []
        for a in repo.additions("live"):
            data = json.loads(a.data)
            rows.append(
                AdditionRow(
                    id=a.entry_id,
                    title=data.get("title", ""),
                    arxiv=a.arxiv_id,
                    suggested_by=a.suggested_by,
                    approved_by=a.approved_by,
                    added=a.created_at[:10],
                )
            )
        return AdditionList(additions=rows)
    if not target:
        raise UsageError(
            f"`kb additions {action}` needs {'an entry id' if action == 'remove' else 'a folder'}"
        )
    if action == "remove":
        if not repo.set_status([target.strip().lower()], "removed"):
            raise UsageError(
                f"no live addition with id {target[:80]!r}; `kb additions list` shows them"
            )
        ctx.core.sync_additions()
        return Notice(text=f"Removed `{target.strip().lower()}` from the catalog's additions.")
    if not ctx.local:
        raise UsageError("`kb additions export` writes files; run it from the command line")
    from rlmap_bot.curation.export import export

    written = export(repo.additions("live"), Path(target))
    return Notice(
        text=f"Wrote {wording.counted(len(written), 'knowledge file')} to {target}"
        + "".join(f"\n  {p}" for p in written)
    )
