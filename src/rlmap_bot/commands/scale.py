"""forecast and compare: what more compute buys a run, and how runs differ.

The handlers read runs through the same sources as ``diagnose --run`` (paths, W&B folders,
``wandb:``, ``mlflow:``, ``trackio:``), pick the curve, and hand plain arrays to
:mod:`rlmap_bot.scaling`, which returns the result models.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.projects import collection, one_run, run_access, runs_to_compare, unique
from rlmap_bot.commands.registry import Param, Registry
from rlmap_bot.errors import ConfigError, UsageError
from rlmap_bot.runs.helptext import FORMATS

if TYPE_CHECKING:
    import numpy as np

    from rlmap_bot.results.scaling import Comparison, Forecast
    from rlmap_bot.runs.model import RunData
    from rlmap_bot.runs.signals import Derivation

CLI = frozenset({"cli"})
AXES = ("steps", "tokens", "hours")
METRIC_HELP = (
    "the curve: a signal id (heldout_score_trend, proxy_reward_trend), a quantity (heldout_score, "
    "task_reward) or a logged column name; default the held-out score when logged densely enough, "
    "else the training reward"
)
AXIS_HELP = (
    "the x axis: steps (default), tokens (cumulative tokens, when logged) or hours (wall-clock, "
    "from logged step times)"
)


def register(registry: Registry) -> None:
    registry.command(
        "forecast",
        "forecast a run's ceiling: where it is heading, how much of it is reached, when to stop",
        Param(
            "source",
            "the run: a log file or folder, a W&B run folder, wandb:ENTITY/PROJECT/RUN_ID, "
            "mlflow:RUN_ID or trackio:PROJECT/RUN",
            kind="arg",
            required=True,
            metavar="SOURCE",
        ),
        Param("metric", METRIC_HELP, metavar="NAME"),
        Param(
            "to",
            "also forecast the level at this step",
            type="int",
            metavar="STEP",
            range=(1, None),
        ),
        Param("axis", AXIS_HELP, choices=AXES, metavar="AXIS"),
        Param(
            "format",
            "the log format, when it cannot be told from the content",
            metavar="NAME",
            choices=FORMATS,
        ),
        Param("run_id", "which run, when the path holds several", metavar="ID"),
        Param(
            "chart",
            "write a PNG of the curve, the fit and the forecast",
            type="path",
            metavar="FILE.png",
            surfaces=CLI,
        ),
        json=True,
        charts=True,
        order=6,
        examples=(
            "forecast runs/exp42/train.log",
            "forecast runs/exp42/train.log --metric task_reward --to 2000",
            "forecast wandb:my-team/grpo/abc123 --json",
        ),
    )(forecast)
    registry.command(
        "compare",
        "compare runs: which has the higher ceiling, which is only faster, what else differs",
        Param(
            "sources",
            "two runs or more, or one source that holds several: a CSV with a run column, a W&B "
            "project (wandb:ENTITY/PROJECT) or group (wandb:ENTITY/PROJECT/group:NAME), an MLflow "
            "experiment (mlflow:experiment:NAME), a Trackio project (trackio:PROJECT); of those, "
            "the 8 most recent finished or running runs",
            kind="rest",
            required=True,
            metavar="SOURCE",
        ),
        Param("metric", METRIC_HELP, metavar="NAME"),
        Param("axis", AXIS_HELP, choices=AXES, metavar="AXIS"),
        Param(
            "batch",
            "the runs' batch sizes in the order given (e.g. 256,512): adds the batch decision",
            metavar="B1,B2",
        ),
        Param(
            "chart",
            "write a PNG of the runs' curves and forecasts",
            type="path",
            metavar="FILE.png",
            surfaces=CLI,
        ),
        json=True,
        charts=True,
        order=7,
        examples=(
            "compare runs/a/train.log runs/b/train.log",
            "compare runs/b256.log runs/b512.log --batch 256,512",
            "compare exports/wandb_runs.csv --metric train/reward",
            "compare wandb:my-team/grpo/group:lr-sweep",
            "compare mlflow:experiment:grpo-kl",
        ),
    )(compare)


@dataclass
class Picked:
    """One run's chosen curve: its label, the metric's name, what it measures, x and y, and the
    step times when logged."""

    label: str
    metric: str
    quantity: str
    axis: str
    x: np.ndarray
    y: np.ndarray
    steps: np.ndarray
    seconds: np.ndarray | None
    derivation: Derivation
    runs: int = 1


def forecast(
    ctx: Invocation,
    source: str,
    metric: str | None = None,
    to: int | None = None,
    axis: str | None = None,
    format: str | None = None,
    run_id: str | None = None,
    chart: Path | None = None,
) -> Forecast:
    from rlmap_bot.scaling.outlook import outlook

    chart = _chart_file(ctx, chart, source)
    one_run(ctx, source)
    picked = _read(ctx, source, metric, format, run_id, axis or "steps")[0]
    if to is not None and picked.axis != "steps":
        raise UsageError("--to is a step: it goes with the steps axis")
    result = outlook(
        picked.x,
        picked.y,
        source=source,
        metric=picked.metric,
        quantity=picked.quantity,
        to=to,
        axis=picked.axis,
    )
    if picked.runs > 1 and run_id is None:
        result.notes.append(
            f"This source holds {picked.runs} runs; this is {picked.label}. Name another with "
            "--run-id, or compare them all: compare SOURCE."
        )
    result.chart = _draw([result], short_labels([source]), chart)
    return result


def compare(
    ctx: Invocation,
    sources: list[str] | str,
    metric: str | None = None,
    axis: str | None = None,
    batch: str | None = None,
    chart: Path | None = None,
) -> Comparison:
    from rlmap_bot.commands.differences import differences
    from rlmap_bot.scaling.compare import RunCurve, batch_decision, compare_runs

    names = sources.split() if isinstance(sources, str) else list(sources)
    chart = _chart_file(ctx, chart, names[0])
    picked: list[Picked] = []
    notes: list[str] = []
    if any(collection(name) for name in names):
        runs: list[tuple[str, str | None]] = []
        for name in names:
            listed, note = runs_to_compare(ctx, name, alone=len(names) == 1)
            runs += listed
            notes += [note] if note else []
        for name, label in unique(runs):
            picked += _read(ctx, name, metric, None, None, axis or "steps", command="compare")
            picked[-1].label = label or picked[-1].label
    elif len(names) == 1:
        picked = _read(
            ctx, names[0], metric, None, None, axis or "steps", every_run=True, command="compare"
        )
        if len(picked) < 2:
            raise UsageError(
                f"{names[0]} holds one run: give two runs or more to compare (compare A B)"
            )
    else:
        for name in names:
            picked += _read(ctx, name, metric, None, None, axis or "steps", command="compare")
    if not notes and not any(collection(name) for name in names):
        for p, label in zip(picked, short_labels([p.label for p in picked]), strict=False):
            p.label = label
    metrics = {p.metric for p in picked}
    curves = [RunCurve(p.label, p.x, p.y, p.seconds) for p in picked]
    result = compare_runs(
        curves,
        metric=" / ".join(sorted(metrics)),
        quantity=picked[0].quantity,
        axis=picked[0].axis,
    )
    result.differences = differences(picked, ctx.core.engine.signals)
    result.notes = notes
    if batch is not None:
        sizes = _batches(batch, len(picked))
        if len(picked) != 2:
            raise UsageError("--batch reads two runs that differ in batch size: give two")
        step_curves = [
            RunCurve(p.label, p.steps.astype(float), p.y, p.seconds, size)
            for p, size in zip(picked, sizes, strict=False)
        ]
        result.batch = batch_decision(step_curves[0], step_curves[1])
    result.chart = _draw(result.forecasts, result.labels, chart)
    return result


def short_labels(labels: list[str]) -> list[str]:
    """Each run named by its last part (a file's name, a tracker run's id), with its folder when
    two would read alike; a label that is still not unique keeps its whole text."""

    def tail(text: str, parts: int) -> str:
        bits = [b for b in text.replace(":", "/").split("/") if b]
        return "/".join(bits[-parts:]) if bits else text

    for parts in (1, 2, 3):
        short = [tail(label, parts) for label in labels]
        if len(set(short)) == len(short):
            return short
    return labels


def _batches(text: str, count: int) -> list[float]:
    try:
        sizes = [float(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        sizes = []
    if len(sizes) != count or any(s <= 0 for s in sizes):
        raise UsageError(
            f"--batch takes one positive size per run, in order (e.g. 256,512), not {text!r}"
        )
    return sizes


def _read(
    ctx: Invocation,
    source: str,
    metric: str | None,
    format: str | None,
    run_id: str | None,
    axis: str,
    every_run: bool = False,
    command: str = "forecast",
) -> list[Picked]:
    """The chosen curve of the run at ``source`` (of every run it holds, with ``every_run``)."""
    from rlmap_bot.runs.aliases import load_aliases
    from rlmap_bot.runs.signals import derive_signals
    from rlmap_bot.runs.sources import read_source
    from rlmap_bot.runs.sources.access import check_source

    access = run_access(ctx)
    aliases = load_aliases(ctx.core.knowledge_root)
    extra = [metric] if metric else []
    # A chat workspace reads paths under RLMAP_RUN_ROOTS only, as diagnose --run does.
    where = check_source(source, access, command)
    first = read_source(where, aliases, format, run_id, extra_metrics=extra, access=access)
    runs: list[RunData] = [first]
    if every_run and len(first.runs) > 1 and run_id is None:
        runs = [
            read_source(where, aliases, format, rid, extra_metrics=extra, access=access)
            for rid in first.runs
        ]
    out = []
    for run in runs:
        derivation = derive_signals(run, aliases)
        label = source if len(runs) == 1 else f"{run.run_id}"
        picked = _pick(run, derivation, metric, axis, label)
        picked.runs = max(1, len(first.runs))
        if len(runs) == 1 and len(first.runs) > 1 and first.run_id:
            picked.label = first.run_id
        out.append(picked)
    return out


def _pick(
    run: RunData, derivation: Derivation, metric: str | None, axis: str, label: str
) -> Picked:
    import difflib

    import numpy as np

    from rlmap_bot.runs.aliases import QUANTITIES
    from rlmap_bot.runs.forecast import CURVE_WORDS, default_curve
    from rlmap_bot.runs.quantities import SIGNAL_QUANTITY

    def finite(steps, values):
        ok = np.isfinite(values)
        return np.asarray(steps)[ok], np.asarray(values, dtype=float)[ok]

    if metric:
        quantity = SIGNAL_QUANTITY.get(metric, metric)
        if quantity in QUANTITIES:
            q = derivation.series(quantity)
            if q is None:
                raise UsageError(f"{label}: no {metric} was read from this run")
            steps, values = finite(q.steps, q.values)
            name, what = q.label, CURVE_WORDS.get(quantity, quantity.replace("_", " "))
        elif metric in run.series:
            steps, values = finite(run.series[metric].steps, run.series[metric].values)
            name, what = metric, "the metric asked for"
        else:
            near = difflib.get_close_matches(metric, run.metrics, n=1)
            raise UsageError(
                f"{label}: no metric '{metric}' in this run"
                + (f"; did you mean '{near[0]}'?" if near else "")
            )
    else:
        chosen = default_curve(derivation)
        if chosen is None:
            raise UsageError(
                f"{label}: neither a held-out score nor a training reward was read from this run; "
                f"name the curve with --metric"
            )
        steps, values = finite(chosen[1].steps, chosen[1].values)
        name, what = chosen[1].label, CURVE_WORDS[chosen[0]]
    seconds = None
    timing = derivation.series("time_step")
    if timing is not None:
        index = {int(s): float(v) for s, v in zip(timing.steps, timing.values, strict=False)}
        seconds = np.array([index.get(int(s), np.nan) for s in steps])
    x = steps.astype(float)
    if axis == "hours":
        if seconds is None or not np.isfinite(seconds).any():
            raise UsageError(f"{label}: no step times are logged, so there is no hours axis")
        x = np.nancumsum(seconds) / 3600.0
    elif axis == "tokens":
        x = _tokens(run, steps, label)
    return Picked(label, name, what, axis, x, values, steps, seconds, derivation)


#: Logged token counts: cumulative ones (TRL's num_tokens), or per step, summed here (tinker).
CUMULATIVE_TOKENS = ("num_tokens", "train/num_tokens")
PER_STEP_TOKENS = ("env/all/total_ac_tokens",)


def _tokens(run: RunData, steps, label: str):
    import numpy as np

    for name in CUMULATIVE_TOKENS + PER_STEP_TOKENS:
        s = run.series.get(name)
        if s is None:
            continue
        index = {int(a): float(b) for a, b in zip(s.steps, s.values, strict=False)}
        values = np.array([index.get(int(t), np.nan) for t in steps])
        if name in PER_STEP_TOKENS:
            values = np.nancumsum(values)
        if np.isfinite(values).all() and np.all(np.diff(values) >= 0):
            return values
    raise UsageError(
        f"{label}: no token count is logged (num_tokens, env/all/total_ac_tokens), so there is no "
        f"tokens axis"
    )


def _chart_file(ctx: Invocation, chart: Path | None, source: str) -> Path | None:
    from rlmap_bot.commands.diagnose import chart_path
    from rlmap_bot.runs.diagnose import chart_name

    path = Path(chart_name(source))
    own = chart is None and ctx.charts is not None
    if own:
        assert ctx.charts is not None
        chart = ctx.charts / f"{path.stem or 'run'}-forecast.png"
    if chart is None:
        return None
    return chart_path(Path(chart), path, create=own)


def _draw(forecasts, labels, chart: Path | None) -> str | None:
    if chart is None:
        return None
    from rlmap_bot.scaling.chart import draw_forecasts

    try:
        return str(draw_forecasts(forecasts, chart, labels))
    except ValueError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot write the chart {chart}: {exc.strerror or exc}") from None
