"""The core every front-end talks to: one knowledge store, its search, its engine, the state store.

The shell, the CLI and the Slack app each hold one :class:`Core`. It opens the
store (building it first when it is missing or older than the files) and swaps
in a rebuilt one on :meth:`reload` without dropping the old one on failure.
Front-ends and the guided flow read the current store, search and engine through
:attr:`Core.knowledge`, one snapshot swapped in a single assignment, so a request
never sees a mix of old and new.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from rlmap_bot.errors import ConfigError, RlmapError
from rlmap_bot.knowledge.loader import KnowledgeError, check_folder
from rlmap_bot.knowledge.schema import Entry, Paper, Stage
from rlmap_bot.knowledge.store import KnowledgeStore, store_status
from rlmap_bot.paths import Paths
from rlmap_bot.search.index import build_store

if TYPE_CHECKING:
    import logging

    from rlmap_bot.diagnosis.engine import Engine
    from rlmap_bot.diagnosis.flow import Flow
    from rlmap_bot.results.ask import Answer
    from rlmap_bot.results.cards import Card
    from rlmap_bot.results.diagnosis import Verdict
    from rlmap_bot.search.engine import Searcher
    from rlmap_bot.settings import Settings
    from rlmap_bot.state.store import StateStore


def _log() -> logging.Logger:
    """The core's logger. logging is imported when there is something to say (a store being
    built, an addition left out): a plain ask says nothing, and importing logging is about 4 ms of
    its start (python -X importtime)."""
    import logging

    return logging.getLogger(__name__)


_BREADTH = {"stage": 0, "topic": 1, "paper": 2, "signal": 3}


@dataclass(frozen=True)
class Knowledge:
    """One consistent snapshot: the store and what is built over it.

    The diagnosis engine is built from the snapshot's own catalog on first use: `ask` in a
    fresh process never pays for it (the cold-start budget, docs/measurements.md).
    """

    store: KnowledgeStore
    searcher: Searcher

    @cached_property
    def engine(self) -> Engine:
        from rlmap_bot.diagnosis.engine import Engine

        return Engine(self.store.catalog)


class CoreError(RlmapError):
    """The core cannot serve: no usable store and the catalog does not build."""

    exit_code = 2


class Core:
    """Knowledge store + search + diagnosis, rebuilt from ``knowledge_root`` when needed."""

    def __init__(
        self,
        knowledge_root: Path | None = None,
        db_path: Path | None = None,
        state_url: str | Path | None = None,
        auto_build: bool = True,
        settings: Settings | None = None,
    ):
        # The full settings load on first use: a plain ask needs only the paths (rlmap_bot.paths).
        self._settings = settings
        self.paths = settings.paths if settings is not None else Paths.from_env()
        self.knowledge_root = Path(knowledge_root or self.paths.knowledge_dir)
        self.db_path = Path(db_path or self.paths.knowledge_db)
        self._state_url = state_url
        self._state: StateStore | None = None
        self._flow: Flow | None = None
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []
        self._watch_listeners: list[Callable[[], None]] = []
        self.warning: str | None = None
        if auto_build:
            self._build_if_needed()
        if not self.db_path.exists():
            raise CoreError(f"no knowledge store at {self.db_path}; run `rlmap-bot kb build`")
        self._open()

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from rlmap_bot.settings import load_settings

            self._settings = load_settings()
        return self._settings

    @property
    def state_url(self) -> str | Path:
        return self._state_url or self.settings.state_url

    @property
    def session_ttl(self) -> dt.timedelta:
        return self.settings.session_ttl

    def _build_if_needed(self) -> None:
        # A wrong path is refused outright; only a real knowledge folder with a bad entry in it
        # falls back to the previous store (a curator's mistake must not stop the bot).
        try:
            check_folder(self.knowledge_root)
        except KnowledgeError as exc:
            raise CoreError(f"{self.paths.knowledge_source(self.knowledge_root)}: {exc}") from None
        status = store_status(self.knowledge_root, self.db_path)
        if status == "fresh":
            return
        db_source = self.paths.knowledge_db_source(self.db_path)
        # A build takes seconds (more on a busy machine): say so, or a slow start looks like a hang.
        _log().info(
            "building the knowledge store %s from %s (%s)",
            self.db_path,
            self.knowledge_root,
            status,
        )
        try:
            self._build()
        except ConfigError as exc:
            raise CoreError(f"{db_source}: {exc}") from None
        except OSError as exc:
            raise CoreError(
                f"{db_source}: cannot write the knowledge store {self.db_path}: "
                f"{exc.strerror or exc}"
            ) from None
        except KnowledgeError as exc:
            if status == "missing":
                raise CoreError(f"cannot build the knowledge store: {exc}") from None
            self.warning = f"using the previous knowledge store; the catalog has an error: {exc}"

    def _open(self) -> None:
        from rlmap_bot.search.engine import Searcher

        store = KnowledgeStore(self.db_path)
        # One assignment swaps store, search and engine together: a request never sees a mix.
        self.knowledge = Knowledge(store, Searcher(store))

    @property
    def store(self) -> KnowledgeStore:
        return self.knowledge.store

    @property
    def searcher(self) -> Searcher:
        return self.knowledge.searcher

    @property
    def engine(self) -> Engine:
        return self.knowledge.engine

    @property
    def state(self) -> StateStore:
        """The state store (sessions, events, subscriptions), opened on first use."""
        if self._state is None:
            from rlmap_bot.state.store import StateStore, StateStoreError

            try:
                self._state = StateStore(self.state_url)
            except StateStoreError as exc:
                if self.state_url != self.settings.state_url:
                    raise
                raise StateStoreError(f"{self.settings.state_source}: {exc}") from None
        return self._state

    @property
    def flow(self) -> Flow:
        """The guided diagnosis over the current engine and this core's state store."""
        if self._flow is None:
            from rlmap_bot.diagnosis.flow import Flow

            self._flow = Flow(lambda: self.engine, self.state, ttl=self.session_ttl)
        return self._flow

    def diagnose(self, signals: dict) -> Verdict:
        return self.engine.diagnose(signals)

    def _build(self) -> None:
        """Build the store from the files plus the approved
        additions (each validated; bad ones left out).
        """
        from rlmap_bot.knowledge.loader import load_catalog

        files = load_catalog(self.knowledge_root)
        stamp, live = self._additions()
        if not live:
            build_store(self.knowledge_root, self.db_path, catalog=files, stamp=stamp)
            return
        from rlmap_bot.knowledge.additions import merge

        merged = merge(files, live)
        for problem in merged.problems:
            _log().warning("addition left out of the catalog: %s", problem)
        build_store(self.knowledge_root, self.db_path, catalog=merged.catalog, stamp=stamp)
        if merged.retired:
            try:
                retired = self.state.curation.set_status(merged.retired, "retired")
            except RlmapError as exc:
                _log().warning(
                    "could not mark additions retired (%s); tried again at the next build", exc
                )
            else:
                if retired:
                    _log().info("%d addition(s) retired: a knowledge file holds them now", retired)

    def has_state(self) -> bool:
        """Is there a state store to read (open, a URL, or
        a file already made)? A fresh terminal has none.
        """
        url = str(self.state_url)
        return self._state is not None or "://" in url or Path(url).expanduser().exists()

    def _additions(self) -> tuple[str, list]:
        """(fingerprint, live additions) from the state store;
        none when it was never made (a fresh terminal).
        """
        if not self.has_state():
            return "", []
        curation = self.state.curation
        stamp = curation.fingerprint()
        return stamp, (curation.additions("live") if stamp else [])

    def sync_additions(self) -> bool:
        """Rebuild when the additions changed since this
        store was built (polled by every replica).
        """
        if self.state.curation.fingerprint() == self.store.meta.get("additions", ""):
            return False
        self.reload()
        return True

    def reload(self) -> dict[str, int]:
        """Rebuild from the files and swap the new store in; the old one stays on error."""
        with self._lock:
            self._build()
            # The old store is not closed here: requests still running on it finish on it, and
            # its connection closes when the last of them lets go.
            self._open()
            self.warning = None
        return self.store.counts()

    # -- change notices -------------------------------------------------------------------------
    def on_subscriptions_changed(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` whenever a command changes
        digest subscriptions (the scheduler resyncs).
        """
        self._listeners.append(listener)

    def subscriptions_changed(self) -> None:
        for listener in self._listeners:
            listener()

    def on_watches_changed(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` whenever a command adds, changes
        or removes a watch (the scheduler resyncs).
        """
        self._watch_listeners.append(listener)

    def watches_changed(self) -> None:
        for listener in self._watch_listeners:
            listener()

    # -- queries the front-ends use -------------------------------------------------------------
    def ask(self, question: str, limit: int = 5) -> Answer:
        return self.searcher.ask(question, limit=limit)

    def get(self, entry_id: str) -> Entry | None:
        return self.store.get(entry_id.strip().lower())

    def resolve(self, text: str) -> Entry | None:
        """The entry named by ``text``: its id, its title
        or one of its aliases (any case, accents).
        """
        from rlmap_bot.text import fold

        wanted = " ".join(fold(text).lower().split()).strip("\"'“”")
        if not wanted:
            return None
        store = self.store
        found = (
            store.get(wanted)
            or store.get(wanted.replace(" ", "_"))
            or store.get(wanted.replace(" ", "-"))
        )
        if found is not None:
            return found
        ids = store.names().get(wanted)
        if not ids:
            return None
        # A name several entries share ("reward hacking"): a
        # title beats an alias, then the broader kind wins.
        named = [e for e in (store.get(i) for i in ids) if e is not None]
        return min(
            named,
            key=lambda e: (wanted != fold(e.title).lower(), _BREADTH[e.kind], e.id),
            default=None,
        )

    def card(self, entry_id: str) -> Card | None:
        from rlmap_bot.knowledge.cards import card_for  # `show` only: an ask never builds a card

        store = self.store
        entry = store.get(entry_id.strip().lower())
        return card_for(store, entry) if entry else None

    def suggest_ids(self, text: str, limit: int = 3) -> list[str]:
        """Ids whose id, title or alias is close to a mistyped one, for "did you mean"."""
        from rapidfuzz import fuzz, process

        from rlmap_bot.text import fold

        wanted = fold(text).lower().strip()
        names = self.store.names()
        choices = {**{i: {i} for i in self.store.catalog.entries}, **names}
        # 80: one or two typos in a short id ("dapoo" scores
        # 89) pass; unrelated ids sharing a few letters do not.
        found = process.extract(
            wanted, list(choices), scorer=fuzz.WRatio, limit=limit * 3, score_cutoff=80
        )
        out: list[str] = []
        for name, _, _ in found:
            for entry_id in sorted(choices[name]):
                if entry_id not in out:
                    out.append(entry_id)
        return out[:limit]

    def stages(self) -> list[Stage]:
        return self.store.catalog.stages

    def papers(self) -> list[Paper]:
        return sorted(self.store.catalog.papers, key=lambda p: (-(p.year or 0), p.title))
