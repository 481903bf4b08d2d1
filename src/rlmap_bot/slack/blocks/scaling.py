"""A forecast and a comparison of runs as cards: what the fit says first (the ceiling, or which run
is ahead and how), then the few lines behind it, where it was read from, and where the chart is.
The sentences are the terminal's (``results.scaling``); every name from a log is escaped."""

from __future__ import annotations

from slack_sdk.models.blocks import Block

from rlmap_bot.results.scaling import (
    BatchDecision,
    Comparison,
    Forecast,
    at_ceiling,
    beyond_title,
    coming_down,
    forecast_line,
    forecast_sentences,
    interval,
    run_row,
    settles,
)
from rlmap_bot.slack.blocks.common import HEADER_LIMIT, SECTION_LIMIT, context, fit, section
from rlmap_bot.slack.markup import code, cut, escape, prose

FORECAST_ICON = ":crystal_ball:"
COMPARE_ICON = ":scales:"
#: Readings that differ shown on the card; the terminal and --json list every one.
DIFFERENCES_SHOWN = 4


def _header(icon: str, line: str) -> Block:
    """The first line, bold: a section, not a header, since it names runs as typed (escaped
    mrkdwn keeps a name such as ``<!channel>`` a name; a header's plain text would not)."""
    return section(f"{icon} *{escape(cut(line, HEADER_LIMIT))}*")


def forecast_title(f: Forecast) -> str:
    """The card's first line: the ceiling, or that there is none yet."""
    if f.abstain and f.fell:
        return "Down since its start; where it settles is not known yet"
    if f.abstain and f.peak is not None:
        return "Down from its best; where it settles is not known yet"
    if f.abstain or f.asymptote is None:
        return f"No forecast of the {f.quantity} yet"
    if f.fell:
        return f"Down since its start; settling near {interval(f.asymptote)}"
    if settles(f):
        return f"Settling near {interval(f.asymptote)}"
    if f.past_peak:
        return f"The {f.quantity} is past its best"
    if at_ceiling(f):
        return f"At its forecast ceiling, near {interval(f.asymptote)}"
    reached = f"; {round(100 * f.reached)}% of it reached" if f.reached is not None else ""
    return f"Ceiling near {interval(f.asymptote)}{reached}"


def forecast_blocks(f: Forecast, chart_where: str | None = None) -> tuple[list[Block], str]:
    """The forecast card and its notification text."""
    said = forecast_sentences(f)
    # The title says the forecast line's head, except a fall's figures (from what to what): kept;
    # the rest of the line (what more steps buy, where a run past its best settles) is said.
    if said and said[0].startswith("Forecast:") and not (f.fell or (f.abstain and coming_down(f))):
        said = [*beyond_title(f), *said[1:]]
    blocks: list[Block] = [_header(FORECAST_ICON, forecast_title(f))]
    if said:
        blocks.append(section(cut("\n".join(f"• {escape(s)}" for s in said), SECTION_LIMIT)))
    where = f"{escape(f.quantity.capitalize())} {code(f.metric)} of {code(f.source)}"
    if f.points:
        where += f", {f.points} points, steps {f.first_step}-{f.last_step}"
    notes = [where]
    if not f.abstain:
        notes.append(
            escape(f"ScaleRL's sigmoid fitted against {f.axis}; {f.early_rule}; 80% intervals")
        )
    if chart_where:
        notes.append(escape(chart_where))
    blocks.append(context(" · ".join(notes)))
    return fit(blocks), escape(forecast_line(f))


def comparison_title(c: Comparison) -> str:
    """The card's first line: which run is ahead, and how (a higher ceiling, or only faster)."""
    if c.kind == "both" and c.higher_ceiling and c.faster:
        if c.higher_ceiling == c.faster:
            return f"{c.higher_ceiling} has the higher ceiling and gets there faster"
        return f"{c.higher_ceiling} has the higher ceiling; {c.faster} is faster"
    if c.kind == "ceiling" and c.higher_ceiling:
        return f"{c.higher_ceiling} has the higher ceiling"
    if c.kind == "efficiency" and c.faster:
        return f"{c.faster} is only faster: the ceilings cannot be told apart"
    if c.kind == "none":
        return "No difference the fits can tell"
    return "Not enough to compare yet"


def batch_lines(b: BatchDecision) -> list[str]:
    """The batch decision in a few plain lines (escaped by the caller)."""
    lines = [f"Batch {b.batch_small:g} ({b.small}) against {b.batch_large:g} ({b.large}):"]
    if b.steps_small is not None and b.steps_large is not None:
        lines.append(
            f"to the common target {b.target:.3g}: {b.steps_small:,} steps against "
            f"{b.steps_large:,}"
        )
    if b.speedup is not None:
        lines.append(
            f"batch_doubling_speedup {b.speedup:.2f}x (2 is perfect scaling, 1 buys nothing)"
        )
    if b.wall_clock and b.seconds_small and b.seconds_large:
        lines.append(
            f"on the clock {b.wall_clock} gets there sooner ({b.seconds_small:,.0f} s at "
            f"{b.batch_small:g} against {b.seconds_large:,.0f} s at {b.batch_large:g})"
        )
    if b.note:
        lines.append(b.note)
    return lines


def comparison_blocks(c: Comparison, chart_where: str | None = None) -> tuple[list[Block], str]:
    """The comparison card and its notification text."""
    blocks: list[Block] = [_header(COMPARE_ICON, comparison_title(c))]
    rows = [prose(c.verdict)]
    for label, f in zip(c.labels, c.forecasts, strict=False):
        row = run_row(f)
        if row is not None:
            rows.append(f"• {code(label)}: {escape(row)}")
    blocks.append(section(cut("\n".join(rows), SECTION_LIMIT)))
    if c.differences:
        shown = c.differences[:DIFFERENCES_SHOWN]
        lines = [f"• {escape(d.said)}" for d in shown]
        if len(c.differences) > len(shown):
            lines.append(
                f"…and {len(c.differences) - len(shown)} more (`compare --json` lists all)"
            )
        blocks.append(section(cut("*Readings that differ*\n" + "\n".join(lines), SECTION_LIMIT)))
    if c.batch is not None:
        b = batch_lines(c.batch)
        blocks.append(
            section(cut(f"*{escape(b[0])}*\n" + "\n".join(escape(x) for x in b[1:]), SECTION_LIMIT))
        )
    notes = [f"{code(c.metric)}, aligned on {escape(c.axis)}"]
    notes += [escape(note) for note in c.notes]
    if chart_where:
        notes.append(escape(chart_where))
    blocks.append(context(" · ".join(notes)))
    return fit(blocks), escape(cut(comparison_title(c) + ". " + c.verdict, 2900))


def chart_caption(result: Forecast | Comparison) -> tuple[str, str, str, str]:
    """A chart's file name, the run or runs it shows, its title and its alt text."""
    if isinstance(result, Forecast):
        title = f"{result.source}: {result.quantity}, its fit and forecast"
        alt = "The curve so far, the fitted sigmoid, its 80% band and the forecast ahead"
        return "forecast.png", result.source, title, alt
    names = ", ".join(result.labels)
    title = f"{names}: {result.metric} side by side, with each run's forecast"
    alt = f"Each run's curve and its fitted forecast, aligned on {result.axis}"
    return "compare.png", names, title, alt
