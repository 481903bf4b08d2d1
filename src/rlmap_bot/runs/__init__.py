"""Diagnose a run from its own logs: read training metrics, derive diagnosis signals, draw them.

Front-ends (the ``diagnose --run PATH`` command, Slack, a watcher) need only these:

``read_run(path, format=None, run_id=None, extra_metrics=(), aliases=None) -> RunData``
    One run from a log file or folder.  The format is detected from content
    (``FORMATS``); several runs at one path are listed and one is picked with
    ``run_id``.  Only series that map to a signal (``aliases`` or
    ``extra_metrics``) are kept, as numpy arrays; every metric name is listed.

``RunReader(path, format=None, extra_metrics=(), aliases=None, state=None)``
    Incremental reading of a line-based log: ``.read_new() -> RunData`` returns
    only what was appended (reading only those bytes), ``.state`` is a
    serialisable :class:`ReaderState` to keep between checks.

``derive_signals(run, aliases=None, window=None, mapping=None) -> Derivation``
    Signal values valid for ``Engine.validate``, each with its source
    (metric, window, method, detail), the signals that could not be derived and
    why, and warnings (restarts, NaN/inf, sparse validation).

``render_chart(run, derivation, verdict_scores=None, path="run.png") -> Path``
    A PNG of the curves behind the verdict with the judged windows shaded.

``load_aliases(knowledge_root) -> AliasTable``
    The metric-name alias table from ``knowledge/metrics/*.yaml``; errors are
    ``KnowledgeError`` naming file, entry and field (for ``kb check``).

Every reading problem is a :class:`RunReadError`: one line, ``exit_code`` 2.
"""

from importlib import import_module
from typing import Any

# Attributes are imported on first use: `rlmap-bot --help` must not pay for numpy and friends.
_HOMES = {
    "AliasTable": "aliases",
    "load_aliases": "aliases",
    "render_chart": "chart",
    "Derivation": "derive",
    "SignalSource": "derive",
    "derive_signals": "derive",
    "FORMATS": "names",
    "RunReadError": "errors",
    "ReaderState": "incremental",
    "RunReader": "incremental",
    "RunData": "model",
    "Series": "model",
    "read_run": "read",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'rlmap_bot.runs' has no attribute {name!r}")
    value = getattr(import_module(f"rlmap_bot.runs.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
