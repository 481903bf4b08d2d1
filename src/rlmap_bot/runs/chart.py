"""``render_chart``: a PNG of the curves behind a verdict, with the judged windows shaded; ``draw``:
the chart of a run and its verdict, or None when the run has no curve to draw.

matplotlib is imported only here, lazily, with the Agg backend (no display);
the rest of the package never pays for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np

from rlmap_bot.results.diagnosis import Verdict, format_value
from rlmap_bot.runs.model import RunData
from rlmap_bot.runs.signals import Derivation

#: Panels in reading order: (title, y label, quantities drawn, signals whose windows are shaded).
PANELS = (
    (
        "Task reward and held-out score",
        "score",
        ("task_reward", "heldout_score"),
        ("proxy_reward_trend", "heldout_score_trend"),
    ),
    ("Policy entropy", "nats / token", ("entropy",), ("entropy_trend",)),
    ("Response length", "tokens", ("response_length",), ("length_growth",)),
    (
        "Time shares",
        "share of time",
        ("trainer_idle", "env_time_share"),
        ("rollout_wait_fraction", "env_time_fraction"),
    ),
    ("Gradient norm", "norm", ("grad_norm",), ("grad_norm_spikes",)),
    (
        "Truncation and zero-advantage shares",
        "share",
        ("truncation", "zero_std_fraction"),
        ("truncation_rate", "zero_advantage_fraction"),
    ),
    ("Policy loss", "loss", ("policy_loss", "loss"), ("loss_divergence",)),
)
LABELS = {
    "task_reward": "train reward",
    "heldout_score": "held-out score",
    "trainer_idle": "trainer waits for rollouts",
    "env_time_share": "environment share of rollout",
    "truncation": "truncated",
    "zero_std_fraction": "zero-advantage prompts",
    "policy_loss": "policy loss",
    "loss": "loss",
}
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


def _shown(value: object) -> str:
    """A signal value on a chart: yes/no, three significant figures, or the word."""
    if isinstance(value, float):
        return f"{value:.3g}"
    return format_value(value)


def _short(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n - 1] + "..."


def render_chart(
    run: RunData,
    derivation: Derivation,
    verdict_scores: Mapping[str, float] | None = None,
    path: Path | str = "run.png",
) -> Path:
    """Draw the run's key curves to ``path`` (PNG); returns the path.

    Recent windows are shaded blue and baselines grey; spikes and NaN/inf steps are
    marked red.  ``verdict_scores`` (stage -> score) adds a bar panel.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    panels = [p for p in PANELS if any(derivation.series(q) is not None for q in p[2])]
    n = len(panels) + (1 if verdict_scores else 0)
    if n == 0:
        raise ValueError("nothing to draw: no curve maps to a signal")
    cols = 2 if n > 1 else 1
    rows = (n + cols - 1) // cols
    width, height = 6.4 * cols, 3.1 * rows + 0.8
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False)
    # Margins fixed in inches (the title above, the key below, tick labels and axis names beside
    # each panel) rather than measured by tight_layout, which draws the whole figure once more to
    # measure it: that pass was about 40% of a chart's time.
    top, bottom, left, right, gap_x, gap_y = 0.8, 0.85, 0.85, 0.2, 1.45, 0.75
    panel_w = (width - left - right - (cols - 1) * gap_x) / cols
    panel_h = (height - top - bottom - (rows - 1) * gap_y) / rows
    fig.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        top=1 - top / height,
        bottom=bottom / height,
        wspace=gap_x / panel_w,
        hspace=gap_y / panel_h,
    )
    title = f"{run.run_id or Path(run.path).name}  ({run.format}"
    title += f", {derivation.run.framework})" if derivation.run.framework else ")"
    fig.suptitle(_short(title, 100), fontsize=12, fontweight="bold")
    flat = [ax for row in axes for ax in row]
    for ax, (name, ylabel, quantities, signals) in zip(
        flat, panels, strict=False
    ):  # the grid may have a spare cell
        _panel(ax, derivation, name, ylabel, quantities, signals)
    if verdict_scores:
        _scores(flat[len(panels)], verdict_scores)
    for ax in flat[n:]:
        ax.set_visible(False)
    fig.text(
        0.5,
        0.005,
        "blue band: the recent window judged   grey band: its baseline   green band, dots: the "
        "first points, their level   grey dots: the level now\norange dashes: a quarter of the "
        "first level (collapsed below it)   red dashes: gradient spikes, NaN/inf steps",
        ha="center",
        va="bottom",
        fontsize=7.5,
        color="0.3",
    )
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _panel(ax, derivation: Derivation, name: str, ylabel: str, quantities, signals) -> None:
    marks: set[int] = set()
    notes = []
    for i, q in enumerate(quantities):
        series = derivation.series(q)
        if series is None:
            continue
        ok = np.isfinite(series.values)
        style = (
            dict(marker="o", markersize=3, linewidth=1.2) if ok.sum() <= 60 else dict(linewidth=0.9)
        )
        ax.plot(
            series.steps[ok],
            series.values[ok],
            color=COLOURS[i % len(COLOURS)],
            label=_short(f"{LABELS.get(q, q)}: {series.label}", 60),
            **style,
        )
        marks.update(int(s) for s in series.steps[~ok])
    shaded = False
    for signal in signals:
        src = derivation.signal_sources.get(signal)
        if src is None:
            continue
        if (
            not shaded and signal != "loss_divergence"
        ):  # one signal's windows a panel, or they overlap unreadably
            if src.baseline_start is not None and src.baseline_end is not None:
                ax.axvspan(src.baseline_start, src.baseline_end, color="0.6", alpha=0.22, lw=0)
            if src.start is not None and src.end is not None:
                ax.axvspan(src.start, src.end, color="#1f77b4", alpha=0.12, lw=0)
            _levels(ax, src)
            shaded = True
        marks.update(src.marks)
        value = derivation.signals.get(signal)
        notes.append(f"{signal} = {_shown(value)}")
    for step in sorted(marks):
        ax.axvline(step, color="#d62728", linestyle="--", linewidth=1.0, alpha=0.8)
    low, high = ax.get_ylim()
    if name == "Gradient norm" and low > 0 and high / low > 20:  # log only when spikes span decades
        from matplotlib.ticker import FormatStrFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FormatStrFormatter("%.2g"))
        ax.yaxis.set_minor_formatter(FormatStrFormatter("%.2g"))
        ylabel = "norm (log scale)"
    else:
        # Tick labels of at most about five characters (large values as 1.2 with an x1e4 above the
        # axis), so the fixed left margin always holds them and the axis name beside them.
        ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 4))
    if ylabel.startswith("share"):
        top = max(ax.get_ylim()[1], 0.05)
        ax.set_ylim(0, min(1.0, top * 1.15) if top < 0.9 else 1.02)
    ax.set_title(name, fontsize=10)
    ax.set_xlabel("step", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.25)
    ax.legend(fontsize=6.5, loc="upper left", framealpha=0.8)
    if notes:
        ax.text(
            0.99,
            0.02,
            "\n".join(notes),
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            bbox=dict(boxstyle="round,pad=0.25", facecolor="white", alpha=0.85, edgecolor="0.8"),
        )


def _levels(ax, src) -> None:
    """The run's first points (green band), its first level and the level now (dotted), and the
    collapse line a quarter of the way down (dashed), so a fall before the judged windows shows."""
    from rlmap_bot.runs.stats import COLLAPSED_SHARE

    if src.first_level is None or src.level is None:
        return
    if src.first_start is not None and src.first_end is not None:
        ax.axvspan(
            src.first_start,
            max(src.first_end, src.first_start + 0.5),
            color="#2ca02c",
            alpha=0.25,
            lw=0,
        )
    ax.axhline(src.first_level, color="#2ca02c", linestyle=":", linewidth=1.0)
    ax.axhline(src.level, color="0.3", linestyle=":", linewidth=1.0)
    if (
        src.first_level > 0 and src.level < 0.5 * src.first_level
    ):  # only where it is in play: it would stretch the axis
        ax.axhline(
            COLLAPSED_SHARE * src.first_level,
            color="#ff7f0e",
            linestyle="--",
            linewidth=0.8,
            alpha=0.7,
        )


def _scores(ax, scores: Mapping[str, float]) -> None:
    stages = list(scores)
    values = [float(scores[s]) for s in stages]
    colours = ["#d62728" if v == max(values) and v > 0 else "0.6" for v in values]
    ax.barh(stages[::-1], values[::-1], color=colours[::-1])
    ax.set_title("Stage scores (verdict)", fontsize=10)
    ax.set_xlabel("score", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.grid(axis="x", alpha=0.25)


def draw(run: RunData, derivation: Derivation, verdict: Verdict, path: str | Path) -> str | None:
    """The chart at ``path``; None when the run has no curve to draw."""
    scores = {r.title: r.score for r in verdict.ranking}
    try:
        return str(render_chart(run, derivation, scores, path=path))
    except ValueError:
        return None
