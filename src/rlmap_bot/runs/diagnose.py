"""``diagnose --run``: read, derive, judge (:mod:`rlmap_bot.runs.verdict`) and optionally draw
(:mod:`rlmap_bot.runs.chart`) in one call, and its options read (``--window``, ``--map``).

Front-ends (the CLI's ``diagnose --run``, a file dropped in a Slack diagnosis thread) call
:func:`diagnose_run` and render the :class:`RunDiagnosis` it returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from rlmap_bot.errors import UsageError
from rlmap_bot.results.runs import RunDiagnosis

if TYPE_CHECKING:
    from rlmap_bot.diagnosis.engine import Engine
    from rlmap_bot.runs.model import RunData
    from rlmap_bot.runs.signals import Derivation
    from rlmap_bot.runs.sources.access import Access


def parse_window(spec: str | None) -> int | float | None:
    """'200' (steps), '25%' or '0.25' (a share of the run); UsageError for anything else."""
    if spec is None or not str(spec).strip():
        return None
    text = str(spec).strip()
    try:
        if text.endswith("%"):
            share = float(text[:-1]) / 100
        elif "." in text:
            share = float(text)
        else:
            steps = int(text)
            if steps < 2:
                raise ValueError
            return steps
    except ValueError:
        raise UsageError(
            f"--window takes a number of steps (200) or a share of the run (25%), not {spec!r}"
        ) from None
    if not 0 < share <= 1:
        raise UsageError(f"--window share must be above 0% and at most 100%, not {spec!r}")
    return share


def parse_mapping(pairs: Iterable[str]) -> dict[str, str]:
    """'SIGNAL=METRIC' pairs as a dict; UsageError naming the first malformed one."""
    from rlmap_bot.runs.aliases import QUANTITIES
    from rlmap_bot.runs.quantities import SIGNAL_QUANTITY

    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, metric = str(pair).partition("=")
        name, metric = name.strip(), metric.strip()
        if not sep or not name or not metric or "=" in metric:
            raise UsageError(
                f"--map takes SIGNAL=METRIC (e.g. entropy_trend=policy/entropy), not {pair!r}"
            )
        if SIGNAL_QUANTITY.get(name, name) not in QUANTITIES:
            raise UsageError(
                f"--map {pair}: '{name}' is neither a signal read from logs nor a quantity; one of "
                f"{', '.join(sorted(SIGNAL_QUANTITY))}"
            )
        out[name] = metric
    return out


def read_and_derive(
    path: str | Path,
    knowledge_root: Path,
    format: str | None = None,
    run_id: str | None = None,
    window: int | float | None = None,
    mapping: dict[str, str] | None = None,
    access: Access | None = None,
) -> tuple[RunData, Derivation]:
    """The run at ``path`` (any source :func:`~rlmap_bot.runs.sources.read_source`
    takes) and the signals derived from it.
    """
    from rlmap_bot.runs.aliases import load_aliases
    from rlmap_bot.runs.signals import derive_signals

    aliases = load_aliases(knowledge_root)
    mapping = mapping or {}
    from rlmap_bot.runs.sources import read_source

    run = read_source(
        path,
        aliases,
        format=format,
        run_id=run_id,
        extra_metrics=tuple(mapping.values()),
        access=access,
    )
    return run, derive_signals(run, aliases, window=window, mapping=mapping)


def chart_name(source: str) -> str:
    """A file name for a source's chart: the log's name,
    a W&B folder's name, or a tracker run's id.
    """
    from rlmap_bot.runs.sources import is_tracker

    if is_tracker(source):
        prefix, _, rest = source.strip().partition(":")
        return rest.rstrip("/").rsplit("/", 1)[-1] or prefix
    path = Path(source)
    return (
        path.resolve().name if path.name in ("latest-run", "wandb") and path.exists() else path.name
    )


def diagnose_run(
    engine: Engine,
    knowledge_root: Path,
    path: str | Path,
    format: str | None = None,
    run_id: str | None = None,
    window: int | float | None = None,
    mapping: dict[str, str] | None = None,
    chart: str | Path | None = None,
    access: Access | None = None,
) -> RunDiagnosis:
    """Read, derive, diagnose and (with ``chart``) draw, in one call; ``access`` says what may be
    read (a chat workspace's paths only under its run roots)."""
    from rlmap_bot.runs.sources.access import check_source

    if access is not None:
        path = check_source(str(path), access)
    run, derivation = read_and_derive(
        path, knowledge_root, format, run_id, window, mapping, access=access
    )
    from rlmap_bot.runs.chart import draw
    from rlmap_bot.runs.verdict import verdict_for

    result = verdict_for(engine, derivation)
    if chart is not None:
        result.chart = draw(run, derivation, result, chart)
    return result
