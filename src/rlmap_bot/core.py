"""The core every front-end talks to: one knowledge store, its search, its cards.

The shell, the CLI and the Slack app each hold one :class:`Core`.  It opens the
store (building it first when it is missing or older than the files) and swaps
in a rebuilt one on :meth:`reload` without dropping the old one on failure.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from rlmap_bot import config
from rlmap_bot.knowledge.cards import Card, card_for
from rlmap_bot.knowledge.loader import KnowledgeError
from rlmap_bot.knowledge.schema import Entry
from rlmap_bot.knowledge.store import KnowledgeStore, build_store, store_status
from rlmap_bot.search.engine import Answer, Searcher
from rlmap_bot.diagnosis.engine import Engine, Verdict
from rlmap_bot.diagnosis.flow import Flow
from rlmap_bot.state.store import StateStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Knowledge:
    store: KnowledgeStore
    searcher: Searcher
    engine: Engine


class CoreError(RuntimeError):
    """The core cannot serve: no usable store and the catalog does not build."""


class Core:
    """Knowledge store + search, rebuilt from ``knowledge_root`` when needed."""

    def __init__(
        self,
        knowledge_root: Path | None = None,
        db_path: Path | None = None,
        state_url: str | Path | None = None,
        auto_build: bool = True,
    ):
        self.knowledge_root = Path(knowledge_root or config.knowledge_dir())
        self.db_path = Path(db_path or config.knowledge_db())
        try:
            self.state_url = state_url or config.state_url()
            self.session_ttl = dt.timedelta(hours=config.session_ttl_hours())
        except ValueError as exc:
            raise CoreError(str(exc)) from None
        self._state: StateStore | None = None
        self._flow: Flow | None = None
        self._lock = threading.Lock()
        self.warning: str | None = None
        if auto_build:
            status = store_status(self.knowledge_root, self.db_path)
            if status != "fresh":
                try:
                    build_store(self.knowledge_root, self.db_path)
                except OSError as exc:
                    raise CoreError(f"cannot write the knowledge store {self.db_path}: {exc.strerror or exc}") from None
                except KnowledgeError as exc:
                    if status == "missing":
                        raise CoreError(f"cannot build the knowledge store: {exc}") from None
                    self.warning = f"using the previous knowledge store; the catalog has an error: {exc}"
        if not self.db_path.exists():
            raise CoreError(f"no knowledge store at {self.db_path}; run `rlmap-bot kb build`")
        self._open()

    def _open(self) -> None:
        store = KnowledgeStore(self.db_path)
        # One assignment swaps store, search and engine together: a request never sees a mix.
        self._knowledge = _Knowledge(store, Searcher(store), Engine(store.catalog))
        if self._flow is not None:
            self._flow.engine = self._knowledge.engine

    @property
    def store(self) -> KnowledgeStore:
        return self._knowledge.store

    @property
    def searcher(self) -> Searcher:
        return self._knowledge.searcher

    @property
    def engine(self) -> Engine:
        return self._knowledge.engine

    @property
    def state(self) -> StateStore:
        """The state store (sessions, events, subscriptions), opened on first use."""
        if self._state is None:
            self._state = StateStore(self.state_url)
        return self._state

    @property
    def flow(self) -> Flow:
        """The guided diagnosis over this core's engine and state store."""
        if self._flow is None:
            self._flow = Flow(self.engine, self.state, ttl=self.session_ttl)
        return self._flow

    def diagnose(self, signals: dict) -> Verdict:
        return self.engine.diagnose(signals)

    def reload(self) -> dict[str, int]:
        """Rebuild from the files and swap the new store in; the old one stays on error."""
        with self._lock:
            build_store(self.knowledge_root, self.db_path)
            # The old store is not closed here: requests still running on it finish on it, and
            # its connection closes when the last of them lets go.
            self._open()
            self.warning = None
        return self.store.counts()

    # -- queries the front-ends use --------------------------------------------------------
    def ask(self, question: str, limit: int = 5) -> Answer:
        return self.searcher.ask(question, limit=limit)

    def get(self, entry_id: str) -> Entry | None:
        return self.store.get(entry_id.strip().lower())

    def card(self, entry_id: str) -> Card | None:
        store = self.store
        entry = store.get(entry_id.strip().lower())
        return card_for(store, entry) if entry else None

    def suggest_ids(self, entry_id: str, limit: int = 3) -> list[str]:
        """Ids close to a mistyped one, for "did you mean"."""
        from rapidfuzz import process

        ids = list(self.store.catalog.entries)
        return [m[0] for m in process.extract(entry_id, ids, limit=limit, score_cutoff=60)]

    def stages(self):
        return self.store.catalog.stages

    def papers(self):
        return sorted(self.store.all("paper"), key=lambda p: (-(p.year or 0), p.title))  # type: ignore[attr-defined]
