"""Checking watches exactly once, and announcing each condition once, whatever crashes in between.

A check of a watch, scheduled or asked for:

1. claims its slot (a unique row per watch and slot, and at most one check of a
   watch in progress), so a slot fired on two replicas, a restart re-firing a
   slot, or a `now` during a scheduled check runs once;
2. settles posts an earlier check claimed but never recorded (found by their
   alert id in the channel history: recorded; not found: the claim is dropped);
3. reads what is new and judges the run (:mod:`rlmap_bot.watch.check`);
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
import os
import socket
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from rlmap_bot import jobs
from rlmap_bot.errors import UsageError
from rlmap_bot.state.db import ConflictError
from rlmap_bot.watch.conditions import Transition, pending_announcements
from rlmap_bot.watch.model import Alert, CheckResult, EvidenceLine, Tracking, Watch, WatchRow, format_interval
from rlmap_bot.watch.series import KeptRun

if TYPE_CHECKING:
    from rlmap_bot.core import Core
    from rlmap_bot.settings import Settings
    from rlmap_bot.watch.check import Outcome

log = logging.getLogger(__name__)
METADATA_EVENT = "rlmap_watch"
#: A claimed post that the channel history does not show is taken as never posted after this
#: long (Slack may still be answering a slow post), as for digests.
RECOVER_AFTER = dt.timedelta(minutes=2)
#: A check claim older than this belongs to a check that died; the next one takes over.
#: Judgement: far past the slowest check measured (the first read of a 1 GB log, 10 s on a
#: 2-core machine, see benchmarks/watch.py; a slow disk or Slack's 429 retries add a minute at
#: most), so a live check is never overtaken.  A claim by a dead process on the same host is given up at once (owner_dead);
#: only a replica that died on another host keeps its watches waiting this long.
CHECK_STALE = dt.timedelta(minutes=10)
#: Who claims checks in this process: host, pid, and a token that tells this process from an
#: earlier one that had the same pid (a restarted container is often pid 1 again).
OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def owner_dead(owner: str) -> bool:
    """Whether the process that made a claim is surely gone (only knowable on this host)."""
    try:
        host, pid_text, token = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    if host != socket.gethostname():
        return False
    if pid == os.getpid():
        return owner != OWNER
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # someone else's process: alive
        return False
    return False


class Poster(jobs.Poster, Protocol):
    """What a front-end provides to deliver watch posts (Slack implements it); ``find`` looks an alert up by its id."""

    def post_alert(self, channel: str, alert: Alert) -> str:
        """Post it with METADATA_EVENT and the alert id in the message metadata; the ts."""

    def attach_chart(self, channel: str, ts: str, chart: Path, alert: Alert) -> None:
        """Upload the chart next to the posted alert (best effort)."""


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class WatchService:
    def __init__(self, core: Core, clock: Callable[[], dt.datetime] = _utcnow, settings: Settings | None = None):
        self.core = core
        self.clock = clock
        self.settings = settings or core.settings
        self._aliases: tuple[object, object] | None = None

    # -- settings and shared pieces ----------------------------------------------------------------
    @property
    def roots(self) -> list[Path]:
        return self.settings.run_roots

    @property
    def stall(self) -> dt.timedelta:
        return self.settings.watch_stall

    @property
    def repo(self):
        return self.core.state.watches

    def aliases(self):
        """The metric alias table of the current catalog (re-read after a reload)."""
        from rlmap_bot.runs import load_aliases

        knowledge = self.core.knowledge
        if self._aliases is None or self._aliases[0] is not knowledge:
            self._aliases = (knowledge, load_aliases(self.core.knowledge_root))
        return self._aliases[1]

    # -- creating, listing, removing ---------------------------------------------------------------
    def resolve(self, path_text: str) -> Path:
        """The real path to watch, refused outside RLMAP_RUN_ROOTS, and checked to be a log we can read."""
        from rlmap_bot.watch.check import find_source
        from rlmap_bot.watch.roots import resolve_watch_path

        path = resolve_watch_path(path_text, self.roots)
        find_source(path, self.roots)  # RunReadError (one line) when it is not a log this reader knows
        return path

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
                from rlmap_bot.watch.roots import resolve_watch_path

                resolved = str(resolve_watch_path(target, self.roots))
            except UsageError:
                return None
            return next((w for w in mine if w.path == resolved), None)
        return None

    def rows(self, watches: list[Watch]) -> list[WatchRow]:
        tracking = self.repo.tracking([w.id for w in watches])
        out = []
        for w in watches:
            t = tracking.get(w.id, Tracking())
            out.append(WatchRow(id=w.short_id, channel=w.channel, path=w.path,
                                every=format_interval(w.interval_minutes), quiet=w.quiet, status=w.status, paused_reason=w.paused_reason, last_check_at=t.last_check_at,
                                last_verdict=t.last_verdict.headline if t.last_verdict else None,
                                open_conditions=sorted(t.conditions)))
        return out

    # -- checking ----------------------------------------------------------------------------------
    def recover(self, watch: Watch, poster: Poster, now: dt.datetime) -> int:
        """Settle posts claimed but never recorded: recorded if the channel has them, dropped if not."""
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

    def run(self, watch_id: str, slot: str, poster: Poster, now: dt.datetime | None = None) -> CheckResult | None:
        """One check of a watch for ``slot`` (``at:TIME`` when scheduled, ``now:ID`` when asked for)."""
        now = now or self.clock()
        watch = self.repo.get(watch_id)
        if watch is None:
            return None
        if watch.status != "active":
            return CheckResult(watch_id=watch.id, path=watch.path, status="paused", problem=watch.paused_reason)
        check_id = uuid.uuid4().hex
        claim = self.repo.claim_check(check_id, watch.id, watch.team, slot, now, CHECK_STALE, OWNER, owner_dead)
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
            self.repo.finish_check(check_id, "failed")  # the next slot may run; pending posts are settled then
            raise
        self.repo.finish_check(check_id, "done")
        return result

    def _check(self, watch: Watch, poster: Poster, now: dt.datetime) -> CheckResult:
        from rlmap_bot.watch.check import check_run

        self.recover(watch, poster, now)
        tracking, blob, version = self.repo.load_state(watch.id)
        outcome = check_run(watch, tracking, KeptRun.loads(blob), engine=self.core.engine, aliases=self.aliases(),
                            roots=self.roots, now=now, stall=self.stall)
        result = _result(watch, outcome)
        tracking = outcome.tracking
        if outcome.status == "paused":
            tracking.pauses += 1
            notice = paused_notice(watch, outcome, tracking.pauses)
            got = self.repo.claim_alerts(notice.alert_id, watch, [(notice.condition, tracking.pauses, "paused")], now)
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
                got = self.repo.claim_alerts(note.alert_id, watch,
                                             [(c, note.episodes[c], "resolved") for c in note.conditions], now)
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
            log.warning("watch %s: a newer check stored its state first; this one's is dropped", watch.id)
        result.open_conditions = sorted(tracking.conditions)
        return result

    def _announce(self, watch: Watch, alert: Alert, outcome: Outcome, poster: Poster, now: dt.datetime,
                  result: CheckResult) -> None:
        keys = [(c, alert.episodes[c], "alert") for c in alert.conditions]
        got = {c for c, _, _ in self.repo.claim_alerts(alert.alert_id, watch, keys, now)}
        conditions = outcome.judgement().evaluation.conditions
        ledger = {(r["condition"], r["episode"]): r for r in self.repo.ledger(watch.id) if r["kind"] == "alert"}
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
            self.repo.drop_alert(alert.alert_id)  # surely not posted: the condition stays to announce
            raise
        # Any other failure leaves the claim: the next check looks for the post by its metadata.
        self.repo.record_alert(alert.alert_id, ts)
        alert.posted_ts = ts
        return ts

    def _chart(self, watch: Watch, alert: Alert, outcome: Outcome, poster: Poster, ts: str) -> None:
        from rlmap_bot.runs.diagnose import draw

        verdict, derivation, _ = outcome.judgement()
        with tempfile.TemporaryDirectory(prefix="rlmap-watch-") as tmp:
            try:
                chart = draw(outcome.run, derivation, verdict, Path(tmp) / "watch.png")
                if chart:
                    poster.attach_chart(watch.channel, ts, Path(chart), alert)
            except Exception:  # noqa: BLE001 - the alert is out; a chart that fails must not undo it
                log.exception("watch %s: the chart could not be drawn or uploaded", watch.id)

    def preview(self, path_text: str, now: dt.datetime | None = None) -> CheckResult:
        """What a first check of ``path_text`` would post (nothing is stored or posted)."""
        from rlmap_bot.watch.check import check_run

        path = self.resolve(path_text)
        watch = Watch(team="local", channel="terminal", path=str(path))
        outcome = check_run(watch, Tracking(), KeptRun(), engine=self.core.engine, aliases=self.aliases(),
                            roots=self.roots, now=now or self.clock(), stall=self.stall)
        result = _result(watch, outcome)
        result.dry = True
        if outcome.status == "checked":
            alert, note, withheld = plan(watch, outcome, lambda *_: None)
            result.alerts = [a for a in (alert, note) if a is not None]
            result.withheld = withheld
            result.open_conditions = sorted(outcome.judgement().evaluation.conditions)
        elif outcome.status == "problem":
            raise UsageError(outcome.message or "cannot read it")
        return result


# -- what to post ----------------------------------------------------------------------------------
def _result(watch: Watch, outcome: Outcome) -> CheckResult:
    kept = outcome.kept
    status = {"checked": "checked", "unchanged": "unchanged", "paused": "paused"}.get(outcome.status, "problem")
    return CheckResult(watch_id=watch.id, path=watch.path, status=status, problem=outcome.message,
                       format=outcome.format, mode=outcome.tracking.mode, steps=kept.points,
                       first_step=kept.first_step, last_step=kept.last_step, new_steps=outcome.new_points,
                       bytes_read=outcome.bytes_read, verdict=outcome.tracking.last_verdict,
                       open_conditions=sorted(outcome.tracking.conditions))


def plan(watch: Watch, outcome: Outcome, alert_ts: Callable[[str, str, int], str | None]
         ) -> tuple[Alert | None, Alert | None, list[str]]:
    """The alert (conditions raised) and the resolved note a check calls for, and what quiet withholds."""
    evaluation = outcome.judgement().evaluation
    transitions = evaluation.transitions + pending_announcements(evaluation.conditions, watch.quiet,
                                                                 evaluation.transitions)
    announce: list[Transition] = []
    withheld: list[str] = []
    # Faults first: while a fault announced by an earlier check is open, the run is broken and a stage
    # verdict on it is not news; a stage that binds meanwhile is announced once the fault is over (it
    # stays unannounced, so pending_announcements brings it up then). A stage that opens in the same
    # check as the fault shares its post.
    broken = any(k.startswith("fault:") and c.announced for k, c in evaluation.conditions.items())
    for t in transitions:
        if t.kind in {"start", "change"} and watch.quiet:
            withheld.append(t.condition.key)
        elif t.kind in {"start", "change"} and broken:
            continue
        elif t.kind in {"start", "change", "fault"}:
            announce.append(t)
    resolved = [t for t in transitions if t.kind == "resolved" and t.condition.announced
                and (not watch.quiet or t.condition.key.startswith("fault:"))]
    alert = _alert(watch, outcome, announce) if announce else None
    note = _resolved(watch, outcome, resolved, alert_ts) if resolved else None
    return alert, note, withheld


def _stage_title(outcome: Outcome, key: str) -> str:
    """How an alert names a stage condition: the stage's title, or the tied stages' ("A and B")."""
    from rlmap_bot.watch.conditions import stages_of

    titles = {r.stage: r.title for r in outcome.judgement().verdict.ranking}
    named = [titles.get(s, s) for s in sorted(stages_of(key), key=lambda s: list(titles).index(s)
                                               if s in titles else len(titles))]
    return " and ".join(named)


def _fault_text(name: str, fault: Any) -> str:
    """A fault's sentence: the scan's own (``faults.NAME_text``) when it has one, else where it began."""
    from rlmap_bot.watch import faults as fault_scan

    describe = getattr(fault_scan, FAULT_TEXTS.get(name, f"{name}_text"), None)
    if describe is not None:
        return describe(fault)
    step = getattr(fault, "first_step", None) or getattr(fault, "step", None)
    return f"{name.replace('_', ' ')} from step {step}" if step is not None else name.replace("_", " ")


FAULT_TITLES = {"nan": "NaN/inf in the loss", "divergence": "the loss diverged", "not_learning": "the run is not learning"}
#: The scan's sentence for each fault (a function of watch.faults); others are looked up as NAME_text.
FAULT_TEXTS = {"nan": "nan_text", "divergence": "jump_text", "not_learning": "stall_text"}


def _steps(outcome: Outcome) -> str:
    kept = outcome.kept
    return f"steps {kept.first_step}-{kept.last_step}" if kept.first_step is not None else ""


def _alert(watch: Watch, outcome: Outcome, transitions: list[Transition]) -> Alert:
    from rlmap_bot.results.diagnosis import format_value
    from rlmap_bot.watch.faults import FaultState

    verdict, derivation, _ = outcome.judgement()
    faults = FaultState.model_validate(outcome.tracking.faults)
    sure = f"{verdict.confidence:.0%} sure"
    titles, changes, fault_lines = [], [], []
    for t in transitions:
        key = t.condition.key
        if t.kind == "start" and key.startswith("tie:"):
            title = _stage_title(outcome, key)
            titles.append(f"{title} both have strong evidence")
            changes.append(f"{title} both have strong evidence on the run up to step {outcome.kept.last_step}: no "
                           f"single stage binds, both may ({verdict.confidence:.0%} sure it is one of them).")
        elif t.kind == "start":
            title = _stage_title(outcome, key)
            titles.append(f"{title} started to bind")
            changes.append(f"{title} binds now, on the run up to step {outcome.kept.last_step} (the verdict is {sure}).")
        elif t.kind == "change":
            old = _stage_title(outcome, t.replaced.key) if t.replaced else "another stage"
            new = _stage_title(outcome, key)
            if key.startswith("tie:"):
                titles.append(f"Binding stage changed: {old} → {new} tie")
                changes.append(f"{new} now both have strong evidence; no single stage binds "
                               f"({verdict.confidence:.0%} sure it is one of them).")
            else:
                titles.append(f"Binding stage changed: {old} → {new}")
                changes.append(f"{old} no longer binds; {new} does now (the verdict is {sure}).")
        elif t.kind == "fault" and key.startswith("fault:"):
            name = key.split(":", 1)[1]
            fault = getattr(faults, name, None)
            if fault is None:
                continue
            titles.append("Fault: " + FAULT_TITLES.get(name, name.replace("_", " ")))
            text = _fault_text(name, fault)
            fault_lines.append(text)
            changes.append(text + (" (already over)" if t.transient else "") + ".")
    if verdict.tied and any(t.condition.key.startswith("tie:") for t in transitions):
        changes.append(verdict.summary)
    # The evidence shown is the binding stage's, or the tied stages'; for a fault with no stage
    # binding, optimization's (NaN and divergence are optimisation failures first, as the
    # loss_divergence rule says).
    only_faults = all(t.kind == "fault" for t in transitions)
    shown = ([verdict.binding_stage] if verdict.binding_stage else list(verdict.tied) if verdict.tied else
             ["optimization"] if only_faults else [verdict.ranking[0].stage] if verdict.ranking else [])
    evidence = []
    for ev in verdict.evidence:
        if ev.direction != "for" or (shown and ev.stage not in shown):
            continue
        provenance = []
        for signal in ev.signals:
            src = derivation.signal_sources.get(signal)
            if src is not None:
                provenance.append(f"{signal}: {src.detail} ({src.metric}; {src.window})")
        evidence.append(EvidenceLine(stage=ev.stage, points=ev.points.get(ev.stage, 0.0),
                                     signals={k: format_value(v) for k, v in ev.signals.items()},
                                     why=ev.why, source=ev.source.title, provenance=provenance))
    episodes = {t.condition.key: t.condition.episode for t in transitions}
    # Top 3 stages, 4 pieces of evidence, 3 next checks: what a channel reads at a glance; the
    # whole verdict is one `diagnose --run` away (the same figures as the verdict card shows first).
    return Alert(watch_id=watch.id, kind="alert", conditions=list(episodes), episodes=episodes,
                 title=" · ".join(titles), changes=changes, path=watch.path, steps=_steps(outcome),
                 binding_stage=verdict.binding_stage, binding_title=verdict.binding_title,
                 verdict_headline=outcome.tracking.last_verdict.headline if outcome.tracking.last_verdict else None,
                 ranking=[(r.title, r.score) for r in verdict.ranking[:3]], evidence=evidence[:4],
                 faults=fault_lines, next_checks=[f"{c.title}: {c.question}" for c in verdict.next_checks[:3]],
                 chart=True)


def _resolved(watch: Watch, outcome: Outcome, transitions: list[Transition],
              alert_ts: Callable[[str, str, int], str | None]) -> Alert:
    from rlmap_bot.watch.conditions import CLEAR_CHECKS, STAGE_PREFIXES
    from rlmap_bot.watch.faults import FaultState

    verdict = outcome.judgement().verdict
    faults = FaultState.model_validate(outcome.tracking.faults)
    titles, changes = [], []
    for t in transitions:
        key = t.condition.key
        if key.startswith(STAGE_PREFIXES):
            title = _stage_title(outcome, key)
            titles.append(f"{title} {'no longer tie' if key.startswith('tie:') else 'no longer binds'}")
            changes.append(f"{CLEAR_CHECKS} checks in a row with new steps, up to step {outcome.kept.last_step}, no "
                           f"longer name {title}.")
        elif key.startswith("fault:"):
            name = key.split(":", 1)[1]
            fault = getattr(faults, name, None)
            if fault is None:
                continue
            titles.append({"nan": "NaN/inf over", "divergence": "Divergence over"}.get(
                name, f"{name.replace('_', ' ').capitalize()} over"))
            changes.append(_fault_text(name, fault) + ".")
    first = transitions[0].condition
    reply = first.alert_ts or alert_ts(watch.id, first.key, first.episode)
    episodes = {t.condition.key: t.condition.episode for t in transitions}
    return Alert(watch_id=watch.id, kind="resolved", conditions=list(episodes), episodes=episodes,
                 title="Resolved: " + "; ".join(titles), changes=changes, path=watch.path, steps=_steps(outcome),
                 binding_stage=verdict.binding_stage, binding_title=verdict.binding_title,
                 verdict_headline=outcome.tracking.last_verdict.headline if outcome.tracking.last_verdict else None,
                 reply_to=reply)


PAUSE_TITLES = {"stalled": "stopped growing", "gone": "is gone", "outside": "leads outside RLMAP_RUN_ROOTS"}


def paused_notice(watch: Watch, outcome: Outcome, number: int) -> Alert:
    reason = outcome.pause or "stalled"
    return Alert(watch_id=watch.id, kind="paused", conditions=[f"watch:{reason}"], episodes={f"watch:{reason}": number},
                 title=f"Watch paused: the log {PAUSE_TITLES.get(reason, reason)}",
                 changes=[(outcome.message or reason) + ".", "I stopped checking it."],
                 path=watch.path, steps=_steps(outcome))
