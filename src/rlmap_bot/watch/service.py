"""Checking watches exactly once, and announcing each condition once, whatever crashes in between.

A check of a watch, scheduled or asked for:

1. claims its slot (a unique row per watch and slot, and at most one check of a
   watch in progress), so a slot fired on two replicas, a restart re-firing a
   slot, or a `now` during a scheduled check runs once;
2. settles posts an earlier check claimed but never recorded (found by their
   alert id in the channel history: recorded; not found: the claim is dropped);
3. reads what is new and judges the run (:mod:`rlmap_bot.watch.check`); a source that cannot
   be read is retried with the backoff of :mod:`rlmap_bot.watch.backoff`, kept in the state
   store: scheduled slots before the retry are skipped (a check asked for reads at once);
4. claims a ledger row per condition it announces (watch, condition, episode,
   kind), posts with the alert id in the message metadata, records the ts;
5. stores what it learnt (versioned: a check given up for dead cannot overwrite).

A crash between 4 and 5 leaves the state where it was: the next check reads the
same new steps, finds the same transitions with the same episode numbers, and
the ledger (after step 2 found the post) says they were announced.
"""

from __future__ import annotations

import datetime as dt
import logging
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from rlmap_bot import jobs
from rlmap_bot.errors import UsageError
from rlmap_bot.results.watch import Alert, CheckResult, Watching, WatchRow, WatchSet
from rlmap_bot.runs.growing.kept import KeptRun
from rlmap_bot.state import leases
from rlmap_bot.state.db import ConflictError
from rlmap_bot.watch import backoff
from rlmap_bot.watch.model import Tracking, Watch, format_interval
from rlmap_bot.watch.posts import paused_notice, plan, unreadable_notice

if TYPE_CHECKING:
    from rlmap_bot.core import Core
    from rlmap_bot.runs.sources.access import Access, AccessFor
    from rlmap_bot.settings import Settings
    from rlmap_bot.watch.check import Outcome

log = logging.getLogger(__name__)
#: A claimed post that the channel history does not show is taken as never posted after this
#: long (Slack may still be answering a slow post), as for digests.
RECOVER_AFTER = dt.timedelta(minutes=2)
#: A check's claim is a lease this long: a check still claimed then has died; the next takes over.
#: Judgement: far past the slowest check measured (the first read of a 1 GB log, 10 s on a
#: 2-core machine, see benchmarks/watch.py; a slow disk or Slack's 429 retries add a minute at
# : most), so a live check is never overtaken.  A claim by a dead
# process on the same host is given up at once (owner_dead);
#: only a replica that died on another host keeps its watches waiting this long.
CHECK_STALE = dt.timedelta(minutes=10)
#: Who claims checks in this process, and whether a claim's owner has died: the state store's
#: one owner id (state/leases.py).
OWNER = leases.OWNER
owner_dead = leases.owner_gone


class Poster(jobs.Poster, Protocol):
    """What a front-end provides to deliver watch posts (Slack
    implements it); ``find`` looks an alert up by its id.
    """

    def post_alert(self, channel: str, alert: Alert) -> str:
        """Post it so that ``find`` can find it again by its alert id (Slack: in the message
        metadata); the ts."""

    def attach_chart(self, channel: str, ts: str, chart: Path, alert: Alert) -> None:
        """Upload the chart next to the posted alert (best effort)."""


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class WatchService:
    """Watches over the core.  ``access`` gives what a watch of a team may read: the front-end
    that checks watches hands it in (a workspace's allow-lists and sealed credentials in Slack,
    the terminal's own environment at a prompt); paths are watched only under RLMAP_RUN_ROOTS."""

    def __init__(
        self,
        core: Core,
        *,
        access: AccessFor,
        clock: Callable[[], dt.datetime] = _utcnow,
        settings: Settings | None = None,
    ):
        self.core = core
        self.access = access
        self.clock = clock
        self.settings = settings or core.settings
        #: The folders paths may be watched under (RLMAP_RUN_ROOTS), and how long a run may stop
        #: logging before its watch pauses; read once, as settings are.
        self.roots: list[Path] = self.settings.run_roots
        self.stall: dt.timedelta = self.settings.watch_stall
        self._aliases: tuple[object, object] | None = None

    # -- shared pieces -----------------------------------------------------------------------------

    @property
    def repo(self):
        return self.core.state.watches

    def aliases(self):
        """The metric alias table of the current catalog (re-read after a reload)."""
        from rlmap_bot.runs.aliases import load_aliases

        knowledge = self.core.knowledge
        if self._aliases is None or self._aliases[0] is not knowledge:
            self._aliases = (knowledge, load_aliases(self.core.knowledge_root))
        return self._aliases[1]

    # -- creating, listing, removing ---------------------------------------------------------------
    def resolve(self, path_text: str, access: Access) -> Path | str:
        """What to watch: a tracker run as typed (checked readable with ``access``), or the real
        path, refused outside RLMAP_RUN_ROOTS, and checked to be a log or W&B run we can read."""
        from rlmap_bot.runs.sources import check_readable, is_tracker, is_wandb_folder
        from rlmap_bot.runs.sources.access import resolve_run_path
        from rlmap_bot.watch.check import find_source

        if is_tracker(path_text):
            check_readable(path_text.strip(), access)
            return path_text.strip()
        path = resolve_run_path(path_text, self.roots)
        if not is_wandb_folder(path):
            find_source(
                path, self.roots
            )  # RunReadError (one line) when it is not a log this reader knows
        return path

    def set_watch(
        self,
        team: str,
        channel: str,
        user: str | None,
        path: str,
        every: str | None,
        quiet: bool,
        announce: Callable[[WatchSet], bool],
        poster: Callable[[], Poster],
    ) -> Watching | None:
        """Watch ``path`` in a channel (or change or resume its watch there): announced for
        everyone first (``announce`` is False when the bot cannot post there, and nothing is
        kept), then kept and checked at once through the channel's ``poster()``."""
        from rlmap_bot.runs.sources import is_tracker
        from rlmap_bot.runs.sources.access import WATCHING_OFF, PathRefused
        from rlmap_bot.watch.model import DEFAULT_INTERVAL, parse_interval

        if not is_tracker(path) and not self.roots:
            raise PathRefused(WATCHING_OFF)
        minutes = parse_interval(every) if every else DEFAULT_INTERVAL
        resolved = str(self.resolve(path, self.access(team)))
        previous = self.repo.find(team, channel, resolved)
        now = self.clock()
        watch = Watch(
            id=previous.id if previous else uuid.uuid4().hex,
            team=team,
            channel=channel,
            path=resolved,
            interval_minutes=minutes,
            quiet=quiet,
            created_by=previous.created_by if previous else user,
            created_at=previous.created_at if previous else now,
            updated_at=now,
        )
        change = (
            "started"
            if previous is None
            else ("resumed" if previous.status == "paused" else "changed")
        )
        news = WatchSet(
            watch_id=watch.id,
            path=resolved,
            every=format_interval(minutes),
            quiet=quiet,
            change=change,
            by=user,
        )
        if not announce(news):  # the announcement doubles as proof that the bot can post here
            return None
        self.repo.save(watch)
        self.core.watches_changed()
        first = self.run(watch.id, f"first:{uuid.uuid4().hex}", poster())
        return Watching(watch=news, first=first)

    def unwatch(self, team: str, channel: str, target: str) -> Watch | None:
        """Stop the channel's watch ``target`` (an id or its first characters, or a path)."""
        found = self.find(team, channel, target)
        if found is not None:
            self.repo.delete(found.id)
            self.core.watches_changed()
        return found

    def find(self, team: str, channel: str, target: str) -> Watch | None:
        """A watch of this channel by id (or its first characters) or by path."""
        target = target.strip().strip("`\"'")
        mine = self.repo.list(team=team, channel=channel)
        by_id = [w for w in mine if len(target) >= 4 and w.id.startswith(target.lower())]
        if len(by_id) == 1:
            return by_id[0]
        for w in mine:
            if target == w.path:
                return w
        if self.roots:
            try:
                from rlmap_bot.runs.sources.access import resolve_run_path

                resolved = str(resolve_run_path(target, self.roots))
            except UsageError:
                return None
            return next((w for w in mine if w.path == resolved), None)
        return None

    def rows(self, watches: list[Watch]) -> list[WatchRow]:
        tracking = self.repo.tracking([w.id for w in watches])
        out = []
        for w in watches:
            t = tracking.get(w.id, Tracking())
            out.append(
                WatchRow(
                    id=w.short_id,
                    channel=w.channel,
                    path=w.path,
                    every=format_interval(w.interval_minutes),
                    quiet=w.quiet,
                    status=w.status,
                    paused_reason=w.paused_reason,
                    last_check_at=t.last_check_at,
                    last_verdict=t.last_verdict.headline if t.last_verdict else None,
                    open_conditions=sorted(t.conditions),
                )
            )
        return out

    # -- checking ----------------------------------------------------------------------------------
    def recover(self, watch: Watch, poster: Poster, now: dt.datetime) -> int:
        """Settle posts claimed but never recorded: recorded
        if the channel has them, dropped if not.
        """
        settled = 0
        for claim in self.repo.pending_alerts(watch.id):
            started = dt.datetime.fromisoformat(claim["created_at"])
            ts = poster.find(watch.channel, claim["alert_id"], started - dt.timedelta(minutes=5))
            if ts:
                self.repo.record_alert(claim["alert_id"], ts)
                settled += 1
            elif now - started > RECOVER_AFTER:
                self.repo.drop_alert(claim["alert_id"])
                settled += 1
        return settled

    def run(
        self, watch_id: str, slot: str, poster: Poster, now: dt.datetime | None = None
    ) -> CheckResult | None:
        """One check of a watch for ``slot`` (``at:TIME``
        when scheduled, ``now:ID`` when asked for).
        """
        now = now or self.clock()
        watch = self.repo.get(watch_id)
        if watch is None:
            return None
        if watch.status != "active":
            return CheckResult(
                watch_id=watch.id, path=watch.path, status="paused", problem=watch.paused_reason
            )
        if not slot.startswith("now:"):
            waiting = self.repo.backoff(watch.id)
            if waiting is not None and not backoff.due(waiting[1], now, watch.interval):
                return CheckResult(
                    watch_id=watch.id,
                    path=watch.path,
                    status="waiting",
                    problem=f"cannot read it; retrying at {waiting[1]:%H:%M} UTC",
                )
        check_id = uuid.uuid4().hex
        claim = self.repo.claim_check(
            check_id, watch.id, watch.team, slot, now, CHECK_STALE, OWNER, owner_dead
        )
        if claim != "claimed":
            return CheckResult(watch_id=watch.id, path=watch.path, status=claim)
        try:
            result = self._check(watch, poster, now)
        except jobs.NotPosted as exc:
            self.repo.finish_check(check_id, "failed")
            reason = f"I could not post in this channel ({exc.code})"
            self.repo.set_status(watch.id, "paused", reason)
            log.warning("watch %s paused: %s", watch.id, exc.code)
            return CheckResult(watch_id=watch.id, path=watch.path, status="paused", problem=reason)
        except BaseException:
            self.repo.finish_check(
                check_id, "failed"
            )  # the next slot may run; pending posts are settled then
            raise
        self.repo.finish_check(check_id, "done")
        return result

    def _check(self, watch: Watch, poster: Poster, now: dt.datetime) -> CheckResult:
        from rlmap_bot.watch.check import check_run

        self.recover(watch, poster, now)
        tracking, blob, version = self.repo.load_state(watch.id)
        outcome = check_run(
            watch,
            tracking,
            KeptRun.loads(blob),
            engine=self.core.engine,
            aliases=self.aliases(),
            roots=self.roots,
            now=now,
            stall=self.stall,
            access=self.access(watch.team),
        )
        result = outcome.result(watch)
        tracking = outcome.tracking
        self._readable(watch, outcome, poster, now, result)
        if outcome.status == "problem":
            failures, retry_at = self.repo.failed_read(
                watch.id, watch.team, now, lambda n: backoff.retry_delay(watch.interval, n)
            )
            log.info(
                "watch %s: cannot read it (%d in a row); next read at %s",
                watch.id,
                failures,
                retry_at.isoformat(timespec="seconds"),
            )
        else:
            self.repo.read_again(watch.id)
        if outcome.status == "paused":
            tracking.pauses += 1
            notice = paused_notice(watch, outcome, tracking.pauses)
            got = self.repo.claim_alerts(
                notice.alert_id, watch, [(notice.condition, tracking.pauses, "paused")], now
            )
            if got:
                self._post(watch, notice, poster)
                result.alerts.append(notice)
            self.repo.set_status(watch.id, "paused", outcome.message)
        elif outcome.status == "checked":
            alert, note, withheld = plan(watch, outcome, self.repo.alert_ts)
            result.withheld = withheld
            if alert is not None:
                self._announce(watch, alert, outcome, poster, now, result)
            if note is not None:
                got = self.repo.claim_alerts(
                    note.alert_id,
                    watch,
                    [(c, note.episodes[c], "resolved") for c in note.conditions],
                    now,
                )
                if got:
                    note.conditions = [c for c, _, _ in got]
                    self._post(watch, note, poster)
                    result.alerts.append(note)
            evaluation = outcome.judgement().evaluation
            tracking.conditions = evaluation.conditions
            tracking.episodes = evaluation.episodes
        try:
            if self.repo.get(watch.id) is not None:  # unwatched meanwhile: nothing to keep
                self.repo.save_state(watch.id, watch.team, tracking, outcome.kept.dumps(), version)
        except ConflictError:
            log.warning(
                "watch %s: a newer check stored its state first; this one's is dropped", watch.id
            )
        result.open_conditions = sorted(tracking.conditions)
        return result

    def _readable(
        self, watch: Watch, outcome: Outcome, poster: Poster, now: dt.datetime, result: CheckResult
    ) -> None:
        """A source that cannot be read is said once (the watch goes on, retried with backoff);
        when it is read again, that is said once, in reply."""
        tracking = outcome.tracking
        failing = outcome.status == "problem"
        if failing == (tracking.unreadable_since is not None):
            return
        if failing:
            tracking.unreadable += 1
            tracking.unreadable_since = now
        notice = unreadable_notice(watch, outcome, tracking.unreadable, failing)
        kind = "alert" if failing else "resolved"
        if self.repo.claim_alerts(
            notice.alert_id, watch, [(notice.condition, tracking.unreadable, kind)], now
        ):
            if not failing:
                notice.reply_to = self.repo.alert_ts(
                    watch.id, notice.condition, tracking.unreadable
                )
            self._post(watch, notice, poster)
            result.alerts.append(notice)
        if not failing:
            tracking.unreadable_since = None

    def _announce(
        self,
        watch: Watch,
        alert: Alert,
        outcome: Outcome,
        poster: Poster,
        now: dt.datetime,
        result: CheckResult,
    ) -> None:
        keys = [(c, alert.episodes[c], "alert") for c in alert.conditions]
        got = {c for c, _, _ in self.repo.claim_alerts(alert.alert_id, watch, keys, now)}
        conditions = outcome.judgement().evaluation.conditions
        ledger = {
            (r["condition"], r["episode"]): r
            for r in self.repo.ledger(watch.id)
            if r["kind"] == "alert"
        }
        for key in alert.conditions:
            if key in got or key not in conditions:
                continue
            row = ledger.get((key, alert.episodes[key]))
            if row is not None and row["status"] == "posted":  # announced by an earlier check
                conditions[key].announced, conditions[key].alert_ts = True, row["ts"]
        if not got:
            return
        alert.conditions = [c for c in alert.conditions if c in got]
        ts = self._post(watch, alert, poster)
        for key in alert.conditions:
            if key in conditions:
                conditions[key].announced, conditions[key].alert_ts = True, ts
        result.alerts.append(alert)
        self._chart(watch, alert, outcome, poster, ts)

    def _post(self, watch: Watch, alert: Alert, poster: Poster) -> str:
        try:
            ts = poster.post_alert(watch.channel, alert)
        except jobs.NotPosted:
            self.repo.drop_alert(
                alert.alert_id
            )  # surely not posted: the condition stays to announce
            raise
        # Any other failure leaves the claim: the next check looks for the post by its metadata.
        self.repo.record_alert(alert.alert_id, ts)
        alert.posted_ts = ts
        return ts

    def _chart(self, watch: Watch, alert: Alert, outcome: Outcome, poster: Poster, ts: str) -> None:
        from rlmap_bot.runs.chart import draw

        verdict, derivation, _ = outcome.judgement()
        with tempfile.TemporaryDirectory(prefix="rlmap-watch-") as tmp:
            try:
                chart = draw(outcome.run, derivation, verdict, Path(tmp) / "watch.png")
                if chart:
                    poster.attach_chart(watch.channel, ts, Path(chart), alert)
            except Exception:  # noqa: BLE001 - the alert is out; a chart that fails must not undo it
                log.exception("watch %s: the chart could not be drawn or uploaded", watch.id)

    def preview(
        self, path_text: str, access: Access, now: dt.datetime | None = None
    ) -> CheckResult:
        """What a first check of ``path_text`` would post, read with ``access`` (nothing is
        stored or posted)."""
        from rlmap_bot.watch.check import check_run

        path = self.resolve(path_text, access)
        watch = Watch(team="terminal", channel="terminal", path=str(path))
        outcome = check_run(
            watch,
            Tracking(),
            KeptRun(),
            engine=self.core.engine,
            aliases=self.aliases(),
            roots=self.roots,
            now=now or self.clock(),
            stall=self.stall,
            access=access,
        )
        result = outcome.result(watch)
        result.dry = True
        if outcome.status == "checked":
            alert, note, withheld = plan(watch, outcome, lambda *_: None)
            result.alerts = [a for a in (alert, note) if a is not None]
            result.withheld = withheld
            result.open_conditions = sorted(outcome.judgement().evaluation.conditions)
        elif outcome.status == "problem":
            raise UsageError(outcome.message or "cannot read it")
        return result
