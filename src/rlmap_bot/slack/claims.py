"""At-least-once handling of what Slack sends, answered
once: claims, leases, takeovers, recorded replies.

Every event, button click and slash command is claimed in the state store before
any work (see :mod:`rlmap_bot.state.events`, over the store's one lease primitive),
with its payload and a lease, by :class:`rlmap_bot.slack.middleware.EventClaims`.
The payload is sealed before it is written (:func:`rlmap_bot.slack.sealing.claims_cipher`):
a slash command's text may hold a key (``credentials set wandb KEY``, mistyped or
refused alike), so no request text is ever stored in clear; the sweeper opens it to
answer a request again.
This module holds the rest, on Bolt's and slack-sdk's documented extension points only:

- :class:`Claims`: this replica's claims in progress; their leases are renewed at
  every sweep while the work goes on.
- :class:`ClaimingExecutor`: Bolt's ``listener_executor`` (an ``App`` argument, "custom
  executor to run background tasks"): it runs each listener as Bolt's default pool does
  and marks the listener's claim done when the listener returns, so a replica killed
  mid-work leaves it unfinished, and its lease runs out. The middleware hands the claim
  over in a context variable, read when Bolt submits that request's listener.
- The sweeper (a :class:`~rlmap_bot.jobs.ticker.Ticker` on every replica): every
  ``RLMAP_SWEEP_SECONDS`` it takes over unfinished claims whose lease ran out and
  hands their stored body to Bolt again (``App.dispatch`` with a ``BoltRequest`` in
  Bolt's ``socket_mode`` request mode, which skips the HTTP signature check; the body
  was verified when it first arrived). Slack's own retry of such an event takes it
  over the same way, in the middleware.
- Replies stay single: under a claim, the request's Web API client
  (:class:`RecordingClient`, a ``WebClient`` subclass) and its ``respond``
  (:class:`RecordingRespond`) number every ``chat.postMessage`` and ``response_url``
  reply, tag posts with message metadata (``rlmap_reply``: the claim and the number),
  and record each one on the claim once sent. A takeover re-runs the listener; a reply
  it would send again that is recorded, or found in the channel by its metadata (the
  owner died between posting and recording), is not sent again: a post is updated in
  place with what this run would post (``chat.update``, so the listener gets Slack's own
  answer with the message's ts), a ``response_url`` reply is skipped. Before sending
  anything, the owner checks it still owns the claim, so a replica that lost its lease
  (cut off from the database for a whole lease) does not post beside the one that took
  over. Private notes (``chat.postEphemeral``) are checked the same way but not recorded:
  Slack keeps no copy of them to find or update, so a takeover shows such a note again.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import hashlib
import json
import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, ParamSpec, TypeVar

from slack_bolt.request import BoltRequest

from rlmap_bot import metrics
from rlmap_bot.crypto import Secret, UnopenedError
from rlmap_bot.errors import UnavailableError
from rlmap_bot.jobs.ticker import Ticker
from rlmap_bot.slack.replies import (
    Handling,
    LeaseLost,
    RecordingClient,
    RecordingRespond,
    where_posted,
)
from rlmap_bot.slack.sealing import claims_cipher
from rlmap_bot.state.events import Claim, GaveUp
from rlmap_bot.state.leases import OWNER

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

CLAIM = "rlmap_claim"  # the context key of the claim a request is handled under
KEY = "rlmap_key"  # the context key of the request's claim key (also when it could not be claimed)
REPLAY = "rlmap_replay"  # the context key the sweeper puts a taken-over claim under
# A claim taken over this often is what kills replicas (or always fails): it is marked failed rather
# than passed around for ever. Three: one crash is chance, two in a row on the same request is not.
MAX_ATTEMPTS = 3
# Expired claims one sweep takes over at most; the rest wait for the next sweep, so a replica that
# comes back to a long backlog spreads it over its
# thread pool instead of queueing all of it at once.
SWEEP_BATCH = 20
KEYS = "RLMAP_ENCRYPTION_KEY or the key derived from SLACK_BOT_TOKEN"  # what seals kept requests


def identify(body: dict | None) -> tuple[str, str, str] | None:
    """(kind, claim key, workspace) for the requests that carry work; None for anything else."""
    if not isinstance(body, dict):
        return None
    kind = body.get("type")
    if kind == "event_callback" and body.get("event_id"):
        return "event", f"event:{body['event_id']}", body.get("team_id") or ""
    if kind == "block_actions":
        team = (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id") or ""
        return "action", f"action:{body.get('trigger_id') or _digest(body)}", team
    if body.get("command"):
        return (
            "command",
            f"command:{body.get('trigger_id') or _digest(body)}",
            body.get("team_id") or "",
        )
    return None


def _digest(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:40]


class Claims:
    """This replica's side of the claims: claiming,
    recording replies, finishing, renewing, sweeping.
    """

    def __init__(self, state: Any, settings: Any):
        self.repo = state.events
        self.cipher = claims_cipher(settings)
        self.lease: dt.timedelta = settings.claim_lease
        self.sweep_every: float = settings.rlmap_sweep_seconds
        self.owner = OWNER
        self.working: dict[str, Handling] = {}
        self.unwritten: dict[
            str, str
        ] = {}  # key -> final status, to write when the store answers again
        self._lock = threading.Lock()
        self._ticker = Ticker("rlmap-sweeper", self.sweep_every, self.sweep)
        self.dispatch: Callable[[BoltRequest], Any] | None = None

    # -- claiming (the middleware)
    #  ------------------------------------------------------------------
    def claim(self, kind: str, key: str, team: str, body: dict) -> tuple[str, Handling | None]:
        outcome, claim = self.repo.claim(
            key, kind, team, self.seal(body), self.owner, self.lease, max_attempts=MAX_ATTEMPTS
        )
        if claim is None:
            if outcome == "gave_up":
                metrics.EVENTS_FAILED.labels(kind).inc()
                log.error(
                    "%s was taken over %d times without finishing; given up", key, MAX_ATTEMPTS
                )
            return outcome, None
        if outcome == "takeover":
            metrics.EVENTS_TAKEN_OVER.labels(kind, "retry").inc()
            log.info(
                "%s: Slack's retry takes over an unfinished claim (attempt %d)", key, claim.attempts
            )
        return outcome, self._working(claim)

    def seal(self, body: dict) -> str:
        """The request as a claim keeps it: sealed, without Slack's legacy verification token."""
        kept = {k: v for k, v in body.items() if k != "token"}
        sealed = self.cipher.seal(json.dumps(kept))
        assert sealed is not None
        return sealed

    def _working(self, claim: Claim) -> Handling:
        handling = Handling(claim)
        with self._lock:
            self.working[claim.key] = handling
        return handling

    def attach(self, req: BoltRequest, handling: Handling) -> None:
        """Handle this request under ``handling``: its client and respond number and record replies.

        The claim is also put in :data:`HANDED_OVER`, where :class:`ClaimingExecutor` takes it
        when Bolt submits this request's listener (in the same thread, right after the middleware).
        """
        ctx = req.context
        ctx[CLAIM], ctx[KEY] = handling, handling.key
        if ctx.client is not None:
            ctx["client"] = RecordingClient(ctx.client, self, handling)
        if (
            ctx.response_url and ctx.respond is not None
        ):  # Bolt makes respond wherever there is a response_url
            ctx["respond"] = RecordingRespond(ctx.respond, self, handling)
        HANDED_OVER.set(handling)

    # -- replies
    #  ------------------------------------------------------------------------------------
    def once(
        self,
        handling: Handling,
        method: str,
        send: Callable[[int], T],
        again: Callable[[int, dict], T],
        lookup: Callable[[int], dict | None] | None = None,
    ) -> T:
        """Send reply number n of this claim, or, when it was sent already (recorded, or found by
        ``lookup``), return ``again(n, reply)`` instead."""
        with handling.lock:
            handling.sent += 1
            n = handling.sent
        claim = handling.claim
        done = claim.replies.get(str(n))
        if done is not None and done.get("method") != method:
            done = None
        if done is None and claim.taken_over and lookup is not None:
            done = lookup(n)
            if done is not None:
                log.info(
                    "%s: reply %d found in the channel by its metadata; not posted again",
                    claim.key,
                    n,
                )
                self._record(handling, n, done)
        elif done is not None:
            log.info(
                "%s: reply %d (%s) was sent before the takeover; not sent again",
                claim.key,
                n,
                method,
            )
        self.check_owner(handling)
        if done is not None:
            return again(n, done)
        result = send(n)
        self._record(handling, n, {"method": method, **where_posted(result)})
        return result

    def check_owner(self, handling: Handling) -> None:
        """Raise :class:`LeaseLost` when another replica has taken the claim over."""
        claim = handling.claim
        if self.repo.owner_of(claim.key) != claim.owner:
            handling.outcome = "lost"
            raise LeaseLost(f"{claim.key} was taken over by another replica")

    def _record(self, handling: Handling, n: int, reply: dict) -> None:
        claim = handling.claim
        with handling.lock:
            claim.replies[str(n)] = reply
            replies = dict(claim.replies)
        try:
            self.repo.record_replies(claim.key, claim.owner, replies)
        except UnavailableError:
            # Sent but not recorded: a takeover finds a post
            # by its metadata; the rest is at-least-once.
            # (Debug: the request's one line comes when it
            # finishes; the outage is logged on its own.)
            log.debug("%s: reply %d sent but not recorded (state store unavailable)", claim.key, n)

    # -- finishing (when the listener returns: ClaimingExecutor) -------------------------------
    def complete(self, handling: Handling) -> None:
        claim = handling.claim
        with self._lock:
            self.working.pop(claim.key, None)
        if handling.outcome == "lost":
            return
        if handling.outcome == "retry":  # its one line was logged where it failed
            log.debug(
                "%s: left unfinished for a retry once the state store answers (lease runs out in "
                "%s s)",
                claim.key,
                f"{self.lease.total_seconds():g}",
            )
            return
        status = "failed" if handling.outcome == "failed" else "done"
        try:
            finished = self.repo.finish(claim.key, claim.owner, status)
        except UnavailableError:
            with self._lock:
                self.unwritten[claim.key] = status
            log.warning(
                "%s: %s, to be recorded when the state store answers again", claim.key, status
            )
            return
        if finished:
            self._count(claim, status)

    def _count(self, claim: Claim, status: str) -> None:
        if status == "failed":
            metrics.EVENTS_FAILED.labels(claim.kind).inc()
            return
        metrics.EVENTS_ANSWERED.labels(claim.kind).inc()
        took = (
            dt.datetime.now(dt.UTC) - dt.datetime.fromisoformat(claim.claimed_at)
        ).total_seconds()
        metrics.REPLY_SECONDS.labels(claim.kind).observe(max(took, 0.0))

    # -- the sweeper
    #  ----------------------------------------------------------------------------------
    def start(self, dispatch: Callable[[BoltRequest], Any]) -> None:
        """Sweep every ``RLMAP_SWEEP_SECONDS`` on a daemon thread until :meth:`stop`."""
        self.dispatch = dispatch
        self._ticker.start()

    def stop(self) -> None:
        self._ticker.stop()

    def sweep(self) -> int:
        """Renew this replica's leases, write finishes the store missed, take over expired claims.

        Returns how many were taken over. Errors are raised: the ticker logs them and sweeps again.
        """
        self._renew()
        self._write_unwritten()
        taken = self._take_over_expired()
        count, oldest = self.repo.unfinished()
        metrics.CLAIMS_UNFINISHED.set(count)
        metrics.CLAIMS_OLDEST_SECONDS.set(oldest)
        return taken

    def _renew(self) -> None:
        with self._lock:
            keys = list(self.working)
        if keys:
            self.repo.renew(keys, self.owner, self.lease)

    def _write_unwritten(self) -> None:
        with self._lock:
            pending = dict(self.unwritten)
        for key, status in pending.items():
            self.repo.finish(key, self.owner, status)
            with self._lock:
                self.unwritten.pop(key, None)

    def _take_over_expired(self) -> int:
        taken = 0
        for key in self.repo.expired(limit=SWEEP_BATCH):
            try:
                claim = self.repo.take_over(key, self.owner, self.lease, max_attempts=MAX_ATTEMPTS)
            except GaveUp as exc:
                metrics.EVENTS_FAILED.labels(key.split(":", 1)[0]).inc()
                log.error("%s; it stays unanswered", exc)
                continue
            if claim is None:
                continue  # another replica was first
            if not claim.body:
                self.repo.finish(claim.key, self.owner, "failed")
                continue
            metrics.EVENTS_TAKEN_OVER.labels(claim.kind, "sweeper").inc()
            log.info(
                "%s: lease ran out unfinished; taken over by the sweeper (attempt %d)",
                key,
                claim.attempts,
            )
            self.replay(claim)
            taken += 1
        return taken

    def replay(self, claim: Claim) -> None:
        """Hand a taken-over claim's stored request to Bolt again."""
        assert self.dispatch is not None, "start() the sweeper with the app's dispatch first"
        assert claim.body is not None, (
            "claims without a stored body are finished as failed, not replayed"
        )
        try:
            kept = Secret("kept request", claim.team, keys=KEYS)
            body = json.loads(self.cipher.open(claim.body, kept) or "")
        except UnopenedError as exc:
            # Sealed under a key no replica has now (a changed key or bot token), or not sealed.
            log.error("%s: %s; given up", claim.key, exc)
            metrics.EVENTS_FAILED.labels(claim.kind).inc()
            self.repo.finish(claim.key, self.owner, "failed")
            return
        handling = self._working(claim)
        request = BoltRequest(body=body, mode="socket_mode", context={REPLAY: handling})
        self.dispatch(request)
        if (
            CLAIM not in request.context
        ):  # Bolt stopped it before the claim middleware (the workspace is gone)
            log.warning(
                "%s: could not be handled again (%s); given up", claim.key, "not authorized"
            )
            handling.outcome = "failed"
            self.complete(handling)


#: The claim the middleware attached to the request being dispatched in this context, until
#: :class:`ClaimingExecutor` takes it for that request's listener.
HANDED_OVER: contextvars.ContextVar[Handling | None] = contextvars.ContextVar(
    "rlmap_claim", default=None
)


class ClaimingExecutor(ThreadPoolExecutor):
    """Bolt's ``listener_executor``: runs listeners in a pool, finishing each one's claim after it.

    ``App(listener_executor=...)`` is Bolt's documented way to run listeners on an executor of
    one's own; Bolt submits each request's listener to it from the thread (or asyncio task,
    in Socket Mode) that dispatched the request, right after the global middleware ran, so
    the claim :class:`~rlmap_bot.slack.middleware.EventClaims` attached is in
    :data:`HANDED_OVER` there. ``submit`` takes it (leaving None, so nothing else submitted
    from that context finishes it) and finishes it after the listener, and Bolt's error
    handler inside it, have returned. Five workers, as Bolt's own default pool.
    """

    def __init__(self, claims: Claims, max_workers: int = 5):
        super().__init__(max_workers=max_workers, thread_name_prefix="rlmap-listener")
        self.claims = claims

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        handling = HANDED_OVER.get()
        if handling is None:
            return super().submit(fn, *args, **kwargs)
        HANDED_OVER.set(None)

        def run() -> T:
            try:
                return fn(*args, **kwargs)
            finally:
                self.claims.complete(handling)

        return super().submit(run)


def set_outcome(context: Any, outcome: str) -> None:
    """Say how handling ended, for :meth:`Claims.complete` (no-op outside a claim)."""
    handling = context.get(CLAIM) if context is not None else None
    if handling is not None and handling.outcome != "lost":
        handling.outcome = outcome


def request_key(context: Any, body: dict | None = None) -> str:
    """What a log line calls this request: its claim key, or what it would be."""
    if context is not None and context.get(KEY):
        return context[KEY]
    found = identify(body)
    return found[1] if found else "a request"


# -- the recording client and respond
#  ---------------------------------------------------------------
# What a post made again is updated with: chat.update's arguments among chat.postMessage's.


__all__ = [
    "Claims",
    "ClaimingExecutor",
    "Handling",
    "LeaseLost",
    "RecordingClient",
    "RecordingRespond",
    "identify",
    "set_outcome",
    "request_key",
    "CLAIM",
    "KEY",
    "REPLAY",
    "HANDED_OVER",
]
