"""Reading runs: every format detected from content, restarts, NaN, several runs, bad input."""

from __future__ import annotations

import gzip
import math
import os

import numpy as np
import pytest

from rlmap_bot.runs.detect import detect_file
from rlmap_bot.runs.errors import RunReadError
from rlmap_bot.runs.sources import read_source
from support import KNOWLEDGE
from support import runlogs as rl


@pytest.fixture(scope="module")
def verl():
    return rl.named(rl.curves("nan_step"), "verl")


REWARD = "critic/score/mean"


FORMATS = rl.TEXT_AND_FILE_FORMATS  # every format the file readers take


@pytest.mark.parametrize("kind", FORMATS)
def test_every_format_is_detected_and_read_the_same(kind, tmp_path, aliases, verl):
    run = read_source(rl.write_format(kind, tmp_path, verl), aliases=aliases)
    assert run.format == kind
    reward = run.series[REWARD]
    expected = [(s, r[REWARD]) for s, r in verl if REWARD in r]
    assert reward.steps.tolist() == [s for s, _ in expected]
    assert np.allclose(reward.values, [v for _, v in expected], rtol=1e-6)
    # NaN and inf are kept as values and reported, never a crash
    assert rl.NAN_STEP in run.nonfinite["actor/grad_norm"]
    assert math.isinf(
        run.series["actor/grad_norm"].values[run.series["actor/grad_norm"].steps == rl.NAN_STEP][0]
    )
    assert math.isnan(
        run.series["actor/pg_loss"].values[run.series["actor/pg_loss"].steps == rl.NAN_STEP][0]
    )
    # unmapped metrics are listed but not kept
    assert "critic/advantages/mean" in run.metrics and "critic/advantages/mean" not in run.series
    names = [n.replace("@", "_at_") for n in ("val-core/openai/gsm8k/reward/mean@1",)]
    assert any(n in run.series for n in ["val-core/openai/gsm8k/reward/mean@1", *names])


def test_verl_console_handles_ansi_ray_prefixes_and_numpy_reprs(tmp_path, aliases):
    path = tmp_path / "train.log"
    path.write_text(
        "\x1b[2m(TaskRunner pid=77)\x1b[0m step:1 - critic/score/mean:np.float64(0.25) - "
        "actor/entropy:0.6 - actor/grad_norm:tensor(0.5, device='cuda:0') - "
        "other:text\n(TaskRunner pid=77) \x1b[32mstep:2 - critic/score/mean:nan - "
        "actor/entropy:inf - actor/grad_norm:-inf\x1b[0m\nsome warning line with step: in it\n"
    )
    run = read_source(path, aliases=aliases)
    assert run.series[REWARD].values[0] == 0.25
    assert run.series["actor/grad_norm"].values[0] == 0.5
    assert math.isnan(run.series[REWARD].values[1]) and math.isinf(
        run.series["actor/entropy"].values[1]
    )
    assert run.skipped == 1 and run.records == 2


def test_verl_2024_names_are_read_as_the_older_version(tmp_path, aliases):
    from rlmap_bot.runs.signals import derive_signals

    records = rl.named(rl.curves("rollout_bound"), "verl2024")
    run = read_source(
        rl.write_verl_console(tmp_path / "old.log", records, numpy_repr=False), aliases=aliases
    )
    d = derive_signals(run, aliases)
    assert "2024" in d.run.framework
    assert d.signals["rollout_wait_fraction"] == pytest.approx(0.7, abs=0.01)
    assert d.signal_sources["rollout_wait_fraction"].metric == "timing/gen / timing/step"
    assert d.signal_sources["entropy_trend"].metric == "actor/entropy_loss"


def test_gzip_logs_are_detected_by_magic_bytes(tmp_path, aliases, verl):
    path = rl.write_verl_jsonl(tmp_path / "log.dat", verl, gz=True)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    run = read_source(path, aliases=aliases)
    assert run.format == "verl-jsonl" and run.series[REWARD].steps.size == 200


def test_wandb_json_array_export(tmp_path, aliases, verl):
    run = read_source(rl.write_json_array(tmp_path / "history.json", verl), aliases=aliases)
    assert run.format == "wandb-json" and run.series[REWARD].steps.size == 200


def test_tensorboard_tf2_tensor_scalars(tmp_path, aliases, verl):
    run = read_source(
        rl.write_tensorboard(tmp_path / "tb", verl, tensor_encoding=True), aliases=aliases
    )
    assert run.series[REWARD].steps.size == 200
    assert np.allclose(
        run.series[REWARD].values, [r[REWARD] for s, r in verl if REWARD in r], rtol=1e-6
    )


def test_mlflow_db_round_trips_nan_and_inf_and_at_signs(tmp_path, aliases, verl):
    rl.write_mlflow_db(tmp_path / "mlflow.db", {"a": verl})
    run = read_source(tmp_path / "mlflow.db", aliases=aliases)
    assert "val-core/openai/gsm8k/reward/mean_at_1" in run.series
    grad = run.series["actor/grad_norm"]
    assert np.isinf(grad.values[grad.steps == rl.NAN_STEP]).all()
    assert np.isnan(
        run.series["actor/pg_loss"].values[run.series["actor/pg_loss"].steps == rl.NAN_STEP]
    ).all()


def test_trl_output_folder_takes_the_newest_checkpoint(tmp_path, aliases):
    records = rl.named(rl.curves("saturated"), "trl")
    out = rl.write_trl_output(tmp_path / "grpo-out", records, checkpoints=(50, 100))
    run = read_source(out, aliases=aliases)
    assert run.format == "trl-state" and run.path.endswith("checkpoint-200/trainer_state.json")
    assert run.series["reward"].steps[-1] == 200
    assert (
        run.series["eval_reward"].steps.size == 20
    )  # eval entries at the same steps are no restart
    assert run.restart_count == 0
    single = read_source(out / "checkpoint-100", aliases=aliases)
    assert single.series["reward"].steps[-1] == 100


def test_a_restart_keeps_the_last_value_written(tmp_path, aliases):
    records = rl.restarted(rl.named(rl.curves("healthy"), "verl"))
    clean = dict((s, r) for s, r in rl.named(rl.curves("healthy"), "verl"))
    for kind in ("verl-console", "csv", "mlflow-db"):
        sub = tmp_path / kind
        sub.mkdir()
        run = read_source(rl.write_format(kind, sub, records), aliases=aliases)
        reward = run.series[REWARD]
        assert reward.steps.tolist() == list(range(1, 201)), kind
        assert reward.values.max() < 10, f"{kind} kept the first attempt's values"
        assert reward.values[reward.steps == 120][0] == pytest.approx(clean[120][REWARD])
        assert (
            run.restart_count >= 1
            and run.restarts[0].step == 101
            and run.restarts[0].after_step == 130
        )
        assert any("restart seen: step 101" in w for w in run.warnings), kind


def test_several_runs_are_listed_and_picked_with_run_id(tmp_path, aliases):
    a = rl.named(rl.curves("healthy", steps=60), "verl")
    b = rl.named(rl.curves("rollout_bound", steps=60), "verl")
    rl.write_mlflow_db(tmp_path / "mlflow.db", {"baseline": a, "bigger-batch": b})
    with pytest.raises(RunReadError) as err:
        read_source(tmp_path / "mlflow.db", aliases=aliases)
    assert (
        "holds 2 runs" in str(err.value)
        and "grpo/baseline" in str(err.value)
        and "\n" not in str(err.value)
    )
    run = read_source(tmp_path / "mlflow.db", run_id="bigger-batch", aliases=aliases)
    assert run.run_id == "grpo/bigger-batch" and run.runs == ["grpo/baseline", "grpo/bigger-batch"]
    ratio = run.series["timing_s/gen"].values / run.series["timing_s/step"].values
    assert ratio.mean() == pytest.approx(0.7, abs=0.01)
    with pytest.raises(RunReadError, match="no run 'nope'; runs here: grpo/baseline"):
        read_source(tmp_path / "mlflow.db", run_id="nope", aliases=aliases)

    logdir = tmp_path / "tb"
    rl.write_tensorboard(logdir / "lr-1e-6", a)
    rl.write_tensorboard(logdir / "lr-3e-6", b)
    with pytest.raises(RunReadError, match="holds 2 runs"):
        read_source(logdir, aliases=aliases)
    assert read_source(logdir, run_id="lr-3e-6", aliases=aliases).run_id == "lr-3e-6"

    folder = tmp_path / "logs"
    rl.write_verl_console(folder / "one.log", a)
    rl.write_csv(folder / "two.csv", b)
    (folder / "notes.md").write_text("# not a log\n")
    with pytest.raises(RunReadError, match="one.log .verl-console., two.csv .csv."):
        read_source(folder, aliases=aliases)
    assert read_source(folder, run_id="two.csv", aliases=aliases).format == "csv"
    assert read_source(folder, format="csv", aliases=aliases).run_id == "two.csv"  # the only CSV


def test_mlflow_file_store_with_slash_keys(tmp_path, aliases, verl):
    root = rl.write_mlflow_files(tmp_path / "mlruns", {"first": verl[:50], "second": verl})
    assert (root / "1").is_dir() and any((root / "1").rglob("critic/score/mean"))
    run = read_source(root, run_id="second", aliases=aliases)
    assert run.format == "mlflow-files" and run.series[REWARD].steps.size == 200


def _one_line(exc: RunReadError) -> str:
    text = str(exc)
    assert "\n" not in text and exc.exit_code == 2
    return text


def test_not_a_log_names_the_formats_looked_for(tmp_path, aliases):
    path = tmp_path / "readme.txt"
    path.write_text("hello\nthis is prose, not metrics\n")
    with pytest.raises(RunReadError) as err:
        read_source(path, aliases=aliases)
    text = _one_line(err.value)
    assert (
        "not a training log" in text
        and "verl console" in text
        and "TensorBoard" in text
        and "MLflow" in text
    )


def test_no_metric_a_name_can_be_read_as_lists_names_and_how_to_map(tmp_path, aliases):
    path = tmp_path / "custom.csv"
    path.write_text("step,gpu_mem,queue_depth\n1,0.1,0.5\n2,0.2,0.4\n")
    with pytest.raises(RunReadError) as err:
        read_source(path, aliases=aliases)
    text = _one_line(err.value)
    assert "gpu_mem, queue_depth" in text and "--map SIGNAL=METRIC" in text
    run = read_source(path, aliases=aliases, extra_metrics=["gpu_mem"])
    assert run.series["gpu_mem"].values.tolist() == [0.1, 0.2]


def test_empty_binary_and_truncated_files(tmp_path, aliases, verl):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    with pytest.raises(RunReadError, match="empty file"):
        read_source(empty, aliases=aliases)
    junk = tmp_path / "junk.log"
    junk.write_bytes(os.urandom(4096) + b"\x00" * 64)
    with pytest.raises(RunReadError) as err:
        read_source(junk, aliases=aliases)
    assert "binary content" in _one_line(err.value)
    # A cut-off last line (a log still being written, or a copy cut short) is left out and said so.
    cut = rl.write_verl_jsonl(tmp_path / "cut.jsonl", verl)
    data = cut.read_bytes()
    cut.write_bytes(data[: len(data) - 40])
    run = read_source(cut, aliases=aliases)
    assert run.series[REWARD].steps[-1] == 199
    assert any("last line has no newline" in w for w in run.warnings)
    # A writer that ends its last line with no newline loses nothing when the line is a whole
    # JSON object (one cut short would not close); a CSV row cut short can still parse, with its
    # last value cut, so it is left out, and the warning says how to include it.
    whole = rl.write_verl_jsonl(tmp_path / "whole.jsonl", verl)
    whole.write_bytes(whole.read_bytes().rstrip(b"\n"))
    run = read_source(whole, aliases=aliases)
    assert run.series[REWARD].steps[-1] == 200
    assert not any("newline" in w for w in run.warnings), run.warnings
    # A whole JSON object that is no record (a closing summary) is skipped as any such line is:
    # a newline would not change that, so no warning asks for one.
    summary = tmp_path / "summary-last.jsonl"
    summary.write_bytes(whole.read_bytes() + b'\n{"summary": "done"}')
    run = read_source(summary, aliases=aliases)
    assert run.series[REWARD].steps[-1] == 200
    assert not any("newline" in w for w in run.warnings), run.warnings
    table = tmp_path / "no-final-newline.csv"
    table.write_text("step,reward\n1,0.1\n2,0.2\n3,0.3", encoding="utf-8")
    run = read_source(table, aliases=aliases)
    told = (
        "the last line has no newline (cut short, or still being written) and was ignored; "
        "if the file is complete, end it with a newline"
    )
    said = [w for w in run.warnings if "newline" in w]
    assert said == [told], said
    # A file that is only a cut-off line has nothing to read.
    only = tmp_path / "only.jsonl"
    only.write_bytes(b'{"step": 1, "data": {"critic/score/mean": 0.')
    with pytest.raises(RunReadError):
        read_source(only, aliases=aliases)
    # A truncated gzip stream keeps what it could decompress.
    gz = tmp_path / "cut.log.gz"
    gz.write_bytes(gzip.compress(data)[:-200])
    run = read_source(gz, aliases=aliases)
    assert 0 < run.series[REWARD].steps.size <= 200


def test_overlong_lines_are_skipped_not_loaded(tmp_path, aliases, verl):
    path = rl.write_verl_console(tmp_path / "x.log", verl[:20])
    with open(path, "a") as f:
        f.write("x" * (3 << 20) + "\n")
        f.writelines(rl.verl_console_lines(verl[20:30]))
    run = read_source(path, aliases=aliases)
    assert run.series[REWARD].steps[-1] == 29
    assert any("overlong" in w for w in run.warnings)


def test_ambiguous_content_asks_for_a_format(tmp_path, aliases, verl):
    path = tmp_path / "mixed.log"
    path.write_text("step,critic/score/mean\n1,0.5\n" + "".join(rl.verl_console_lines(verl[1:5])))
    with pytest.raises(RunReadError, match="ambiguous format.*pass --format"):
        detect_file(path)
    assert read_source(path, format="verl-console", aliases=aliases).series[REWARD].steps.size == 4
    with pytest.raises(RunReadError, match="unknown format 'parquet'"):
        read_source(path, format="parquet", aliases=aliases)


def test_missing_path(tmp_path, aliases):
    with pytest.raises(RunReadError, match="no such file or folder"):
        read_source(tmp_path / "nope", aliases=aliases)


def test_the_library_reads_and_derives_without_being_handed_a_table(tmp_path, monkeypatch, verl):
    """`read_source(path)` and `derive_signals(run)` use
    the configured knowledge folder's metric names.
    """
    from rlmap_bot.runs.incremental import RunReader
    from rlmap_bot.runs.signals import derive_signals

    monkeypatch.setenv("RLMAP_KNOWLEDGE", str(KNOWLEDGE))
    path = rl.write_format("verl-jsonl", tmp_path, verl)
    run = read_source(path)
    assert REWARD in run.series and derive_signals(run).signals
    assert RunReader(path).read_new().records > 0
