"""``wandb:ENTITY/PROJECT/RUN_ID`` through W&B's public
API (``wandb.Api``, the optional extra ``wandb``).

The whole history, not ``run.history()``'s 500-row sample: ``scan_history(min_step=...)`` pages
through every row from the step after the cursor (``use_cache=False``, so each poll asks the
server, never a local copy of an earlier answer), and the Api's caches are flushed before each
poll so the run's last step is fresh. A rate limit (HTTP 429) or a server that does not answer is
retried with exponential backoff (tenacity) a few times, then said in one line the caller can
retry later. The API key comes from :class:`Access` (the workspace's sealed credential, or
``WANDB_API_KEY`` in a terminal) and ``WANDB_BASE_URL`` names a self-hosted server; the key is
handed to the client only, and scrubbed from any text an error carries.
"""

from __future__ import annotations

import itertools
import os
from typing import Any, Callable, TypeVar

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import Collector, RunData
from rlmap_bot.runs.sources import (
    Cursor,
    ListedRun,
    RunList,
    RunSource,
    SourceRef,
    describe,
    register,
    register_lister,
)
from rlmap_bot.runs.sources.access import Access, allowed
from rlmap_bot.runs.sources.remote import origin, scrub, tracker_value

Keep = Callable[[str], bool]
T = TypeVar("T")
DEFAULT_BASE_URL = "https://api.wandb.ai"
#: Rows a history page asks for (scan_history's own default).
PAGE_SIZE = 1000
#: Judgement: W&B's rate limits reset within a minute; 4 tries waiting 2, 4, 8 s ride out a burst
#: and still answer a watch check within half a minute; a longer limit is said and retried later.
RETRIES = 4
BACKOFF_SECONDS = (2.0, 30.0)
#: Judgement: a GraphQL page answers in about a second; 30 s without one is an outage.
API_TIMEOUT_SECONDS = 30


class _Retry(Exception):
    """A rate limit or a connection failure: worth asking again after a wait."""


@register("wandb")
def open_wandb(ref: SourceRef, access: Access) -> RunSource:
    parts = [p for p in ref.target.split("/") if p]
    if len(parts) != 3:
        raise RunReadError(
            f"{ref.text}: a W&B run is wandb:ENTITY/PROJECT/RUN_ID (the run's id, from its URL)"
        )
    entity, project, run_id = parts
    key, base = _checked(ref, access, entity)
    return WandbRun(ref, entity, project, run_id, key, base)


#: The states of a run worth comparing: a crashed, failed or killed run's curve stops early.
LISTED_STATES = ("finished", "running")


@register_lister("wandb")
def list_wandb(ref: SourceRef, access: Access, limit: int) -> RunList:
    """The most recent finished or running runs of a W&B project or group (``api.runs``, newest
    first, one page of ``limit``; the server counts them all)."""
    entity, project = ref.target.split("/", 1)
    key, base = _checked(ref, access, entity)
    filters: dict[str, Any] = {"state": {"$in": list(LISTED_STATES)}}
    if ref.group:
        filters["group"] = ref.group
    client = WandbClient(ref, f"{entity}/{project}", key, base, thing="project")

    def page() -> tuple[list[ListedRun], int]:
        runs = client.client().runs(
            f"{entity}/{project}", filters=filters, order="-created_at", per_page=limit
        )
        listed = [
            ListedRun(source=f"wandb:{entity}/{project}/{r.id}", name=r.name or r.id, state=r.state)
            for r in itertools.islice(runs, limit)
        ]
        return listed, len(runs)

    listed, total = client.with_backoff(page)
    return RunList(
        source=ref.text, what=describe(ref), runs=listed, total=total, which="finished or running"
    )


def _checked(ref: SourceRef, access: Access, entity: str) -> tuple[str, str]:
    """The API key and server for ``entity``, when the access allows it (one line when not)."""
    if not allowed(entity, access.wandb_entities):
        raise RunReadError(
            f"{ref.text}: the W&B entity {entity} is not one this workspace may read "
            "(RLMAP_WANDB_ENTITIES); nothing is read"
        )
    key = access.credentials.get("WANDB_API_KEY")
    if "WANDB_API_KEY" in access.unopened:
        raise RunReadError(f"{ref.text}: {access.unopened['WANDB_API_KEY']}")
    if not key:
        raise RunReadError(
            f"{ref.text}: no W&B API key; an admin sets one (`/rlmap credentials set wandb`), or "
            f"set WANDB_API_KEY in a terminal"
        )
    base = (access.environ.get("WANDB_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    return key, base


class WandbClient:
    """W&B's public API for one source: the client made once and flushed before each poll, rate
    limits and outages retried, every error one line without the key."""

    def __init__(self, ref: SourceRef, path: str, key: str, base: str, thing: str = "run"):
        self.ref = ref
        self.path = path
        self.thing = thing  # what a "not found" names: the run, or the project
        self._key = key
        self.base = base
        self.what = f"W&B at {origin(base)}"
        self._api: Any = None

    def __repr__(self) -> str:  # never the key
        return f"{type(self).__name__}({self.path!r}, {self.what!r})"

    # -- the client ----------------------------------------------------------------------------
    def client(self) -> Any:
        if self._api is None:
            os.environ.setdefault(
                "WANDB_SILENT", "true"
            )  # the client's own console lines: errors come from here
            try:
                import wandb
            except ModuleNotFoundError:
                raise RunReadError(
                    f"{self.ref.text}: reading W&B runs needs the wandb client: pip install "
                    f"'rlmap-bot[wandb]'"
                ) from None
            self._api = wandb.Api(
                api_key=self._key, overrides={"base_url": self.base}, timeout=API_TIMEOUT_SECONDS
            )
        else:
            self._api.flush()  # forget the run loaded by the last poll: its last step is fresh now
        return self._api

    def with_backoff(self, call: Callable[[], T]) -> T:
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        retrying = Retrying(
            retry=retry_if_exception_type(_Retry),
            stop=stop_after_attempt(RETRIES),
            wait=wait_exponential(min=BACKOFF_SECONDS[0], max=BACKOFF_SECONDS[1]),
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    try:
                        return call()
                    except RunReadError:
                        raise
                    except Exception as exc:  # noqa: BLE001 - the client's errors become one line here
                        raise self._error(exc) from None
        except _Retry as exc:
            raise RunReadError(f"{self.ref.text}: {exc}; the read can be retried") from None
        raise AssertionError("tenacity reraises the last error")  # pragma: no cover

    def _error(self, exc: Exception) -> Exception:
        text = scrub(" ".join(str(exc).split()), [self._key])[:300]
        lowered = text.lower()
        kind = type(exc).__name__
        if "429" in text or "rate limit" in lowered:
            return _Retry(f"{self.what} is rate-limiting requests (HTTP 429)")
        # Before the key: wandb raises AuthenticationError
        # for a server that never answered the login.
        if kind in (
            "ConnectionError",
            "Timeout",
            "TimeoutError",
            "ReadTimeout",
            "ConnectTimeout",
        ) or any(
            w in lowered
            for w in (
                "connection",
                "timed out",
                "timeout",
                "in time",
                "unavailable",
                "502",
                "503",
                "504",
            )
        ):
            self._api = None
            return _Retry(f"{self.what} is not answering")
        if (
            kind == "AuthenticationError"
            or "401" in text
            or "credentials" in lowered
            or "api key" in lowered
        ):
            self._api = None
            return RunReadError(
                f"{self.ref.text}: {self.what} refused the API key; an admin sets it per workspace "
                f"(`/rlmap credentials set wandb`)"
            )
        if "not found" in lowered or "could not find" in lowered:
            return RunReadError(f"{self.ref.text}: {self.what} has no {self.thing} {self.path}")
        return RunReadError(f"{self.ref.text}: {self.what} could not be read: {text or kind}")


class WandbRun(WandbClient):
    def __init__(self, ref: SourceRef, entity: str, project: str, run_id: str, key: str, base: str):
        super().__init__(ref, f"{entity}/{project}/{run_id}", key, base)
        self.run_id = run_id

    def read_all(self, keep: Keep) -> RunData:
        return self.read_new(None, keep)[0]

    def read_new(self, cursor: Cursor | None, keep: Keep) -> tuple[RunData, Cursor]:
        last = int(cursor.data.get("step", -1)) if cursor else -1
        names: set[str] = set(cursor.data.get("names", [])) if cursor else set()
        rows = self.with_backoff(lambda: self._rows(last + 1))
        c = Collector(keep)
        for row in rows:
            step = row.get("_step")
            if not isinstance(step, int) or isinstance(step, bool):
                c.skipped += 1
                continue
            c.records += 1
            last = max(last, step)
            for key, raw in row.items():
                if key.startswith("_"):
                    continue  # _step, _runtime, _timestamp: W&B's own bookkeeping
                names.add(key)
                value = tracker_value(raw)
                if value is not None and c.wants(key):
                    c.add(key, step, value)
        c.names |= names
        run = c.finish(
            path=self.ref.text, format="wandb-api", run_id=self.run_id, runs=[self.run_id]
        )
        return run, Cursor(kind="wandb", data={"step": last, "names": sorted(names)})

    def _rows(self, min_step: int) -> list[dict]:
        run = self.client().run(self.path)
        return list(run.scan_history(min_step=min_step, page_size=PAGE_SIZE, use_cache=False))
