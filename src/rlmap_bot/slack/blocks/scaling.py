"""A forecast and a comparison of runs as Block Kit: the same sentences as the terminal
(``results.scaling``), every name from a log escaped."""

from __future__ import annotations

from slack_sdk.models.blocks import Block

from rlmap_bot.results.scaling import (
    Comparison,
    Forecast,
    forecast_line,
    forecast_sentences,
    interval,
)
from rlmap_bot.slack.blocks.common import SECTION_LIMIT, context, fit, section
from rlmap_bot.slack.markup import cut, escape


def forecast_blocks(f: Forecast) -> tuple[list[Block], str]:
    """Blocks and notification text for one run's forecast."""
    head = f"*{escape(f.quantity.capitalize())}* of `{escape(f.source)}` (`{escape(f.metric)}`)"
    if f.points:
        head += f", {f.points} points, steps {f.first_step}-{f.last_step}"
    body = "\n".join(escape(s) for s in forecast_sentences(f))
    blocks: list[Block] = [section(cut(f":crystal_ball: {head}\n{body}", SECTION_LIMIT))]
    if not f.abstain:
        blocks.append(
            context(
                escape(
                    f"ScaleRL's sigmoid fitted against {f.axis}; {f.early_rule}; intervals are "
                    "80%, calibrated on real runs."
                )
            )
        )
    return fit(blocks), escape(forecast_line(f))


def comparison_blocks(c: Comparison) -> tuple[list[Block], str]:
    """Blocks and notification text for runs compared."""
    title = f":scales: *Comparing {len(c.forecasts)} runs* on `{escape(c.metric)}`"
    lines = [f"{title}, aligned on {c.axis}", escape(c.verdict)]
    rows = []
    for label, f in zip(c.labels, c.forecasts, strict=False):
        if f.abstain:
            rows.append(f"• `{escape(label)}`: not enough to forecast yet ({escape(f.abstain)})")
        elif f.asymptote is not None:
            reached = f", {round(100 * f.reached)}% reached" if f.reached is not None else ""
            rows.append(f"• `{escape(label)}`: ceiling {interval(f.asymptote)}{reached}")
    blocks: list[Block] = [section(cut("\n".join(lines + rows), SECTION_LIMIT))]
    if c.differences:
        diffs = [
            f"• `{escape(d.reading)}`: "
            + "; ".join(f"{escape(k)} {escape(v)}" for k, v in d.values.items())
            for d in c.differences
        ]
        blocks.append(section(cut("*Readings that differ*\n" + "\n".join(diffs), SECTION_LIMIT)))
    if c.batch is not None:
        b = c.batch
        said = [
            f"*Batch {b.batch_small:g} against {b.batch_large:g}* (target {b.target:.3g})",
        ]
        if b.steps_small is not None and b.steps_large is not None:
            said.append(f"{b.steps_small:,} steps against {b.steps_large:,}")
        if b.speedup is not None:
            said.append(f"`batch_doubling_speedup` = {b.speedup:.2f}x")
        if b.wall_clock:
            said.append(f"sooner on the clock: `{escape(b.wall_clock)}`")
        if b.note:
            said.append(escape(b.note))
        blocks.append(section(cut("\n".join(said), SECTION_LIMIT)))
    return fit(blocks), escape(cut(c.verdict, 2900))
