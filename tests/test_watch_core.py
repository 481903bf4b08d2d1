"""The watch core without Slack: incremental checks, the
bounded sample, faults, conditions, roots, the store.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shlex
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

from rlmap_bot.cli.main import cli
from rlmap_bot.errors import UsageError
from rlmap_bot.runs.growing import scan as fault_scan
from rlmap_bot.runs.growing.kept import CAP, TAIL, KeptRun
from rlmap_bot.runs.growing.scan import CLEAR_FINITE, FaultState
from rlmap_bot.runs.incremental import HEAD_BYTES, RunReader
from rlmap_bot.runs.model import RunData, Series
from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from rlmap_bot.runs.sources.access import Access, PathRefused, resolve_run_path
from rlmap_bot.runs.verdict import verdict_for
from rlmap_bot.settings import parse_roots
from rlmap_bot.state.db import ConflictError
from rlmap_bot.state.store import StateStore
from rlmap_bot.watch.check import check_run
from rlmap_bot.watch.conditions import CLEAR_CHECKS, evaluate
from rlmap_bot.watch.model import Tracking, Watch, parse_interval
from support import runlogs as rl
from support.cli import run_cli

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)


class Checker:
    """check_run over a real file, with what it learnt stored
    and read back between checks as the service does.
    """

    def __init__(self, core, aliases, path, root):
        self.core, self.aliases, self.root = core, aliases, root
        self.watch = Watch(
            team="T", channel="C", path=str(path.resolve()), created_at=T0, updated_at=T0
        )
        self.tracking, self.blob, self.now = Tracking(), None, T0

    def check(self, piece: int | None = None, minutes: float = 15):
        self.now += dt.timedelta(minutes=minutes)
        extra = {"piece": piece} if piece else {}
        out = check_run(
            self.watch,
            Tracking.model_validate_json(self.tracking.model_dump_json()),
            KeptRun.loads(self.blob),
            engine=self.core.engine,
            aliases=self.aliases,
            roots=[self.root],
            now=self.now,
            stall=HOUR,
            access=Access(run_roots=(self.root,)),
            **extra,
        )
        self.tracking, self.blob = out.tracking, out.kept.dumps()
        if out.evaluation is not None:
            self.tracking.conditions, self.tracking.episodes = (
                out.evaluation.conditions,
                out.evaluation.episodes,
            )
        return out


def _append(path, records) -> int:
    lines = rl.verl_console_lines(records)
    with open(path, "a", encoding="utf-8") as f:
        f.writelines(lines)
    return sum(len(x.encode()) for x in lines)


# -- reading only what is new ----------------------------------------------------------------------
def test_a_check_reads_only_the_appended_bytes(core, aliases, tmp_path):
    records = rl.named(rl.curves("healthy", steps=3010), "verl", filler=8)
    path = rl.write_verl_console(tmp_path / "train.log", records[:3001])
    checker = Checker(core, aliases, path, tmp_path)
    first = checker.check()
    size = path.stat().st_size
    assert first.status == "checked" and first.bytes_read >= size and first.kept.last_step == 3000
    appended = _append(path, records[3001:])
    second = checker.check()
    assert second.status == "checked" and second.new_points == 10 and second.kept.last_step == 3010
    assert appended <= second.bytes_read <= appended + HEAD_BYTES, (
        "only the new lines and the head fingerprint"
    )
    assert second.bytes_read < size / 50
    third = checker.check()
    assert third.status == "unchanged" and third.bytes_read <= HEAD_BYTES and third.verdict is None
    assert checker.tracking.bytes_read == first.bytes_read + second.bytes_read + third.bytes_read


def test_a_rotated_or_truncated_log_is_read_afresh(core, aliases, tmp_path):
    records = rl.named(rl.curves("healthy", steps=600), "verl")
    path = rl.write_verl_console(tmp_path / "train.log", records[:501])
    checker = Checker(core, aliases, path, tmp_path)
    assert checker.check().kept.last_step == 500
    # Rotated: a new file (new inode) holding a new run of 100 steps.
    fresh = rl.write_verl_console(tmp_path / "new.log", records[:101])
    os.replace(fresh, path)
    rotated = checker.check()
    assert rotated.kept.last_step == 100 and rotated.kept.points == 100, (
        "the old run's points are gone"
    )
    assert rotated.bytes_read >= path.stat().st_size
    # Truncated in place and rewritten shorter.
    rl.write_verl_console(path, records[:51])
    truncated = checker.check()
    assert truncated.kept.last_step == 50 and truncated.kept.points == 50


def test_a_large_read_goes_in_bounded_pieces(core, aliases, tmp_path):
    records = rl.named(rl.curves("healthy", steps=2000), "verl")
    path = rl.write_verl_console(tmp_path / "train.log", records)
    size = path.stat().st_size
    pieces = Checker(core, aliases, path, tmp_path).check(piece=64 << 10)
    whole = Checker(core, aliases, path, tmp_path).check()
    assert pieces.pieces >= size // (64 << 10) and whole.pieces == 1
    assert pieces.kept.points == whole.kept.points == 2000
    a, b = pieces.kept.to_run().series, whole.kept.to_run().series
    assert sorted(a) == sorted(b) and all(np.array_equal(a[k].values, b[k].values) for k in a)
    # RunReader's own budget: each call stops at the first whole line past it.
    reader = RunReader(path, aliases=aliases)
    budget, seen, counted = 32 << 10, 0, 0
    while True:
        before = reader.state.offset
        part = reader.read_new(max_bytes=budget)
        assert reader.state.offset - before < budget + 4096, "at most one line over the budget"
        seen += part.step_count
        counted += part.bytes_read
        if reader.state.offset - before < budget:
            break
    assert reader.state.offset == size and seen == 2001  # steps 0 (an evaluation) to 2000
    assert reader.bytes_read == counted, (
        "the reader's lifetime count is the sum of its reads (head re-reads once)"
    )


def test_other_formats_are_read_whole_and_only_when_they_change(core, aliases, tmp_path):
    records = rl.named(rl.phased([("healthy", 300), ("reward_hacking", 200)]), "verl")
    path = rl.write_verl_console(tmp_path / "train.log.gz", records[:301], gz=True)
    checker = Checker(core, aliases, path, tmp_path)
    first = checker.check()
    assert (
        first.status == "checked"
        and checker.tracking.mode == "whole"
        and first.kept.last_step == 300
    )
    same = checker.check()
    assert same.status == "unchanged" and same.bytes_read == 0, (
        "size and mtime unchanged: nothing is read"
    )
    rl.write_verl_console(path, records, gz=True)
    grown = checker.check()
    assert grown.status == "checked" and grown.new_points == 200 and grown.kept.last_step == 500
    assert grown.verdict.binding_stage == "reward"
    assert [t.condition.key for t in grown.evaluation.transitions] == ["binds:reward"]


def test_a_run_folder_is_watched_through_its_one_log(core, aliases, tmp_path):
    folder = tmp_path / "exp"
    records = rl.named(rl.curves("healthy", steps=120), "verl")
    log = rl.write_verl_console(folder / "logs" / "train.txt", records[:101])
    (folder / "config.yaml").write_text("lr: 1e-6\n")
    checker = Checker(core, aliases, folder, tmp_path)
    assert checker.check().kept.last_step == 100 and checker.tracking.mode == "lines"
    assert checker.tracking.source == str(log.resolve())
    appended = _append(log, records[101:])
    out = checker.check()
    assert out.new_points == 20 and out.bytes_read <= appended + HEAD_BYTES
    rl.write_verl_console(folder / "logs" / "second.txt", records[:50])
    two = checker.check()
    assert (
        two.status == "problem"
        and "holds 2 runs" in two.message
        and "watch one of them by its path" in two.message
    )


def _grow_event_file(logdir, records) -> int:
    """Append events to the folder's event file with tensorboard's own record writer, as its
    writer does while a run goes; returns the bytes appended."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    (path,) = logdir.glob("events.out.tfevents.*")
    before = path.stat().st_size
    with open(path, "ab") as f:
        writer = RecordWriter(f)
        for step, row in records:
            values = [summary_pb2.Summary.Value(tag=k, simple_value=v) for k, v in row.items()]
            event = event_pb2.Event(step=step, summary=summary_pb2.Summary(value=values))
            writer.write(event.SerializeToString())
    return path.stat().st_size - before


def test_a_tensorboard_folder_check_reads_only_the_events_appended(core, aliases, tmp_path):
    records = rl.named(rl.curves("healthy", steps=2010), "verl")
    logdir = rl.write_tensorboard(tmp_path / "tb", records[:2001])
    (event_file,) = logdir.glob("events.out.tfevents.*")
    checker = Checker(core, aliases, logdir, tmp_path)
    first = checker.check()
    assert first.status == "checked" and first.kept.last_step == 2000
    appended = _grow_event_file(logdir, records[2001:])
    second = checker.check()
    assert second.status == "checked" and second.new_points == 10
    assert second.kept.last_step == 2010 and second.kept.points == first.kept.points + 10
    assert second.bytes_read == appended, "the growth of the event file, not the whole file"
    assert second.bytes_read < event_file.stat().st_size / 50
    idle = checker.check()
    assert idle.status == "unchanged" and idle.bytes_read == 0


def test_a_line_watch_whose_tracking_holds_only_its_reader_resumes_at_its_offset(
    core, aliases, tmp_path
):
    records = rl.named(rl.curves("healthy", steps=520), "verl")
    path = rl.write_verl_console(tmp_path / "train.log", records[:501])
    reader = RunReader(path, aliases=aliases)
    reader.read_new()
    checker = Checker(core, aliases, path, tmp_path)
    checker.tracking = Tracking(
        mode="lines", source=str(path.resolve()), reader=reader.state.model_dump(mode="json")
    )
    appended = _append(path, records[501:])
    out = checker.check()
    assert out.status == "checked" and out.new_points == 20
    assert out.bytes_read <= appended + HEAD_BYTES, "read from the stored offset, not byte 0"
    assert checker.tracking.mode == "lines" and checker.tracking.cursor is not None


def test_a_log_that_turns_unreadable_is_a_problem_then_a_stall_that_says_why(
    core, aliases, tmp_path
):
    records = rl.named(rl.curves("healthy", steps=120), "verl")
    path = rl.write_verl_console(tmp_path / "train.log", records)
    checker = Checker(core, aliases, path, tmp_path)
    kept_before = checker.check().kept.points
    path.write_bytes(b"")  # emptied by a job that restarts its log
    problem = checker.check(minutes=30)
    assert problem.status == "problem" and "empty file" in problem.message
    assert problem.kept.points == kept_before, (
        "what was learnt is kept while the log cannot be read"
    )
    stalled = checker.check(minutes=30)  # 60 minutes since the last new step
    assert (
        stalled.status == "paused"
        and stalled.pause == "stalled"
        and "empty file" in stalled.message
    )


# -- the bounded sample
#  --------------------------------------------------------------------------------
def test_the_kept_sample_is_bounded_spans_the_run_and_survives_storage():
    kept = KeptRun()
    steps = np.arange(1, 20_001, dtype=np.int64)
    values = np.sin(steps / 500.0)
    for start in range(0, steps.size, 1234):
        s = steps[start : start + 1234]
        kept.absorb(
            RunData(
                path="p",
                format="jsonl",
                metrics=["m"],
                series={"m": Series(name="m", steps=s, values=values[start : start + 1234])},
            )
        )
    m = kept.metrics["m"]
    assert CAP // 2 <= m.steps.size <= CAP and m.stride in {8, 16}
    assert m.steps[0] == 1 and 20_000 - m.steps[-1] < m.stride, "evenly over the whole run"
    assert np.all(np.diff(m.steps) == m.stride)
    assert m.tail_steps.tolist() == list(range(20_001 - TAIL, 20_001)) and kept.points == 20_000
    blob = kept.dumps()
    assert len(blob) < (CAP + TAIL) * 16 * 2
    again = KeptRun.loads(blob)
    assert (
        np.array_equal(again.metrics["m"].steps, m.steps) and again.metrics["m"].stride == m.stride
    )
    # A restart from step 15,001 replaces what was logged from there on.
    replay = np.arange(15_001, 15_101, dtype=np.int64)
    again.absorb(
        RunData(
            path="p",
            format="jsonl",
            series={"m": Series(name="m", steps=replay, values=np.full(100, 7.0))},
        )
    )
    r = again.metrics["m"]
    assert r.tail_steps[-1] == 15_100 and r.steps[-1] <= 15_100 and r.values[-1] == 7.0


def test_a_short_run_is_judged_exactly_as_diagnose_run_judges_it(core, aliases, tmp_path):
    records = rl.named(rl.phased([("healthy", 300), ("reward_hacking", 200)]), "verl")
    path = rl.write_verl_console(tmp_path / "train.log", records)
    out = Checker(core, aliases, path, tmp_path).check()
    whole = derive_signals(read_source(path, aliases=aliases), aliases)
    assert out.derivation.signals == whole.signals
    assert out.verdict.binding_stage == verdict_for(core.engine, whole).binding_stage == "reward"


def test_a_long_run_is_judged_on_its_sample_as_on_the_whole(core, aliases, tmp_path):
    records = rl.named(rl.phased([("healthy", 6000), ("reward_hacking", 3000)]), "verl")
    path = rl.write_verl_console(tmp_path / "train.log", records)
    checker = Checker(core, aliases, path, tmp_path)
    out = checker.check()
    assert out.kept.largest_stride > 1 and all(
        m.steps.size <= CAP for m in out.kept.metrics.values()
    )
    whole = derive_signals(read_source(path, aliases=aliases), aliases)
    for signal in ("proxy_reward_trend", "heldout_score_trend", "entropy_trend", "loss_divergence"):
        assert out.derivation.signals[signal] == whole.signals[signal], signal
    assert out.verdict.binding_stage == verdict_for(core.engine, whole).binding_stage == "reward"
    assert any("bounded sample" in w for w in out.derivation.warnings)


# -- faults at full resolution
#  -----------------------------------------------------------------------
def test_spikes_are_seen_at_full_resolution_across_checks(core, aliases, tmp_path):
    records = rl.named(rl.curves("grad_spikes", steps=200), "verl")
    path = rl.write_verl_console(tmp_path / "train.log", records[:100])  # up to step 99: spike 83
    checker = Checker(core, aliases, path, tmp_path)
    checker.check()
    _append(path, records[100:140])  # spike 131
    checker.check()
    _append(path, records[140:])  # spike 167
    out = checker.check()
    faults = FaultState.model_validate(out.tracking.faults)
    assert faults.spike_steps == list(rl.SPIKE_STEPS) and faults.spikes == 3
    whole = derive_signals(read_source(path, aliases=aliases), aliases)
    assert whole.signal_sources["grad_norm_spikes"].marks == list(rl.SPIKE_STEPS)
    assert out.derivation.signals["grad_norm_spikes"] is True


def test_a_nan_fault_stays_open_until_fifty_finite_steps_follow(core, aliases, tmp_path):
    records = rl.named(rl.phased([("healthy", 100), ("nan", 5), ("healthy", 100)]), "verl")
    path = rl.write_verl_console(tmp_path / "train.log", records[:101])
    checker = Checker(core, aliases, path, tmp_path)
    assert checker.check().opened_faults == set()
    _append(path, records[101:106])
    out = checker.check()
    assert out.opened_faults == {"nan"} and out.derivation.signals["loss_divergence"] is True
    # A NaN loss is also decisive evidence that optimization binds: both open, in one alert.
    assert [t.condition.key for t in out.evaluation.transitions] == [
        "binds:optimization",
        "fault:nan",
    ]
    _append(path, records[106 : 106 + CLEAR_FINITE - 1])
    out = checker.check()
    assert (
        FaultState.model_validate(out.tracking.faults).active("nan")
        and out.evaluation.transitions == []
    )
    _append(path, records[106 + CLEAR_FINITE - 1 : 106 + CLEAR_FINITE])
    out = checker.check()
    nan = FaultState.model_validate(out.tracking.faults).nan
    assert not nan.active and nan.cleared_step == 105 + CLEAR_FINITE
    assert [(t.kind, t.condition.key) for t in out.evaluation.transitions] == [
        ("resolved", "fault:nan")
    ]
    assert out.derivation.signals["loss_divergence"] is False


def test_a_divergence_opens_at_the_jump_and_clears_when_the_level_is_back(aliases):
    steps = np.arange(1, 301, dtype=np.int64)
    rng = np.random.default_rng(3)
    loss = rng.normal(0.0, 0.02, steps.size)
    loss[150:200] += 5.0  # the loss jumps at step 151 and stays up for 50 steps

    def chunk(lo, hi):
        sel = (steps >= lo) & (steps <= hi)
        return RunData(
            path="p",
            format="jsonl",
            metrics=["actor/pg_loss"],
            series={
                "actor/pg_loss": Series(name="actor/pg_loss", steps=steps[sel], values=loss[sel])
            },
        )

    kept, state, opened_at = KeptRun(), FaultState(), []
    for lo, hi in ((1, 140), (141, 160), (161, 190), (191, 240), (241, 300)):
        c = chunk(lo, hi)
        state, opened = fault_scan.scan(
            state,
            kept.tails_run(),
            c,
            aliases,
            kept.points + len(c.series["actor/pg_loss"]),
            kept.empty,
        )
        kept.absorb(c)
        opened_at.append((hi, sorted(opened), state.active("divergence")))
    assert opened_at[1] == (160, ["divergence"], True) and state.divergence.step == 151
    assert opened_at[2][2] is True, "still up at step 190"
    assert opened_at[4][2] is False and state.divergence.cleared_step is not None
    assert [o for _, o, _ in opened_at].count(["divergence"]) == 1


# -- conditions
#  ----------------------------------------------------------------------------------------
def test_a_binding_stage_resolves_only_after_two_checks_with_new_steps_that_no_longer_name_it():
    quiet = FaultState()
    first = evaluate({}, {}, "reward", quiet, set(), True, T0, 100)
    assert [(t.kind, t.condition.key, t.condition.episode) for t in first.transitions] == [
        ("start", "binds:reward", 1)
    ]
    conditions, episodes = first.conditions, first.episodes
    idle = evaluate(conditions, episodes, None, quiet, set(), False, T0, 100)
    assert idle.transitions == [] and idle.conditions["binds:reward"].misses == 0, (
        "no new steps: no count"
    )
    miss = evaluate(conditions, episodes, None, quiet, set(), True, T0, 120)
    assert miss.transitions == [] and miss.conditions["binds:reward"].misses == 1
    back = evaluate(miss.conditions, episodes, "reward", quiet, set(), True, T0, 140)
    assert back.transitions == [] and back.conditions["binds:reward"].misses == 0
    state, eps = back.conditions, back.episodes
    for i in range(CLEAR_CHECKS):
        out = evaluate(state, eps, None, quiet, set(), True, T0, 160 + i)
        state, eps = out.conditions, out.episodes
    assert [(t.kind, t.condition.key) for t in out.transitions] == [("resolved", "binds:reward")]
    again = evaluate(state, eps, "reward", quiet, set(), True, T0, 200)
    assert again.transitions[0].condition.episode == 2, (
        "a condition that comes back is a new episode"
    )
    change = evaluate(again.conditions, again.episodes, "optimization", quiet, set(), True, T0, 220)
    [t] = change.transitions
    assert (t.kind, t.condition.key, t.replaced.key) == (
        "change",
        "binds:optimization",
        "binds:reward",
    )
    assert list(change.conditions) == ["binds:optimization"]


def test_a_tie_opens_a_condition_and_settling_on_one_of_its_stages_is_not_news():
    quiet = FaultState()
    tie = evaluate({}, {}, None, quiet, set(), True, T0, 100, tied=["reward", "optimization"])
    [t] = tie.transitions
    assert (t.kind, t.condition.key) == ("start", "tie:optimization+reward")
    tie.conditions[
        "tie:optimization+reward"
    ].announced = True  # as the service marks it once posted
    settled = evaluate(tie.conditions, tie.episodes, "reward", quiet, set(), True, T0, 120)
    [t] = settled.transitions
    assert (t.kind, t.condition.key, t.replaced.key) == (
        "narrowed",
        "binds:reward",
        "tie:optimization+reward",
    )
    assert settled.conditions["binds:reward"].announced, "the stage was named in the tie alert"
    # A second stage catching up with the one that binds is news: a change to the tie.
    widened = evaluate(
        settled.conditions,
        settled.episodes,
        None,
        quiet,
        set(),
        True,
        T0,
        140,
        tied=["reward", "evaluation"],
    )
    [t] = widened.transitions
    assert (t.kind, t.condition.key) == ("change", "tie:evaluation+reward")
    # Two stages alone are a tie; one stage named in `tied` is not.
    assert evaluate({}, {}, None, quiet, set(), True, T0, 100, tied=["reward"]).transitions == []


# -- roots and intervals
#  -----------------------------------------------------------------------------
def test_paths_resolve_under_the_roots_only(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "exp").mkdir(parents=True)
    (b / "exp2").mkdir(parents=True)
    (b / "exp2" / "log.txt").write_text("x\n")
    (tmp_path / "secret").write_text("x\n")
    roots = parse_roots(f"{a}{os.pathsep}{os.pathsep} {b} ")
    assert roots == [a.resolve(), b.resolve()]
    assert resolve_run_path("exp2/log.txt", roots) == (b / "exp2" / "log.txt").resolve(), (
        "relative: each root"
    )
    os.symlink(b / "exp2", a / "exp" / "other")  # a link from one root into another is fine
    assert (
        resolve_run_path(str(a / "exp" / "other" / "log.txt"), roots)
        == (b / "exp2" / "log.txt").resolve()
    )
    for outside in (str(tmp_path / "secret"), "../secret", f"{a}/exp/../../secret", "/"):
        with pytest.raises(PathRefused, match="RLMAP_RUN_ROOTS"):
            resolve_run_path(outside, roots)
    os.mkfifo(a / "exp" / "pipe")
    with pytest.raises(UsageError, match="neither a log file nor a folder"):
        resolve_run_path("exp/pipe", roots)
    with pytest.raises(PathRefused, match="Watching runs is off"):
        resolve_run_path("exp", [])


@pytest.mark.parametrize(
    "text, minutes",
    [("15m", 15), ("1h", 60), ("2h30m", 150), ("90", 90), ("1 hour", 60), ("1d", 1440)],
)
def test_intervals(text, minutes):
    assert parse_interval(text) == minutes


@pytest.mark.parametrize(
    "text, problem",
    [
        ("3m", "from 5 minutes"),
        ("2d", "to 24 hours"),
        ("soon", "such as 15m"),
        ("15 parsecs", "such as 15m"),
    ],
)
def test_bad_intervals(text, problem):
    with pytest.raises(UsageError, match=problem):
        parse_interval(text)


# -- the state store: claims, ledger, versions (SQLite
#  and PostgreSQL) -------------------------------
def test_check_claims_ledger_and_versions_on_each_engine(state_url):
    store = StateStore(state_url)
    repo = store.watches
    watch = repo.save(Watch(team="T1", channel="C1", path="/runs/a.log"))
    again = repo.save(Watch(team="T1", channel="C1", path="/runs/a.log", interval_minutes=30))
    assert again.id == watch.id and repo.get(watch.id).interval_minutes == 30, (
        "one watch per path and channel"
    )
    stale = dt.timedelta(minutes=10)
    assert repo.claim_check("c1", watch.id, "T1", "at:1", T0, stale) == "claimed"
    assert repo.claim_check("c2", watch.id, "T1", "at:1", T0, stale) == "duplicate"
    assert repo.claim_check("c3", watch.id, "T1", "now:x", T0, stale) == "busy"
    assert (
        repo.claim_check("c4", watch.id, "T1", "now:y", T0 + dt.timedelta(minutes=11), stale)
        == "claimed"
    ), "a claim left by a dead check is given up"
    assert (
        repo.claim_check("c5", watch.id, "T1", "now:z", T0 + dt.timedelta(minutes=12), stale)
        == "busy"
    )
    assert (
        repo.claim_check(
            "c6",
            watch.id,
            "T1",
            "now:z",
            T0 + dt.timedelta(minutes=12),
            stale,
            owner="me",
            owner_dead=lambda o: o == "",
        )
        == "claimed"
    ), "its owner is known dead"
    repo.finish_check("c6", "done")
    keys = [("binds:reward", 1, "alert"), ("fault:nan", 1, "alert")]
    assert repo.claim_alerts("a1", watch, keys[:1], T0) == keys[:1]
    assert repo.claim_alerts("a2", watch, keys, T0) == keys[1:], "only what no earlier post claimed"
    assert sorted(p["alert_id"] for p in repo.pending_alerts(watch.id)) == ["a1", "a2"]
    repo.record_alert("a1", "111.1")
    repo.drop_alert("a2")
    assert repo.alert_ts(watch.id, "binds:reward", 1) == "111.1"
    assert [r["condition"] for r in repo.ledger(watch.id)] == ["binds:reward"]
    version = repo.save_state(watch.id, "T1", Tracking(checks=1), b"blob", 0)
    repo.save_state(watch.id, "T1", Tracking(checks=2), b"blob2", version)
    with pytest.raises(ConflictError):
        repo.save_state(watch.id, "T1", Tracking(checks=3), b"late", version)
    tracking, blob, v = repo.load_state(watch.id)
    assert tracking.checks == 2 and blob == b"blob2" and v == version + 1
    assert store.forget_team("T1")["watch_alerts"] == 1 and repo.list() == []
    store.close()


# -- the terminal
#  ------------------------------------------------------------------------------------
def test_the_terminal_prints_what_a_check_would_post(env, tmp_path):
    root = tmp_path / "runs"
    rl.write_verl_console(
        root / "exp" / "train.log",
        rl.named(rl.phased([("healthy", 300), ("reward_hacking", 200)]), "verl"),
    )
    env["RLMAP_RUN_ROOTS"] = str(root)
    runner = CliRunner()
    done = runner.invoke(cli, ["watch", "exp/train.log", "--once", "--json"], env=env)
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["dry"] is True and result["verdict"]["binding_stage"] == "reward"
    [alert] = result["alerts"]
    assert (
        alert["conditions"] == ["binds:reward"]
        and alert["title"] == "Reward quality started to bind"
    )
    assert any("critic/score/mean" in p for e in alert["evidence"] for p in e["provenance"])
    refused = runner.invoke(cli, ["watch", str(tmp_path / "elsewhere.log"), "--once"], env=env)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "RLMAP_RUN_ROOTS" in refused.stderr
    # The installed script, as a user runs it: the same one line and exit code.
    done = run_cli(["watch", "exp/train.log"], env)
    assert done.returncode == 2 and "--once" in done.stderr and done.stderr.count("\n") == 1


def test_watching_off_in_the_terminal_shows_the_line_that_turns_it_on(env, tmp_path):
    # A newcomer ran `rlmap-bot watch examples/grpo-run.log --once` and was told only that it needs
    # RLMAP_RUN_ROOTS (2026-12-03); the refusal now gives
    # a line that works, which is run here as given.
    log = rl.write_verl_console(
        tmp_path / "runs" / "train.log", rl.named(rl.curves("reward_hacking"), "verl")
    )
    env.pop("RLMAP_RUN_ROOTS", None)
    refused = CliRunner().invoke(cli, ["watch", str(log), "--once"], env=env)
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1
    line = refused.stderr.split("for example: ", 1)[1].strip()
    setting, _, command = line.partition(" rlmap-bot ")
    name, _, value = setting.partition("=")
    assert name == "RLMAP_RUN_ROOTS" and value == str(log.parent)
    done = CliRunner().invoke(cli, shlex.split(command), env={**env, name: value})
    assert done.exit_code == 0 and "Verdict: Reward quality binds" in done.stdout, done.output


def test_a_claim_by_a_dead_process_on_this_host_is_known_dead():
    import socket

    from rlmap_bot.watch.service import OWNER, owner_dead

    host = socket.gethostname()
    gone = subprocess.Popen(["true"])
    gone.wait()  # exited and reaped: its pid names no process
    assert owner_dead(f"{host}:{gone.pid}:x") is True
    assert owner_dead(f"{host}:{os.getpid()}:earlier") is True, (
        "this pid, another token: an earlier process"
    )
    assert owner_dead(OWNER) is False
    assert owner_dead(f"{host}:{os.getppid()}:x") is False, "a live process"
    assert owner_dead(f"another-host:{os.getpid()}:x") is False, (
        "other hosts cannot be known: staleness decides"
    )
    assert owner_dead("") is False
