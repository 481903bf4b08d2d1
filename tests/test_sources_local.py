"""The ``path`` source: today's file readers behind one argument, reading only what is new."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.read import keeper
from rlmap_bot.runs.sources import Cursor, open_source, parse_source
from rlmap_bot.runs.sources.access import Access
from support import runlogs as rl

REWARD = "critic/score/mean"


@pytest.fixture(scope="module")
def keep(aliases):
    return keeper(aliases, ())


@pytest.fixture(scope="module")
def records():
    return rl.named(rl.curves("healthy", steps=120), "verl", filler=4)


def _open(path, **kw):
    return open_source(parse_source(str(path), **kw), Access())


def _roundtrip(cursor: Cursor) -> Cursor:
    """A cursor as a watch stores it: JSON and back."""
    return Cursor.model_validate(json.loads(cursor.model_dump_json()))


def test_verl_jsonl_read_new_returns_only_appended_steps(tmp_path, keep, records):
    path = rl.write_verl_jsonl(tmp_path / "exp.jsonl", records[:80])
    src = _open(path)
    first, cursor = src.read_new(None, keep)
    assert first.series[REWARD].steps[-1] == records[79][0]
    with open(path, "a") as f:
        for step, row in records[80:90]:
            f.write(json.dumps({"step": step, "data": row}) + "\n")
    new, cursor = src.read_new(_roundtrip(cursor), keep)
    assert new.series[REWARD].steps.tolist() == [s for s, r in records[80:90] if REWARD in r]
    nothing, _ = src.read_new(_roundtrip(cursor), keep)
    assert not nothing.series and nothing.records == 0


def test_verl_jsonl_null_is_read_as_nan(tmp_path, keep):
    path = tmp_path / "exp.jsonl"
    lines = [
        {"step": s, "data": {REWARD: 0.1 * s, "actor/grad_norm": None if s == 3 else 1.0}}
        for s in range(1, 6)
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    run = _open(path).read_all(keep)
    assert run.nonfinite == {"actor/grad_norm": [3]} and np.isnan(
        run.series["actor/grad_norm"].values[2]
    )


def test_verl_jsonl_truncated_by_a_restart_is_read_again_and_said(tmp_path, keep, records):
    path = rl.write_verl_jsonl(tmp_path / "exp.jsonl", records[:60])
    src = _open(path)
    _, cursor = src.read_new(None, keep)
    rl.write_verl_jsonl(
        path, [(s, {**r, REWARD: 0.5}) for s, r in records[:70] if REWARD in r]
    )  # "w": truncated
    again, cursor = src.read_new(_roundtrip(cursor), keep)
    assert again.reset and "read again from the start" in again.warnings[0]
    assert again.series[REWARD].values.tolist() == [0.5] * len(again.series[REWARD])


def test_tensorboard_read_new_picks_up_new_files_and_growth_of_the_last(tmp_path, keep, records):
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    logdir = rl.write_tensorboard(tmp_path / "tb", records[:50])
    src = _open(logdir)
    first, cursor = src.read_new(None, keep)
    assert first.series[REWARD].steps[-1] == records[49][0]
    # A restart: a second event file that logs steps from 41 again with new values, still open.
    writer = EventFileWriter(str(logdir), filename_suffix=".restart")
    resumed = [(s, {**r, REWARD: 9.0}) for s, r in records[40:60]]

    def log(rows):
        for step, row in rows:
            values = [summary_pb2.Summary.Value(tag=k, simple_value=v) for k, v in row.items()]
            writer.add_event(
                event_pb2.Event(
                    step=step, wall_time=2e9 + step, summary=summary_pb2.Summary(value=values)
                )
            )
        writer.flush()

    log(resumed[:10])
    new, cursor = src.read_new(_roundtrip(cursor), keep)
    assert any("new event file" in w for w in new.warnings)
    assert new.series[REWARD].values.tolist() == [9.0] * len(
        [1 for _, r in resumed[:10] if REWARD in r]
    )
    assert new.restart_count == 1
    log(resumed[10:])
    grown, cursor = src.read_new(_roundtrip(cursor), keep)
    assert grown.series[REWARD].steps.tolist() == [s for s, r in resumed[10:] if REWARD in r]
    assert grown.bytes_read < sum(p.stat().st_size for p in logdir.iterdir()) / 2  # only the growth
    writer.close()
    whole = src.read_all(keep)
    series = whole.series[REWARD]
    assert series.steps.tolist() == sorted(set(series.steps.tolist()))  # each step once
    assert series.values[series.steps >= records[40][0]].tolist() == [9.0] * int(
        (series.steps >= records[40][0]).sum()
    )


def test_trainer_state_is_not_read_again_until_it_changes(tmp_path, keep):
    records = rl.named(rl.curves("healthy", steps=60), "trl", filler=2)
    out = rl.write_trl_output(tmp_path / "out", records[:40], checkpoints=())
    src = _open(out)
    first, cursor = src.read_new(None, keep)
    assert first.bytes_read > 0
    same, cursor = src.read_new(_roundtrip(cursor), keep)
    assert same.bytes_read == 0 and not same.series
    rl.write_trl_output(tmp_path / "out", records, checkpoints=())
    more, cursor = src.read_new(_roundtrip(cursor), keep)
    name = next(iter(more.series))
    assert more.series[name].steps[0] > first.series[name].steps[-1]


def test_format_and_run_id_reach_the_file_readers(tmp_path, keep):
    path = tmp_path / "runs.csv"
    path.write_text("run,step,critic/score/mean\na,1,0.1\nb,1,0.9\na,2,0.2\nb,2,0.8\n")
    first = _open(path).read_all(keep)
    assert first.series[REWARD].values.tolist() == [0.1, 0.2]
    assert any("holds 2 runs" in w and "--run-id" in w for w in first.warnings)
    run = _open(path, run_id="b").read_all(keep)
    assert run.series[REWARD].values.tolist() == [0.9, 0.8]


def test_a_path_outside_the_run_roots_is_refused(tmp_path):
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    (outside / "x.csv").write_text("step,critic/score/mean\n1,0.1\n")
    with pytest.raises(RunReadError, match="outside the folders"):
        open_source(parse_source(str(outside / "x.csv")), Access(run_roots=(inside,)))


@pytest.mark.parametrize("what", ["empty folder", "folder of notes", "notes file"])
def test_nothing_readable_says_where_else_a_run_can_be(tmp_path, keep, what):
    """The error names W&B run folders and the tracker sources beside the log formats, so a
    person who pointed at the wrong place learns what to point at (issue 36)."""
    folder = tmp_path / "exp"
    folder.mkdir()
    if what != "empty folder":
        (folder / "notes.txt").write_text("meeting notes\nbuy GPUs\n")
    target = folder / "notes.txt" if what == "notes file" else folder
    with pytest.raises(RunReadError) as caught:
        _open(target).read_all(keep)
    message = str(caught.value)
    assert "\n" not in message
    for named in ("run-<id>.wandb", "wandb:", "mlflow:", "trackio:"):
        assert named in message, message
