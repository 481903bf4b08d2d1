"""Local W&B runs, written by the real wandb SDK in offline mode, read from their transaction logs.

The runs are written once per session by separate processes (as a training script would): a
finished run, a run resumed under the same id (two folders), and a run still being written by a
live process while the test reads it.  wandb.init takes about 1 s offline here (3 s a process).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.model import Collector
from rlmap_bot.runs.sources import Cursor, open_source, parse_source
from rlmap_bot.runs.sources import wandb_file as wf
from rlmap_bot.runs.sources.access import Access
from support import skip_unless_installed, wandb_offline_env
from support.shared import once_per_run

skip_unless_installed("wandb", "the test extra installs wandb; it writes the runs these tests read")

REWARD, LENGTH = "critic/score/mean", "response_length/mean"
#: How long a test waits for the SDK's background writer to put logged steps on disk.
#: Judgement: it writes within a second here; a loaded CI machine gets ample room.
WAIT_S = 60

WRITER = r"""
import math, sys, wandb
run_id, start, stop, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "hold"
scale = float(sys.argv[5])
run = wandb.init(project="rl", id=run_id, resume="allow")
def log(a, b, scale):
    for i in range(a, b):
        run.log({"critic/score/mean": scale * i / 100, "response_length/mean": 200.0 + i,
                 "train": {"entropy": 0.5}, "bad": float("nan") if i == 7 else 1.0})
log(start, stop, scale)
if hold:  # a live run: say how far it got, then wait to be told to log more
    print("logged", flush=True)
    more = int(sys.stdin.readline())
    log(stop, more, 1.0)
    print("logged", flush=True)
    sys.stdin.readline()
run.finish()
"""


def _env(root: Path) -> dict[str, str]:
    env = wandb_offline_env(root)
    # The SDK flushes a live run's .wandb file every 15 s by default (its setting
    # x_transaction_log_flush_interval); every second here, so a test that reads a live run as
    # it grows waits a second, not 15, for each flush. The reader meets the same file: whole
    # records of a run still being written, then the rest.
    env["WANDB__TRANSACTION_LOG_FLUSH_INTERVAL"] = "1"
    return env


def _write(
    root: Path, run_id: str, start: int, stop: int, hold: bool = False, scale: float = 1.0
) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            WRITER,
            run_id,
            str(start),
            str(stop),
            "hold" if hold else "done",
            str(scale),
        ],
        env=_env(root),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _same_second(root: Path, run_id: str, seconds: int = 240) -> list[Path]:
    """Empty folders named as a run of ``run_id`` starting in each of the next ``seconds``: a
    process resuming the run meanwhile finds its folder's name taken, as when it starts in the
    same second as the folder before it, and the SDK adds ``-1`` (``set_sync_dir_suffix`` in
    wandb_init).  The caller removes them once the run is written."""
    now = time.time()
    made = []
    for i in range(-2, seconds):
        stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(now + i))
        folder = root / "wandb" / f"offline-run-{stamp}-{run_id}"
        if not folder.exists():
            folder.mkdir(parents=True)
            made.append(folder)
    return made


def _write_runs(folder: Path) -> None:
    finished, resumed, suffixed = folder / "finished", folder / "resumed", folder / "suffixed"
    for f in (finished, resumed, suffixed):
        f.mkdir()
    jobs = [
        _write(finished, "fin1", 0, 120),
        _write(resumed, "res1", 0, 60),
        _write(suffixed, "res2", 0, 60),
    ]
    for job in jobs:
        assert job.wait(timeout=300) == 0
    time.sleep(1.1)  # the second folder's name carries the start second: a resume starts later
    # Offline, the resumed process starts again at step
    # 0: steps 0-39 are logged again, with new values.
    placeholders = _same_second(suffixed, "res2")
    jobs = [_write(resumed, "res1", 0, 40, scale=2.0), _write(suffixed, "res2", 0, 40, scale=2.0)]
    for job in jobs:
        assert job.wait(timeout=300) == 0
    for empty in placeholders:
        empty.rmdir()


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """{"finished": wandb dir, "resumed": wandb dir} written by the SDK, in parallel processes,
    once for the whole test run (support/shared.py); the tests only read them."""
    folder, _ = once_per_run(tmp_path_factory, "wandb-runs", _write_runs)
    return {name: folder / name / "wandb" for name in ("finished", "resumed", "suffixed")}


def _keep(name: str) -> bool:
    return True


def _open(text: str):
    return open_source(parse_source(text), Access())


@pytest.mark.parametrize("where", ["latest-run", "wandb", "run-folder", "wandb-file"])
def test_a_finished_run_is_read_from_any_of_its_folders(runs, where):
    root = runs["finished"]
    folder = next(root.glob("offline-run-*"))
    text = {
        "latest-run": root / "latest-run",
        "wandb": root,
        "run-folder": folder,
        "wandb-file": folder / "run-fin1.wandb",
    }[where]
    run = _open(str(text)).read_all(_keep)
    assert run.format == "wandb-run" and run.run_id == "fin1"
    assert run.series[REWARD].steps.tolist() == list(range(120))
    assert run.series[REWARD].values[50] == pytest.approx(0.5)
    assert run.series["train/entropy"].values.tolist() == [0.5] * 120  # a nested dict's inner name
    assert run.nonfinite == {"bad": [7]}
    assert not run.warnings


def test_a_resumed_run_reads_both_folders_and_keeps_the_latest_value_of_a_repeated_step(runs):
    root = runs["resumed"]
    assert len(list(root.glob("offline-run-*-res1"))) == 2
    run = _open(str(root / "latest-run")).read_all(_keep)
    reward = run.series[REWARD]
    assert reward.steps.tolist() == list(range(60))  # each step once
    assert reward.values[:40].tolist() == pytest.approx(
        [2.0 * i / 100 for i in range(40)]
    )  # the resume's
    assert reward.values[40:].tolist() == pytest.approx([i / 100 for i in range(40, 60)])
    assert run.restart_count == 1 and any("resumed run: 2 folders" in w for w in run.warnings)
    first_folder = wf.read_records(sorted(root.glob("offline-run-*-res1"))[0] / "run-res1.wandb")
    assert first_folder.records and not first_folder.corrupt


def test_a_resumed_run_whose_second_folder_wandb_suffixed_is_read_whole(runs):
    """wandb names a resumed run's folder ``offline-run-<time>-<id>-1`` when its name is taken
    (a resume in the same second): the folder is the same run, joined by its run-<id>.wandb."""
    root = runs["suffixed"]
    assert [p.name.endswith("-res2-1") for p in sorted(root.glob("offline-run-*"))] == [
        False,
        True,
    ]
    for where in (root, root / "latest-run", next(root.glob("offline-run-*-res2-1"))):
        run = _open(str(where)).read_all(_keep)
        assert run.run_id == "res2"
        reward = run.series[REWARD]
        assert reward.steps.tolist() == list(range(60)), where
        assert reward.values[:40].tolist() == pytest.approx([2.0 * i / 100 for i in range(40)])
        assert reward.values[40:].tolist() == pytest.approx([i / 100 for i in range(40, 60)])


@pytest.mark.parametrize("name", ["latest-run", "from-the-cluster"])
def test_a_run_folder_copied_with_scp_is_read_whatever_its_name(runs, tmp_path, name):
    """``scp -r host:wandb/latest-run .`` copies the folder the link points to, under the link's
    name (or one of the user's choosing)."""
    import shutil

    copy = shutil.copytree(runs["finished"] / "latest-run", tmp_path / name)
    assert not copy.is_symlink() and (copy / "run-fin1.wandb").is_file()
    for where in (copy, copy / "run-fin1.wandb"):
        run = _open(str(where)).read_all(_keep)
        assert run.format == "wandb-run" and run.run_id == "fin1"
        assert run.series[REWARD].steps.tolist() == list(range(120))


def test_a_wandb_folder_unpacked_from_an_archive_reads_each_folder_once(runs, tmp_path):
    """An archive made with ``zip -r`` stores ``latest-run`` as a copy of its target: unpacked,
    the run is two folders holding the same log, and the resume a third."""
    import shutil

    root = shutil.copytree(runs["resumed"], tmp_path / "wandb", symlinks=False)
    assert (root / "latest-run").is_dir() and not (root / "latest-run").is_symlink()
    for where in (root, root / "latest-run"):
        run = _open(str(where)).read_all(_keep)
        reward = run.series[REWARD]
        assert run.run_id == "res1" and reward.steps.tolist() == list(range(60))
        assert reward.values[:40].tolist() == pytest.approx([2.0 * i / 100 for i in range(40)])
        assert run.restart_count == 1 and any("resumed run: 2 folders" in w for w in run.warnings)


def test_diagnose_reads_a_local_wandb_run(runs, built_db):
    """``diagnose --run wandb/latest-run`` as a user types it."""
    from click.testing import CliRunner

    from rlmap_bot.cli.main import cli
    from support import KNOWLEDGE

    out = CliRunner().invoke(
        cli,
        [
            "--knowledge",
            str(KNOWLEDGE),
            "--db",
            str(built_db),
            "diagnose",
            "--run",
            str(runs["finished"] / "latest-run"),
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["run"]["format"] == "wandb-run" and data["run"]["last_step"] == 119
    assert "proxy_reward_trend" in data["signals"]


def test_a_run_cut_at_any_byte_is_read_up_to_its_last_whole_record_and_resumed_exactly(
    runs, tmp_path
):
    log = next(runs["finished"].glob("offline-run-*")) / "run-fin1.wandb"
    data = log.read_bytes()
    whole = wf.read_records(log)
    cut_file = tmp_path / "run-cut.wandb"
    for cut in sorted(
        {7, 8, 100, 5000, wf.BLOCK - 3, wf.BLOCK + 11, len(data) // 2, len(data) - 1}
    ):
        cut_file.write_bytes(data[:cut])
        head = wf.read_records(cut_file)
        assert head.offset <= cut
        cut_file.write_bytes(data)
        tail = wf.read_records(cut_file, head.offset)
        assert head.records + tail.records == whole.records, f"cut at byte {cut}"


def test_a_corrupt_chunk_is_skipped_with_a_warning(runs, tmp_path):
    folder = tmp_path / "wandb" / "offline-run-20250101_000000-bad1"
    folder.mkdir(parents=True)
    data = bytearray((next(runs["finished"].glob("offline-run-*")) / "run-fin1.wandb").read_bytes())
    data[3000] ^= (
        0xFF  # inside the first block: the rest of that block is lost, later blocks are read
    )
    (folder / "run-bad1.wandb").write_bytes(bytes(data))
    run = _open(str(folder)).read_all(_keep)
    assert any("1 corrupt chunk failed the checksum" in w for w in run.warnings), run.warnings
    steps = run.series[REWARD].steps.tolist()
    assert (
        steps[0] == 0 and steps[-1] == 119 and len(steps) < 120
    )  # the steps after byte 3000 of block 1 lost


def test_a_file_that_is_not_a_transaction_log_is_one_line(tmp_path):
    folder = tmp_path / "wandb" / "run-20250101_000000-xyz"
    folder.mkdir(parents=True)
    (folder / "run-xyz.wandb").write_bytes(b"PK\x03\x04 not a log at all")
    with pytest.raises(RunReadError, match="not a W&B transaction log"):
        _open(str(folder)).read_all(_keep)


def _until(src, cursor: Cursor | None, last: int) -> tuple[list[int], Cursor | None, int]:
    """read_new until step ``last`` has been seen; the steps each read returned, in order."""
    seen: list[int] = []
    reads = 0
    deadline = time.monotonic() + WAIT_S
    while not seen or seen[-1] < last:
        run, cursor = src.read_new(cursor, _keep)
        reads += 1
        if REWARD in run.series:
            seen += run.series[REWARD].steps.tolist()
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    return seen, cursor, reads


def test_a_run_being_written_by_a_live_process_is_read_as_it_grows(tmp_path):
    writer = _write(tmp_path, "live1", 0, 50, hold=True)
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "logged"
        src = _open(str(tmp_path / "wandb"))
        first, cursor, _ = _until(src, None, 49)
        assert first == list(range(50))
        writer.stdin.write("90\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "logged"
        later, cursor, _ = _until(
            src, Cursor.model_validate(json.loads(cursor.model_dump_json())), 89
        )
        assert later == list(range(50, 90))  # only what is new, each step once
    finally:
        if writer.stdin is not None:
            writer.stdin.write("\n")
            writer.stdin.flush()
        writer.wait(timeout=120)
    assert writer.returncode == 0
    whole = _open(str(tmp_path / "wandb")).read_all(_keep)
    assert whole.series[REWARD].steps.tolist() == list(range(90))


def test_protobuf_fields_of_a_history_record_decode(runs):
    log = next(runs["finished"].glob("offline-run-*")) / "run-fin1.wandb"
    c = Collector(_keep)
    histories = sum(wf.feed(r, c) for r in wf.read_records(log).records)
    assert histories == 120 and c.records == 120 and {"_step", "_runtime"}.isdisjoint(c.names)


def test_a_wandb_folder_whose_newest_run_changes_is_read_from_the_new_runs_start_and_said(
    runs, tmp_path
):
    import shutil

    source = next(runs["finished"].glob("offline-run-*"))
    root = tmp_path / "wandb"
    shutil.copytree(source, root / source.name, ignore=shutil.ignore_patterns("tmp", "logs"))
    src = _open(str(root))
    _, cursor = src.read_new(None, _keep)
    later = root / "offline-run-29991231_235959-next2"
    shutil.copytree(source, later, ignore=shutil.ignore_patterns("tmp", "logs", "*.wandb"))
    shutil.copy(source / "run-fin1.wandb", later / "run-next2.wandb")
    run, _ = _open(str(root)).read_new(cursor, _keep)
    assert run.reset and run.run_id == "next2" and "now next2 (was fin1)" in run.warnings[0]
    assert run.series[REWARD].steps.tolist() == list(range(120))
