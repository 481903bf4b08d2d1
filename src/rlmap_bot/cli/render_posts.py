"""Terminal text for what the bot posts: digests, watch alerts and checks, suggested papers.

Registered on :func:`rlmap_bot.cli.render.text` when a result of theirs is first rendered.
"""

from __future__ import annotations

from rlmap_bot import wording
from rlmap_bot.cli.render import list_item, text, wrapped
from rlmap_bot.results.curation import AdditionList, Candidate
from rlmap_bot.results.digest import Digest
from rlmap_bot.results.watch import Alert, CheckResult, Watching
from rlmap_bot.wording.posts import alert_changes, alert_opening, alert_title


@text.register
def digest_text(digest: Digest) -> str:
    if digest.empty:
        return f"Nothing added to the catalog in {digest.period()}."
    lines = [digest.title, f"Covering {digest.period()}"]
    for group in digest.groups:
        lines += ["", f"{group.title}:"]
        for item in group.items:
            status = "updated" if item.status == "updated" else "new" if item.recent else "added"
            lines.append(
                f"  - [{status}] {item.title}"
                + (f" ({item.year})" if item.year else "")
                + f" [{item.id}]"
                + (f" · {item.byline}" if item.byline else "")
            )
            lines.append(wrapped(item.one_line, "      "))
            if item.suggested_by and item.approved_by:
                lines.append(
                    f"      suggested by {item.suggested_by}, approved by {item.approved_by}"
                )
            if item.url:
                lines.append(f"      {item.url}")
    if digest.more:
        lines += ["", f"...and {digest.more} more."]
    return "\n".join(lines)


def alert_text(alert: Alert) -> str:
    """One watch post as the terminal shows it (what Slack would get, without the markup): its
    title, then an alert's three lines, as its card opens with them."""
    lines = [f"[{alert.kind}] {alert_title(alert)}"]
    if alert.kind == "alert":
        lines += [list_item(line, "  ", "    ") for line in alert_opening(alert)]
    lines += [list_item(c) for c in alert_changes(alert)]
    if alert.kind == "alert":
        if alert.verdict_headline:
            lines.append(wrapped(alert.verdict_headline))
        if alert.ranking:
            lines.append(wrapped("Points: " + ", ".join(f"{t} {s:g}" for t, s in alert.ranking)))
        if alert.evidence:
            lines.append("  Evidence, from the logs:")
            for ev in alert.evidence:
                seen = ", ".join(f"{k}={v}" for k, v in ev.signals.items())
                lines.append(
                    list_item(
                        f"{seen} ({ev.stage} {ev.points:+g}): {ev.why} [{ev.source}]",
                        "    - ",
                        "      ",
                    )
                )
                lines += [list_item(p, "        from ", "          ") for p in ev.provenance]
        if alert.next_checks:
            lines.append("  Check next:")
            lines += [list_item(c, "    - ", "      ") for c in alert.next_checks]
        if alert.chart:
            lines.append("  (with the chart of the curves behind the verdict)")
    return "\n".join(lines)


@text.register
def check_text(result: CheckResult) -> str:
    span = (
        f"steps {result.first_step}-{result.last_step}"
        if result.first_step is not None
        else "no steps"
    )
    how = "incrementally" if result.mode == "lines" else "whole"
    lines = [
        (
            f"Checked {result.path}: {wording.counted(result.steps, 'step')} ({span}), "
            f"{result.format or 'unknown format'}, read {how} ({result.bytes_read:,} bytes)."
        )
    ]
    if result.problem:
        lines.append(wrapped(f"Problem: {result.problem}", ""))
    if result.verdict is not None:
        lines.append(result.verdict.headline + ".")
    if result.alerts:
        lines += ["", "A check would post:" if result.dry else "Posted:"]
        for alert in result.alerts:
            lines += [alert_text(alert), ""]
    else:
        lines.append("A check would post nothing." if result.dry else "Nothing was posted.")
    if result.withheld:
        lines.append(wrapped("Quiet watch, not posted: " + ", ".join(result.withheld), ""))
    if result.open_conditions:
        lines.append(wrapped("Open conditions: " + ", ".join(result.open_conditions), ""))
    return "\n".join(lines).rstrip()


@text.register
def candidate_text(candidate: Candidate) -> str:
    record = candidate.record
    authors = ", ".join(record.authors[:5]) + (
        " et al." if len(record.authors) > 5 or record.more_authors else ""
    )
    lines = [
        f"{record.title} ({record.arxiv_id}, {record.year or 'year unknown'})",
        wrapped(authors or "no authors given"),
        f"  {record.url} · {', '.join(record.categories) or 'no categories'}",
    ]
    if candidate.existing is not None:
        found = candidate.existing
        if found.status == "in_catalog":
            where = f", on {' and '.join(found.where)}" if found.where else ""
            lines.append(
                f"  Already in the catalog as {found.title} ({found.entry_id}){where}, matched by "
                f"{found.how}; `show {found.entry_id}` shows it."
            )
            if not candidate.stages and not candidate.subtopics:
                return "\n".join(lines)  # told from the catalog: nothing to propose
        elif found.status == "rejected":
            lines.append(
                f"  Rejected before by {found.by}" + (f": {found.reason}" if found.reason else ".")
            )
        else:
            lines.append(f"  Already suggested ({found.status}).")
    tags = lambda items: ", ".join(f"{t.id} {t.score:.2f}" for t in items) or "none"  # noqa: E731
    lines += [
        f"  Proposed stages: {tags(candidate.stages)}",
        f"  Proposed subtopics: {tags(candidate.subtopics)}",
        "",
    ]
    abstract = record.abstract if len(record.abstract) <= 1200 else record.abstract[:1199] + "…"
    lines.append(wrapped(abstract))
    return "\n".join(lines)


@text.register
def additions_text(result: AdditionList) -> str:
    if not result.additions:
        return (
            "No papers approved from Slack are live (exported ones retire once their file is in "
            "knowledge/)."
        )
    lines = [f"{wording.counted(len(result.additions), 'paper')} approved from Slack:"]
    for a in result.additions:
        lines.append(
            f"  {a.id}  {a.title} (arXiv {a.arxiv}; suggested by {a.suggested_by}, approved by "
            f"{a.approved_by}, {a.added})"
        )
    return "\n".join(lines)


@text.register
def watching_text(result: Watching) -> str:
    return wording.watching(result)
