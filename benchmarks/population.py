"""Benchmark: the verdict on a population of runs with known truth, and on the real-log bank.

    python benchmarks/population.py [--seed heldout|tuning|both] [--per-class N] [--jobs N]
                                    [--no-bank] [--json PATH]

The runs are ``tests/support/population.py``'s: 12 classes x 13 runs a seed (healthy ones,
one bound by its rollouts, eight that go wrong), each with its truth: which stage binds (or
none), which fault (or none) and from which step.  Each run is checked as a user would:

* ``diagnose --run FILE`` (the product's :func:`~rlmap_bot.runs.diagnose.diagnose_run`, what
  the command calls) on the log as it stood at 50% and at 100% of the run;
* a watch (the real :class:`~rlmap_bot.watch.service.WatchService` over a SQLite state store, a
  recording poster in place of Slack) checking the log as it grows, at 25, 40, 50, 60, 70, 80,
  90 and 100% of the run: the alerts it posts.

What each check says is read into a :class:`Said` by two small adapters (:func:`said_of` and
:func:`alerts_said`), the only code here that knows the product's result types; :func:`score`
takes the runs and what was said of them.  For the next change to the verdict, tune on
``population(TUNING_SEED)`` through :func:`measure` and report the held-out seed first.

What is counted (``Truth.at(step)`` says whether a check at a step sees a healthy run, a fault
just begun, not scored, or one there to be seen):

* a **false alarm**: a check of a healthy run (or of a run before its fault began) that states a
  binding stage (a tie too) or names a fault, or a watch alert posted; for the rollout-bound
  class, one that states another stage or any fault;
* a fault **caught**: a check after onset that names the right stage (alone or in a tie) or a
  fault of the right family; the watch's delay is the steps from onset to the first check whose
  alert named it;
* **calibration**: each scored ``diagnose`` states a stage, a tie or "no single stage" at X%;
  it is right when the truth at that step is that stage (in the tie) or no stage.  The expected
  calibration error is the gap between stated and observed, averaged over ten bins of 10% by
  the count in each.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support import population as pop  # noqa: E402

KNOWLEDGE = ROOT / "knowledge"
#: Where the watch checks a growing run (shares of its steps), and where diagnose reads it.
WATCH_AT = (0.25, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
DIAGNOSE_AT = (0.5, 1.0)
T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
#: A fault family is named by a product fault whose name holds one of these (names may change;
#: the families do not).  The classes' own ``named_by`` adds the names a class accepts.
FAMILY_WORDS = {"nan": ("nan", "non_finite", "nonfinite", "divergence"), "collapse": ("collapse",)}
GOALS = {"false_alarms": 0.02, "caught": 0.90, "ece": 0.08}


@dataclass
class Said:
    """What one check said: the view (``diagnose`` or ``watch``), the step it read up to."""

    view: str
    step: int
    share: float
    stage: str | None = None  # the binding stage stated
    tied: tuple[str, ...] = ()  # the stages named as a tie
    confidence: float | None = None  # diagnose: the stated "X% sure"
    one: bool = False  # diagnose: the verdict rests on one measurement
    faults: tuple[str, ...] = ()  # fault names (diagnose: kinds; watch: fault:NAME conditions)
    alerts: tuple[str, ...] = ()  # watch: the conditions of alerts posted at this check
    note: str = ""

    @property
    def stages(self) -> tuple[str, ...]:
        return (self.stage,) if self.stage else self.tied

    @property
    def speaks(self) -> bool:
        """Said something new: a stage or a fault (diagnose), an alert posted (watch)."""
        if self.view == "watch":
            return bool(self.alerts)
        return bool(self.stages or self.faults)


def said_of(result, step: int, share: float) -> Said:
    """A ``diagnose`` result read as a user reads its JSON (``diagnose --run FILE --json``)."""
    data = result.model_dump(mode="json")
    faults = tuple(
        str(f.get("kind") or f.get("name") or f.get("type") or "?") for f in data.get("faults", [])
    )
    return Said(
        "diagnose",
        step,
        share,
        stage=data.get("binding_stage"),
        tied=tuple(data.get("tied") or ()),
        confidence=data.get("confidence"),
        one=bool(data.get("one_measurement")),
        faults=faults,
        note=str(data.get("summary", ""))[:160],
    )


class Standing:
    """What a watch's alerts have told the channel so far: an alert opens its conditions (a
    stage verdict replaces the one before), a resolved note closes them."""

    def __init__(self) -> None:
        self.open: list[str] = []

    def hear(self, posts) -> list[str]:
        """Take a check's posts; the conditions its alerts raised."""
        raised: list[str] = []
        for post in posts:
            if post.kind == "alert":
                for key in post.conditions:
                    if key.startswith("stop:"):
                        continue  # when to stop (issue 37) is advice, not a verdict or a fault
                    if key.startswith(("binds:", "tie:")):
                        self.open = [c for c in self.open if not c.startswith(("binds:", "tie:"))]
                    if key not in self.open:
                        self.open.append(key)
                    raised.append(key)
            elif post.kind == "resolved":
                self.open = [c for c in self.open if c not in post.conditions]
        return raised

    def said(self, raised: list[str], step: int, share: float) -> Said:
        """The watch at this check: the alerts it posted, and the verdict and faults it stands on
        (an alert posted before a fault began still names it after)."""
        stages: list[str] = []
        faults: list[str] = []
        for c in self.open:
            what, _, name = c.partition(":")
            if what == "binds":
                stages.append(name)
            elif what == "tie":
                stages += name.split("+")
            elif what == "fault":
                faults.append(name)
        return Said(
            "watch",
            step,
            share,
            stage=stages[0] if len(stages) == 1 else None,
            tied=tuple(stages) if len(stages) > 1 else (),
            faults=tuple(faults),
            alerts=tuple(raised),
        )


# -- running the product -----------------------------------------------------------------------
_WORKER: dict = {}


def _start_worker(db: str, home: str, knowledge: str = str(KNOWLEDGE)) -> None:
    """Each process opens its own core (knowledge store built once by the parent)."""
    os.environ["RLMAP_HOME"] = home
    os.environ.pop("RLMAP_RUN_ROOTS", None)
    from rlmap_bot.core import Core
    from rlmap_bot.runs.sources.access import local_access
    from rlmap_bot.watch.service import WatchService

    folder = Path(tempfile.mkdtemp(prefix="rlmap-pop-", dir=home))
    core = Core(Path(knowledge), Path(db), state_url=folder / "state.db")
    clock = [T0]
    settings = core.settings.model_copy(update={"rlmap_run_roots": str(folder)})
    access = local_access()  # a terminal's, as `rlmap-bot watch FILE` and `diagnose` read
    service = WatchService(
        core, access=lambda _team: access, clock=lambda: clock[0], settings=settings
    )
    _WORKER.update(
        core=core,
        service=service,
        clock=clock,
        folder=folder,
        access=access,
        knowledge=Path(knowledge),
    )


class _Poster:
    """Keeps what a check posts (the watch's front-end, without Slack)."""

    def __init__(self) -> None:
        self.posts: list = []

    def post_alert(self, channel, alert):
        self.posts.append(alert)
        return f"{len(self.posts)}.0"

    def attach_chart(self, channel, ts, chart, alert):
        pass

    def find(self, channel, alert_id, since):
        return None


def check(kind: str, index: int, seed: int) -> tuple[str, list[Said], float]:
    """Grow run (kind, index, seed) as a trainer writes it; watch it and diagnose it.

    The watch is ``rlmap-bot watch FILE`` in a terminal (:func:`rlmap_bot.watch.follow.follow`:
    the scheduled watch's checks and alert plan, its state held in memory, no chart drawn); the
    file grows between its checks, where the follow waits.
    """
    from rlmap_bot.runs.diagnose import diagnose_run
    from rlmap_bot.watch.follow import follow

    run = pop.make_run(kind, index, seed)
    core, service, clock = _WORKER["core"], _WORKER["service"], _WORKER["clock"]
    started = time.perf_counter()
    path = _WORKER["folder"] / f"{run.name}-{seed}{run.suffix}"
    cuts = [run.cut(share) for share in WATCH_AT]
    said: list[Said] = []
    at = [0]  # the check under way
    standing, heard = Standing(), []

    def diagnose(share: float) -> None:
        try:
            d = diagnose_run(core.engine, _WORKER["knowledge"], path, access=_WORKER["access"])
            said.append(said_of(d, cuts[at[0]], share))
        except Exception as exc:  # noqa: BLE001 - a reading that fails is a result to report
            said.append(Said("diagnose", cuts[at[0]], share, note=f"error: {exc}"))

    def hear(what) -> None:
        if what.result is not None:
            heard.extend(what.result.alerts)
        elif what.line:  # a line about the source (unreadable, stalled): kept as a note
            said.append(Said("watch", cuts[at[0]], WATCH_AT[at[0]], note=what.line[:160]))

    def checked() -> None:
        """After a check: what the watch stands on, and diagnose where asked."""
        share = WATCH_AT[at[0]]
        said.append(standing.said(standing.hear(heard), cuts[at[0]], share))
        heard.clear()
        if share in DIAGNOSE_AT:
            diagnose(share)

    def grow(_seconds: float) -> None:
        """Between two checks (where the follow waits) the trainer writes the next chunk."""
        checked()
        run.append(path, after=cuts[at[0]], upto=cuts[at[0] + 1])
        at[0] += 1
        clock[0] += dt.timedelta(minutes=15)

    run.write(path, upto=cuts[0])
    follow(service, str(path), _WORKER["access"], hear, grow, seconds=900, checks=len(cuts))
    checked()
    path.unlink()
    return run.name, said, time.perf_counter() - started


# -- scoring -----------------------------------------------------------------------------------


def names_fault(kind: pop.Kind, faults: tuple[str, ...]) -> bool:
    words = FAMILY_WORDS.get(kind.fault or "", ()) + kind.named_by
    return any(w in f for f in faults for w in words)


def right_call(kind: pop.Kind, said: Said) -> bool:
    """The check names what went wrong: the right stage, or a fault of the right family."""
    return (kind.stage is not None and kind.stage in said.stages) or names_fault(kind, said.faults)


def new_claims(said: Said) -> tuple[list[str], list[str]]:
    """The stages and faults a check newly claims: diagnose, all it states; a watch, the
    conditions of the alerts it posted at that check."""
    if said.view != "watch":
        return list(said.stages), list(said.faults)
    stages, faults = [], []
    for key in said.alerts:
        what, _, name = key.partition(":")
        if what in ("binds", "tie"):
            stages += name.split("+")
        elif what == "fault":
            faults.append(name)
    return stages, faults


def false_alarm(kind: pop.Kind, state: str, said: Said) -> bool:
    """A check that speaks where it should not: on a healthy stretch, anything; on a
    rollout-bound run, another stage or a fault."""
    if state == "healthy":
        return said.speaks
    if kind.group == "bound":
        stages, faults = new_claims(said)
        return bool(faults) or any(s != kind.stage for s in stages)
    return False


def stated_right(truth: pop.Truth, state: str, said: Said) -> bool:
    """Is the stated verdict (a stage, a tie, or no single stage) the truth at that step?"""
    want = truth.stage if state == "bad" else None
    return want in said.stages if said.stages else want is None


@dataclass
class ClassScore:
    kind: str
    group: str
    runs: int = 0
    alarm_runs: int = 0  # healthy runs (or pre-onset stretches) with any false alarm
    alarm_by_view: dict[str, int] = field(default_factory=dict)
    pre_onset_checks: int = 0
    pre_onset_alarms: int = 0
    bad_runs: dict[str, int] = field(default_factory=dict)  # view -> runs scored there
    caught: dict[str, int] = field(default_factory=dict)  # view -> caught there
    fault_named: dict[str, int] = field(default_factory=dict)  # the fault itself, not the stage
    delays: list[int] = field(default_factory=list)  # watch: steps from onset to the alert
    delay_shares: list[float] = field(default_factory=list)
    claims: dict[str, int] = field(default_factory=dict)  # what the false alarms said, by check


def score(runs: list[pop.PopRun], said: dict[str, list[Said]]) -> dict:
    """Per class and overall figures, and the calibration pairs, from what each check said."""
    classes: dict[str, ClassScore] = {}
    pairs: list[tuple[float, bool]] = []
    ones: list[tuple[float, bool]] = []  # of those, verdicts on one measurement (not calibrated)
    mapped: list[tuple[float, bool]] = []  # the others, said through the calibration map
    leads: list[bool] = []  # stages read on one measurement, said with no percentage: right?
    #: framework and format -> [healthy runs alarmed, healthy runs, faults caught at 100%, faults]
    formats: dict[str, list[int]] = {}
    for run in runs:
        kind = pop.CLASSES[run.kind]
        cs = classes.setdefault(run.kind, ClassScore(run.kind, kind.group))
        cs.runs += 1
        checks = said.get(run.name, [])
        alarmed: set[str] = set()
        first_catch = None
        caught_at_end = False
        for s in checks:
            state = run.truth.at(s.step)
            if state == "healthy" and kind.group == "faulty":
                cs.pre_onset_checks += 1
                cs.pre_onset_alarms += s.speaks
            if false_alarm(kind, state, s):
                alarmed.add(f"{s.view}@{round(100 * s.share)}" if s.view == "diagnose" else "watch")
                stages, faults = new_claims(s)
                for claim in [f"binds {x}" for x in stages] + [f"fault {x}" for x in faults]:
                    if kind.group != "faulty":
                        cs.claims[claim] = cs.claims.get(claim, 0) + 1
            if s.view == "diagnose" and state != "early" and s.confidence is not None:
                pairs.append((float(s.confidence), stated_right(run.truth, state, s)))
                (ones if s.one else mapped).append(pairs[-1])
            elif s.view == "diagnose" and state != "early" and s.one:
                leads.append(stated_right(run.truth, state, s))  # a lead: no percentage to score
            if state == "healthy":
                continue
            hit = right_call(kind, s)
            if s.view == "watch":
                if hit and first_catch is None:
                    first_catch = s.step  # standing on it: told at this check or before
            elif state == "bad":
                view = f"diagnose@{round(100 * s.share)}"
                cs.bad_runs[view] = cs.bad_runs.get(view, 0) + 1
                cs.caught[view] = cs.caught.get(view, 0) + hit
                caught_at_end = hit if s.share == 1.0 else caught_at_end
                if kind.fault:
                    cs.fault_named[view] = cs.fault_named.get(view, 0) + names_fault(kind, s.faults)
        if kind.group != "healthy" and run.truth.at(run.steps) == "bad":
            cs.bad_runs["watch"] = cs.bad_runs.get("watch", 0) + 1
            cs.caught["watch"] = cs.caught.get("watch", 0) + (first_catch is not None)
            if first_catch is not None and run.truth.onset is not None:
                cs.delays.append(first_catch - run.truth.onset)
                cs.delay_shares.append((first_catch - run.truth.onset) / run.steps)
        if alarmed and (kind.group != "faulty"):
            cs.alarm_runs += 1
        for view in alarmed:
            cs.alarm_by_view[view] = cs.alarm_by_view.get(view, 0) + 1
        row = formats.setdefault(f"{run.framework} {run.format}", [0, 0, 0, 0])
        if kind.group == "faulty":
            row[2] += caught_at_end
            row[3] += 1
        else:
            row[0] += bool(alarmed)
            row[1] += 1
    return {
        "classes": classes,
        "calibration": calibration(pairs),
        "pairs": pairs,
        "one_measurement": ones,
        "mapped": mapped,
        "leads": leads,
        "formats": formats,
    }


def calibration(pairs: list[tuple[float, bool]], bins: int = 10) -> dict:
    """Expected calibration error and the reliability table (ten bins of 10%)."""
    table = []
    total = len(pairs)
    ece = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [(c, ok) for c, ok in pairs if lo <= c < hi or (b == bins - 1 and c == 1.0)]
        if not inside:
            continue
        conf = sum(c for c, _ in inside) / len(inside)
        acc = sum(ok for _, ok in inside) / len(inside)
        ece += len(inside) / total * abs(acc - conf)
        table.append(
            {
                "bin": f"{100 * lo:.0f}-{100 * hi:.0f}%",
                "n": len(inside),
                "stated": conf,
                "right": acc,
            }
        )
    high = [ok for c, ok in pairs if c >= 0.9]
    return {
        "ece": ece if total else math.nan,
        "n": total,
        "table": table,
        "right_at_90": (sum(high) / len(high)) if high else math.nan,
        "n_at_90": len(high),
    }


# -- the real-log bank -------------------------------------------------------------------------
#: What each bank log should get, written from its reading in tests/data/real_logs/bank.yaml
#: before the tool was run on it: (stage, fault family or fault words); None for a log where
#: nothing should be said (healthy, or too short to call).  Logs whose reading is ambiguous are
#: not listed and only reported.  verl-old-logic-9 was first written here as "nothing" (its
#: reading says "too short and noisy to call"); the same reading gives generation ~85% of each
#: step, which is the rollouts stage's own measurement whatever the run's length, so it is
#: reported only, not scored either way.
BANK_EXPECT: dict[str, tuple[str | None, tuple[str, ...]] | None] = {
    # Responses collapse to 1 token within 12 steps, entropy and gradient vanish.
    "verl-agent-opd-262": ("optimization", ("collapse", "zero_entropy", "shift")),
    # Length collapses to ~9 tokens at step ~37, reward down, gradient x10.
    "verl-agent-opd-60": ("optimization", ("collapse", "shift")),
    # Task reward never earned, loss exactly 0: not learning (the pool beyond reach).
    "trl-tb-countdown": (
        "environments",
        ("zero_loss", "zero_gradient", "zero_variance", "not_learning"),
    ),
    "verl-agent-opd-12": None,
    "verl-agent-opd-2": None,
    "verl-agent-opd-1": None,
    "verl-csv-ppo-dp2-116": None,
    "verl-csv-ppo-ulysses-116": None,
    "tinker-rlvr-if-7": None,
    "tinker-rlvr-if-29": None,
    "tinker-rlvr-if-57": None,
    "tinker-rlvr-if-113": None,
    "tinker-rlvr-gptoss20b-75": None,
    "tinker-rlvr-gptoss20b-48": None,
    "tinker-rlvr-qwen30b-instruct-51": None,
    "easyr1-geo3k-161": None,
    "easyr1-geo3k-resumed-36": None,
}


def bank_folder() -> Path | None:
    env = os.environ.get("RLMAP_REAL_LOGS")
    bases = [ROOT.parent / "shared", ROOT.parent.parent / "shared"]
    for base in ([Path(env)] if env else []) + bases:
        folder = base if base.name == "real_logs" else base / "real_logs"
        if folder.is_dir():
            return folder
    return None


def check_bank_log(name: str, rel: str, folder: str) -> tuple[str, list[Said]]:
    """Diagnose a bank log whole (and its first half, for a text log), and watch it once."""
    from rlmap_bot.runs.diagnose import diagnose_run
    from rlmap_bot.watch.model import Watch

    core, service, clock = _WORKER["core"], _WORKER["service"], _WORKER["clock"]
    source = Path(folder) / rel
    said: list[Said] = []
    if source.is_file():
        lines = source.read_bytes().splitlines(keepends=True)
        # Half of the logged steps: a verl console log's step lines follow a long preamble.
        steps = [i for i, ln in enumerate(lines) if b"step:" in ln] or list(
            range(1 if source.suffix == ".csv" else 0, len(lines))
        )
        half = _WORKER["folder"] / f"half-{name}{source.suffix}"
        keep = lines[: steps[len(steps) // 2 - 1] + 1] if len(steps) > 1 else lines
        half.write_bytes(b"".join(keep))
        said.append(_diagnosed(diagnose_run, core, half, 0.5))
        half.unlink()
    said.append(_diagnosed(diagnose_run, core, source, 1.0))
    copy = _WORKER["folder"] / f"bank-{name}"
    if source.is_dir():
        import shutil

        shutil.copytree(source, copy)
    else:
        copy.write_bytes(source.read_bytes())
    watch = service.repo.save(
        Watch(team="T", channel="C", path=str(copy), created_at=clock[0], updated_at=clock[0])
    )
    poster = _Poster()
    clock[0] += dt.timedelta(minutes=15)
    service.run(watch.id, "at:bank", poster)
    standing = Standing()
    said.append(standing.said(standing.hear(poster.posts), 0, 1.0))
    service.repo.delete(watch.id)
    return name, said


def _diagnosed(diagnose_run, core, path: Path, share: float) -> Said:
    try:
        return said_of(
            diagnose_run(core.engine, _WORKER["knowledge"], path, access=_WORKER["access"]),
            0,
            share,
        )
    except Exception as exc:  # noqa: BLE001 - a log that cannot be read is reported as such
        return Said("diagnose", 0, share, note=f"error: {str(exc)[:120]}")


def score_bank(results: dict[str, list[Said]]) -> dict:
    rows, alarms, quiet, caught, bad = [], 0, 0, 0, 0
    for name, said in sorted(results.items()):
        expect = BANK_EXPECT.get(name, "unlabelled")
        verdict = []
        for s in said:
            where = f"{s.view}@{round(100 * s.share)}"
            what = "+".join(s.stages) or "-"
            conf = f" {100 * s.confidence:.0f}%" if s.confidence is not None else ""
            verdict.append(
                f"{where}: {what}{conf}{' ' + ','.join(s.faults) if s.faults else ''}"
                f"{' ' + s.note if s.note.startswith('error') else ''}"
            )
        outcome = "reported only"
        if expect is None:
            quiet += 1
            spoke = any(s.speaks for s in said)
            alarms += spoke
            outcome = "false alarm" if spoke else "quiet, right"
        elif expect != "unlabelled":
            stage, words = expect
            bad += 1
            hit = any(
                (stage in s.stages) or any(w in f for f in s.faults for w in words)
                for s in said
                if s.share == 1.0
            )
            caught += hit
            outcome = "caught" if hit else "missed"
        rows.append(
            (
                name,
                "unlabelled"
                if expect == "unlabelled"
                else ("nothing" if expect is None else f"{expect[0]} / {expect[1][0]}"),
                outcome,
                "; ".join(verdict),
            )
        )
    return {"rows": rows, "quiet": quiet, "alarms": alarms, "bad": bad, "caught": caught}


# -- putting it together -----------------------------------------------------------------------


def measure(
    seed: int,
    per_class: int = pop.PER_CLASS,
    jobs: int = 2,
    bank: bool = False,
    home: Path | None = None,
    knowledge: Path = KNOWLEDGE,
) -> dict:
    """Check every run of ``seed`` (and the bank) through the product, in ``jobs`` processes,
    and score it: the figures :func:`report` prints.  ``knowledge``: the catalog to use (the
    calibration's fit reads the product's verdicts with no calibration map)."""
    from rlmap_bot.core import Core

    with tempfile.TemporaryDirectory(prefix="rlmap-population-") as tmp:
        home = home or Path(tmp)
        db = home / "kb.db"
        if not db.exists():
            Core(knowledge, db, state_url=home / "parent-state.db")  # builds the store once
        runs = pop.population(seed, per_class)
        started = time.perf_counter()
        cpu = _cpu()
        said: dict[str, list[Said]] = {}
        seconds: list[float] = []
        bank_said: dict[str, list[Said]] = {}
        start = (str(db), str(home), str(knowledge))
        with ProcessPoolExecutor(jobs, initializer=_start_worker, initargs=start) as ex:
            futures = [ex.submit(check, r.kind, int(r.name.rsplit("-", 1)[1]), seed) for r in runs]
            logs = bank_folder() if bank else None
            bank_futures = []
            if logs is not None:
                import yaml

                listing = yaml.safe_load((ROOT / "tests/data/real_logs/bank.yaml").read_text())
                # A copy of the bank may hold fewer logs than bank.yaml lists (CI's holds the
                # first 22): the missing ones are said and left out, not a crash at the end.
                here = [e for e in listing["logs"] if (logs / Path(e["path"]).parts[0]).exists()]
                if len(here) < len(listing["logs"]):
                    print(
                        f"  the bank at {logs} holds {len(here)} of bank.yaml's "
                        f"{len(listing['logs'])} logs; the others are left out"
                    )
                bank_futures = [
                    ex.submit(check_bank_log, e["name"], e["path"], str(logs)) for e in here
                ]
            for f in futures:
                name, got, secs = f.result()
                said[name] = got
                seconds.append(secs)
            for f in bank_futures:
                name, got = f.result()
                bank_said[name] = got
        out = score(runs, said)
        out.update(
            seed=seed,
            runs=len(runs),
            wall=time.perf_counter() - started,
            cpu=_cpu() - cpu,
            run_seconds=sorted(seconds),
            said=said,
            population=runs,
        )
        if bank_said:
            out["bank"] = score_bank(bank_said)
        return out


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the pool's workers)."""
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "-"


def _median(values: list) -> float:
    values = sorted(values)
    if not values:
        return math.nan
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def report(out: dict, label: str) -> dict:
    """Print one seed's figures; return the headline numbers."""
    classes: dict[str, ClassScore] = out["classes"]
    cal = out["calibration"]
    healthy = [c for c in classes.values() if c.group != "faulty"]
    faulty = [c for c in classes.values() if c.group != "healthy"]
    h_runs = sum(c.runs for c in healthy)
    h_alarm = sum(c.alarm_runs for c in healthy)
    views = ("diagnose@50", "diagnose@100", "watch")

    def caught(view: str) -> tuple[int, int]:
        return (
            sum(c.caught.get(view, 0) for c in faulty if c.group == "faulty"),
            sum(c.bad_runs.get(view, 0) for c in faulty if c.group == "faulty"),
        )

    delays = [d for c in faulty for d in c.delays]
    shares = [d for c in faulty for d in c.delay_shares]
    pre = sum(c.pre_onset_alarms for c in faulty), sum(c.pre_onset_checks for c in faulty)
    print(
        f"{label}: seed {out['seed']}, {out['runs']} runs ({len(classes)} classes), checked in "
        f"{out['wall']:.0f} s, {out['cpu']:.0f} CPU s (median {_median(out['run_seconds']):.2f} s "
        "a run)"
    )
    by_view = ", ".join(f"{v} {sum(c.alarm_by_view.get(v, 0) for c in healthy)}" for v in views)
    print(
        f"  healthy and rollout-bound runs with a false alarm: {_pct(h_alarm, h_runs)} (goal <= "
        f"{100 * GOALS['false_alarms']:.0f}%); by view: {by_view}"
    )
    print(f"  faulty runs' checks before onset that spoke: {_pct(*pre)}")
    line = ", ".join(f"{v} {_pct(*caught(v))}" for v in views)
    print(f"  faults caught (right stage or fault; goal >= {100 * GOALS['caught']:.0f}%): {line}")
    print(
        f"  watch: steps from onset to the first alert naming it: median {_median(delays):.0f} "
        f"({100 * _median(shares):.0f}% of the run), max {max(delays, default=0)}"
    )
    print(
        f"  calibration: ECE {cal['ece']:.3f} over {cal['n']} stated verdicts (goal <= "
        f"{GOALS['ece']}); stated >= 90%: right {100 * cal['right_at_90']:.0f}% of {cal['n_at_90']}"
    )
    ones = out["one_measurement"]
    if ones:
        print(
            f"    of which on one measurement (said at the engine's own probability, "
            f"{min(c for c, _ in ones):.0%}-{max(c for c, _ in ones):.0%}): {len(ones)}, right "
            f"{sum(ok for _, ok in ones)}; the others (through the map): ECE "
            f"{calibration(out['mapped'])['ece']:.3f} over {len(out['mapped'])}"
        )
    leads = out.get("leads", [])
    if leads:
        print(
            f"    leads (a stage read on one measurement, said with no percentage; not in the "
            f"ECE): {len(leads)}, their stage right in {sum(leads)}"
        )
    only = [c for c in healthy if c.group == "healthy"]
    print(
        f"  the issue's healthy classes alone (no rollout-bound): "
        f"{_pct(sum(c.alarm_runs for c in only), sum(c.runs for c in only))} with a false alarm; "
        "by view: "
        + ", ".join(f"{v} {sum(c.alarm_by_view.get(v, 0) for c in only)}" for v in views)
    )
    print(
        "  by framework and format (healthy and rollout-bound runs alarmed; faults caught by "
        "diagnose at 100%): "
        + "; ".join(f"{k} {a}/{n}, {c}/{f}" for k, (a, n, c, f) in sorted(out["formats"].items()))
    )
    print("  false alarms, per class (runs; by view; what the alarms said, counted by check):")
    print(f"  {'class':18} {'runs':>9} {'d@50':>5} {'d@100':>5} {'watch':>5}  claims")
    for c in healthy:
        by = " ".join(f"{c.alarm_by_view.get(v, 0):>5}" for v in views)
        claims = ", ".join(f"{k} {n}" for k, n in sorted(c.claims.items(), key=lambda x: -x[1]))
        print(f"  {c.kind:18} {c.alarm_runs:>4}/{c.runs:<4} {by}  {claims}")
    print(
        "  faults, per class (caught: right stage or fault family; fault@100: the fault itself "
        "named by diagnose; pre-onset: checks that spoke before it began; delay: watch, median "
        "steps after onset)"
    )
    print(
        f"  {'class':18} {'d@50':>7} {'d@100':>7} {'watch':>7} {'fault@100':>9} {'pre-onset':>9} "
        f"{'delay':>6} {'% run':>6}"
    )

    def cell(c: ClassScore, view: str) -> str:
        n = c.bad_runs.get(view, 0)
        return f"{c.caught.get(view, 0)}/{n}" if n else "-"

    for c in faulty:
        fault = (
            f"{c.fault_named.get('diagnose@100', 0)}/{c.bad_runs.get('diagnose@100', 0)}"
            if pop.CLASSES[c.kind].fault
            else "-"
        )
        pre_c = f"{c.pre_onset_alarms}/{c.pre_onset_checks}" if c.pre_onset_checks else "-"
        delay = f"{_median(c.delays):.0f}" if c.delays else "-"
        share = f"{100 * _median(c.delay_shares):.0f}%" if c.delays else "-"
        views_c = " ".join(f"{cell(c, v):>7}" for v in views)
        print(f"  {c.kind:18} {views_c} {fault:>9} {pre_c:>9} {delay:>6} {share:>6}")
    print("  reliability (diagnose at 50% and 100%: the stated X% sure against being right):")
    print(f"    {'stated':>8} {'n':>5} {'mean stated':>11} {'right':>6}")
    for row in cal["table"]:
        print(
            f"    {row['bin']:>8} {row['n']:>5} {100 * row['stated']:10.0f}% "
            f"{100 * row['right']:5.0f}%"
        )
    if "bank" in out:
        b = out["bank"]
        print(
            f"  real-log bank: {b['alarms']} false alarms on {b['quiet']} logs where nothing "
            f"should be said; {b['caught']}/{b['bad']} bad logs caught"
        )
        for name, expect, outcome, verdict in b["rows"]:
            print(f"    {name:32} {expect:28} {outcome:14} {verdict}")
    return {
        "false_alarms": h_alarm / h_runs if h_runs else math.nan,
        **{f"caught_{v}": (lambda a, b: a / b if b else math.nan)(*caught(v)) for v in views},
        "ece": cal["ece"],
        "delay_median": _median(delays),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", choices=("heldout", "tuning", "both"), default="both")
    ap.add_argument("--per-class", type=int, default=pop.PER_CLASS)
    ap.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    ap.add_argument("--no-bank", action="store_true", help="skip the real-log bank")
    ap.add_argument("--json", metavar="PATH", help="also write every check's Said as JSON")
    args = ap.parse_args(argv)
    run_report(args.seed, args.per_class, args.jobs, not args.no_bank, args.json)
    return 0


def run_report(
    which: str = "both",
    per_class: int = pop.PER_CLASS,
    jobs: int = 2,
    bank: bool = True,
    json_path: str | None = None,
) -> dict:
    """The held-out seed first (with the bank), then the tuning seed."""
    seeds = {
        "heldout": [("held-out", pop.HELDOUT_SEED)],
        "tuning": [("tuning", pop.TUNING_SEED)],
        "both": [("held-out", pop.HELDOUT_SEED), ("tuning", pop.TUNING_SEED)],
    }[which]
    figures, dump = {}, {}
    print(f"Verdicts on a population of runs (tests/support/population.py; {jobs} processes)")
    for i, (label, seed) in enumerate(seeds):
        out = measure(seed, per_class, jobs, bank=bank and i == 0)
        figures[label] = report(out, label)
        dump[label] = {name: [asdict(s) for s in said] for name, said in out["said"].items()}
    if json_path:
        Path(json_path).write_text(json.dumps({"figures": figures, "said": dump}, indent=1))
    return figures


if __name__ == "__main__":
    sys.exit(main())
