"""The forecast chart: the curve so far, the fitted line, its 80% band and the forecast ahead; one
colour a run when several are compared."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from rlmap_bot.results.scaling import Forecast

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "..."


def draw_forecasts(
    forecasts: Sequence[Forecast], path: Path | str, labels: Sequence[str] | None = None
) -> Path:
    """One PNG with every forecast's curve, fit, band and ceiling; returns the path. ValueError
    when no forecast has points to draw."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    drawn = [f for f in forecasts if f.curve is not None and f.curve.x]
    if not drawn:
        raise ValueError("nothing to draw: no forecast has points")
    labels = list(labels or [f.source for f in forecasts])
    width, height = 8.0, 4.6
    fig, ax = plt.subplots(figsize=(width, height))
    # Margins fixed in inches (title above; axis name and key below; tick labels and axis name
    # left) rather than measured by tight_layout, which draws the figure once more to measure it.
    fig.subplots_adjust(
        left=0.95 / width, right=1 - 0.2 / width, top=1 - 0.45 / height, bottom=0.7 / height
    )
    for i, f in enumerate(forecasts):
        c = f.curve
        if c is None or not c.x:
            continue
        colour = COLOURS[i % len(COLOURS)]
        name = _short(labels[i] if i < len(labels) else f.source, 40)
        ax.plot(c.x, c.y, ".", ms=2.5, color=colour, alpha=0.45, label=f"{name}: logged")
        if c.fit_x:
            ax.plot(c.fit_x, c.fit_y, "-", lw=1.8, color=colour, label=f"{name}: forecast")
            ax.fill_between(c.fit_x, c.band_low, c.band_high, color=colour, alpha=0.15, lw=0)
        if c.early_until is not None:
            ax.axvspan(c.x[0], c.early_until, color="0.85", alpha=0.5, lw=0)
        if f.asymptote is not None:
            ax.axhline(f.asymptote.value, color=colour, ls="--", lw=0.9)
        if f.at is not None and f.last_step is not None and f.at.step > f.last_step:
            ax.errorbar(
                [f.at.step],
                [f.at.value],
                yerr=[[f.at.value - f.at.low], [f.at.high - f.at.value]],
                fmt="o",
                color=colour,
                capsize=4,
            )
    first = drawn[0]
    ax.set_xlabel(first.axis)
    ax.set_ylabel(_short(first.metric, 50))
    title = "Forecast" if len(drawn) == 1 else "Runs compared"
    ax.set_title(f"{title}: {_short(first.metric, 50)}", fontsize=11, fontweight="bold")
    # Tick labels of at most about five characters (large values as 1.2 with an x1e4 above the
    # axis), so the fixed left margin always holds them and the axis name beside them.
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 4))
    ax.legend(fontsize=7, loc="best")
    fig.text(
        0.5,
        0.005,
        "dots: logged   line: fit and forecast   band: 80% interval   dashes: ceiling (or where a "
        "falling run settles)   grey: early part left out",
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
