"""Terminal text for forecasts and comparisons."""

from __future__ import annotations

from rlmap_bot.cli.render import list_item, text, wrapped
from rlmap_bot.results.scaling import (
    BatchDecision,
    Comparison,
    Forecast,
    forecast_sentences,
    run_row,
)


@text.register
def forecast_text(f: Forecast) -> str:
    head = f"{f.source}: {f.quantity} ({f.metric})"
    if f.points:
        head += f", {f.points} points, steps {f.first_step}-{f.last_step}"
    lines = [head]
    lines += [wrapped(s, "  ") for s in forecast_sentences(f)]
    if f.early_rule and not f.abstain:
        lines.append(
            wrapped(
                f"How: ScaleRL's sigmoid fitted against {f.axis}; {f.early_rule}; intervals are "
                f"80%, calibrated on real runs.",
                "  ",
            )
        )
    if f.chart:
        lines.append(f"Chart: {f.chart}")
    return "\n".join(lines)


def batch_text(b: BatchDecision) -> list[str]:
    lines = [
        (
            f"Batch {b.batch_small:g} ({b.small}) against {b.batch_large:g} ({b.large}), to the "
            f"common target {b.target:.3g}:"
        )
    ]
    if b.steps_small is not None and b.steps_large is not None:
        lines.append(
            list_item(
                f"{b.steps_small:,} steps at {b.batch_small:g}, {b.steps_large:,} at "
                f"{b.batch_large:g}"
            )
        )
    if b.speedup is not None:
        lines.append(
            list_item(
                f"batch_doubling_speedup = {b.speedup:.2f}x (2 is perfect scaling, 1 buys nothing)"
            )
        )
    if b.wall_clock:
        lines.append(
            list_item(
                f"on the clock: {b.wall_clock} gets there sooner ({b.seconds_small or 0:,.0f} s "
                f"against {b.seconds_large or 0:,.0f} s)"
            )
        )
    if b.note:
        lines.append(list_item(b.note))
    return lines


@text.register
def comparison_text(c: Comparison) -> str:
    lines = [f"Comparing {len(c.forecasts)} runs on {c.metric}, aligned on {c.axis}:"]
    lines.append(wrapped(c.verdict, "  "))
    for label, f in zip(c.labels, c.forecasts, strict=False):
        row = run_row(f)
        if row is not None:
            lines.append(list_item(f"{label}: {row}"))
    if c.differences:
        lines.append("Readings that differ:")
        for d in c.differences:
            lines.append(list_item(d.said))
    if c.batch is not None:
        lines += batch_text(c.batch)
    lines += [wrapped(note) for note in c.notes]
    if c.chart:
        lines.append(f"Chart: {c.chart}")
    return "\n".join(lines)
