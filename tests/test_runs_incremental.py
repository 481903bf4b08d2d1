"""The incremental reader reads only appended bytes and notices truncation and rotation."""

from __future__ import annotations

import json
import os

import pytest

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.incremental import HEAD_BYTES, ReaderState, RunReader
from support import runlogs as rl

REWARD = "critic/score/mean"


@pytest.fixture(scope="module")
def records():
    return rl.named(rl.curves("healthy", steps=3000), "verl", filler=8)


def _append(path, text: str) -> int:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
    return len(text.encode())


@pytest.mark.parametrize("kind", ["verl-console", "verl-jsonl", "csv", "jsonl"])
def test_only_appended_bytes_are_read(kind, tmp_path, aliases, records):
    path = tmp_path / "log"
    first, later = records[:2500], records[2500:2510]
    if kind == "verl-console":
        rl.write_verl_console(path, first)
        new = "".join(rl.verl_console_lines(later))
    elif kind == "verl-jsonl":
        rl.write_verl_jsonl(path, first)
        new = "".join(json.dumps({"step": s, "data": r}) + "\n" for s, r in later)
    elif kind == "csv":
        rl.write_csv(path, first)
        header = path.read_text().splitlines()[0].split(",")
        new = "".join(
            ",".join([str(s)] + [repr(r[c]) if c in r else "" for c in header[1:]]) + "\n"
            for s, r in later
        )
    else:
        rl.write_jsonl(path, first)
        new = "".join(json.dumps({"step": s, **r}) + "\n" for s, r in later)
    reader = RunReader(path, aliases=aliases)
    whole = reader.read_new()
    size = path.stat().st_size
    assert whole.series[REWARD].steps[-1] == 2499 and whole.bytes_read >= size
    appended = _append(path, new)
    delta = reader.read_new()
    assert delta.series[REWARD].steps.tolist() == list(range(2500, 2510))
    assert not delta.reset
    # the appended bytes plus the re-read head fingerprint, nothing of the 2,500 earlier steps
    assert appended <= delta.bytes_read <= appended + HEAD_BYTES
    assert delta.bytes_read < size / 50
    nothing = reader.read_new()
    assert nothing.series == {} and nothing.bytes_read <= HEAD_BYTES


def test_state_survives_serialisation_and_a_partial_line_waits(tmp_path, aliases, records):
    path = rl.write_csv(tmp_path / "m.csv", records[:100])
    reader = RunReader(path, aliases=aliases)
    reader.read_new()
    saved = json.dumps(reader.state.model_dump())
    header = path.read_text().splitlines()[0].split(",")
    row = lambda s, r: ",".join([str(s)] + [repr(r[c]) if c in r else "" for c in header[1:]])  # noqa: E731
    _append(
        path, row(*records[100]) + "\n" + row(*records[101])[:15]
    )  # the second row is still being written
    resumed = RunReader(path, aliases=aliases, state=ReaderState.model_validate_json(saved))
    delta = resumed.read_new()
    assert delta.series[REWARD].steps.tolist() == [100]
    _append(path, row(*records[101])[15:] + "\n")
    assert resumed.read_new().series[REWARD].steps.tolist() == [101]


def test_truncation_and_rotation_start_again(tmp_path, aliases, records):
    path = rl.write_verl_jsonl(tmp_path / "r.jsonl", records[:300])
    reader = RunReader(path, aliases=aliases)
    reader.read_new()
    # truncated: shorter than the saved offset
    rl.write_verl_jsonl(path, records[:10])
    delta = reader.read_new()
    assert delta.reset and "shrank" in delta.warnings[0]
    assert delta.series[REWARD].steps[-1] == 9
    # rotated: a new file under the same name, already longer than the offset
    os.rename(path, tmp_path / "r.jsonl.1")
    rl.write_verl_jsonl(path, records[1000:1400])
    delta = reader.read_new()
    assert delta.reset and delta.series[REWARD].steps[0] == 1000
    # rewritten in place with a different head but the same inode and a larger size
    with open(path, "r+b") as f:
        f.write(b'{"step": 7, "data": {}}   ')
    assert reader.read_new().reset


def test_restart_across_increments_is_seen(tmp_path, aliases, records):
    path = rl.write_verl_console(tmp_path / "c.log", records[:200])
    reader = RunReader(path, aliases=aliases)
    reader.read_new()
    _append(path, "".join(rl.verl_console_lines(records[150:160])))
    delta = reader.read_new()
    assert (
        delta.restart_count == 1
        and delta.restarts[0].step == 150
        and delta.restarts[0].after_step == 199
    )


def test_formats_that_are_not_line_based_are_refused(tmp_path, aliases, records):
    rl.write_mlflow_db(tmp_path / "mlflow.db", {"a": records[:20]})
    with pytest.raises(RunReadError, match="not line-based"):
        RunReader(tmp_path / "mlflow.db", aliases=aliases)
    gz = rl.write_verl_jsonl(tmp_path / "x.jsonl.gz", records[:20], gz=True)
    with pytest.raises(RunReadError, match="gzip"):
        RunReader(gz, aliases=aliases)
