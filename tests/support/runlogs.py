"""Synthetic training logs in every format the run reader knows, with planted patterns.

A pattern is a set of curves over steps in framework-neutral names (reward,
entropy, ...); :func:`named` renames them as a framework logs them; the
``write_*`` functions put records on disk in each container, as the framework
would (verl prints ``np.float64(0.5)`` under numpy 2, MLflow stores NaN as 0
with ``is_nan``, TensorBoard uses its own protobuf records).  Every curve is
seeded, so a derived signal's expected value is known.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import sqlite3
import uuid as uuidlib
from pathlib import Path

import numpy as np

Record = tuple[int, dict[str, float]]

PATTERNS = (
    "healthy",
    "entropy_collapse",
    "length_explosion",
    "reward_hacking",
    "rollout_bound",
    "grad_spikes",
    "nan_step",
    "saturated",
)

#: Where the planted pathologies sit, for tests to check against.
SPIKE_STEPS = (83, 131, 167)
NAN_STEP = 120


def curves(
    pattern: str = "healthy", steps: int = 200, seed: int = 0, eval_every: int = 10
) -> list[Record]:
    """Records 1..steps (plus a validation-only record at step 0) in neutral names."""
    if pattern not in PATTERNS:
        raise ValueError(f"unknown pattern {pattern}")
    rng = np.random.default_rng(seed)
    s = np.arange(1, steps + 1, dtype=float)
    t = s / steps
    noise = lambda scale: rng.normal(0.0, scale, steps)  # noqa: E731

    reward = 0.2 + 0.5 * t + noise(0.03)
    entropy = 0.6 - 0.2 * t + noise(0.01)
    length = 400 + 80 * t + noise(8)
    trunc = np.clip(0.01 + noise(0.003), 0, 1)
    gen_share = 0.15
    grad = 0.5 * np.exp(noise(0.15))
    clip = np.clip(0.01 + noise(0.002), 0, 1)
    zero_std = np.clip(0.1 + noise(0.02), 0, 1)
    epoch_passes = 1.0
    eval_steps = np.arange(0, steps + 1, eval_every)
    eval_t = eval_steps / steps
    heldout = 0.25 + 0.3 * eval_t + rng.normal(0, 0.01, eval_steps.size)
    heldout[0] = 0.05  # the first evaluation, before format learning

    if pattern == "entropy_collapse":
        entropy = 0.02 + 0.5 * np.exp(-t * 12) + np.abs(noise(0.002))
    elif pattern == "length_explosion":
        late = np.clip((t - 0.7) / 0.3, 0, 1)
        length = 400 + noise(8) + 1200 * late**1.5
        trunc = np.clip(0.01 + 0.25 * late**2 + noise(0.003), 0, 1)
    elif pattern == "reward_hacking":
        reward = 0.3 + 0.6 * t + noise(0.02)
        heldout = np.where(eval_t <= 0.5, 0.3 + 0.5 * eval_t, 0.55 - 0.4 * (eval_t - 0.5))
        heldout = heldout + rng.normal(0, 0.005, eval_steps.size)
        heldout[0] = 0.05
    elif pattern == "rollout_bound":
        gen_share = 0.7
    elif pattern == "grad_spikes":
        for k in SPIKE_STEPS:
            grad[k - 1] = 0.5 * 10.0
    elif pattern == "saturated":
        reward = np.clip(0.97 + noise(0.01), 0, 1)
        zero_std = np.clip(0.85 + noise(0.02), 0, 1)
        epoch_passes = 8.0
        heldout = 0.6 + rng.normal(0, 0.005, eval_steps.size)

    step_time = 100 + noise(3)
    gen_time = gen_share * step_time
    pg_loss = noise(0.02)
    kl = 0.002 + 0.004 * t + np.abs(noise(0.0003))
    records: list[Record] = [(0, {"heldout": float(heldout[0])})]
    evals = dict(zip(eval_steps.tolist(), heldout.tolist(), strict=True))
    for i in range(steps):
        step = i + 1
        row = {
            "reward": float(reward[i]),
            "entropy": float(entropy[i]),
            "length": float(length[i]),
            "truncation": float(trunc[i]),
            "gen_time": float(gen_time[i]),
            "step_time": float(step_time[i]),
            "grad_norm": float(grad[i]),
            "clip": float(clip[i]),
            "zero_std": float(zero_std[i]),
            "pg_loss": float(pg_loss[i]),
            "kl": float(kl[i]),
            "kl_coef": 0.001,
            "epoch_frac": epoch_passes * step / steps,
            "throughput": float(1500 + rng.normal(0, 20)),
            "lr": 1e-6,
        }
        if pattern == "nan_step" and step == NAN_STEP:
            row["pg_loss"] = math.nan
            row["grad_norm"] = math.inf
        if step in evals and step > 0:
            row["heldout"] = evals[step]
        records.append((step, row))
    return records


def restarted(
    records: list[Record], crash_after: int = 130, resume_from: int = 101
) -> list[Record]:
    """The records as a run that crashed after ``crash_after`` and resumed at ``resume_from``.

    The first attempt's values for the repeated steps are offset by +1000 in the
    reward, so a reader that keeps the wrong copy is caught.
    """
    first = [
        (s, {**r, "reward": r["reward"] + 1000.0} if s >= resume_from and "reward" in r else r)
        for s, r in records
        if s <= crash_after
    ]
    second = [(s, r) for s, r in records if s >= resume_from]
    return first + second


#: Neutral name -> the name each framework logs.  ``epoch`` is converted per framework.
NAMES = {
    "verl": {
        "reward": "critic/score/mean",
        "heldout": "val-core/openai/gsm8k/reward/mean@1",
        "entropy": "actor/entropy",
        "length": "response_length/mean",
        "truncation": "response_length/clip_ratio",
        "gen_time": "timing_s/gen",
        "step_time": "timing_s/step",
        "grad_norm": "actor/grad_norm",
        "clip": "actor/pg_clipfrac",
        "pg_loss": "actor/pg_loss",
        "kl": "actor/kl_loss",
        "kl_coef": "actor/kl_coef",
        "throughput": "perf/throughput",
        "lr": "actor/lr",
    },
    "verl2024": {
        "reward": "critic/score/mean",
        "heldout": "val/test_score/openai/gsm8k",
        "entropy": "actor/entropy_loss",
        "length": "response_length/mean",
        "truncation": "response_length/clip_ratio",
        "gen_time": "timing/gen",
        "step_time": "timing/step",
        "grad_norm": "actor/grad_norm",
        "clip": "actor/pg_clipfrac",
        "pg_loss": "actor/pg_loss",
        "kl": "critic/kl",
        "throughput": "perf/throughput",
    },
    "trl": {
        "reward": "reward",
        "heldout": "eval_reward",
        "entropy": "entropy",
        "length": "completions/mean_length",
        "truncation": "completions/clipped_ratio",
        "step_time": "step_time",
        "grad_norm": "grad_norm",
        "clip": "clip_ratio/region_mean",
        "zero_std": "frac_reward_zero_std",
        "pg_loss": "loss",
        "lr": "learning_rate",
    },
    "prime-rl": {
        "reward": "reward/mean",
        "entropy": "entropy/mean",
        "length": "seq_len/mean",
        "gen_time": "time/wait_for_batch",
        "step_time": "time/step",
        "grad_norm": "optim/grad_norm",
        "kl": "mismatch_kl",
        "zero_std": "batch/solve_none",
    },
}
#: Metrics nobody maps, to make lines realistic in width (the benchmark adds more).
FILLER = (
    "critic/advantages/mean",
    "critic/advantages/max",
    "critic/returns/mean",
    "actor/ppo_kl",
    "perf/max_memory_allocated_gb",
    "timing_s/update_actor",
    "timing_s/old_log_prob",
    "prompt_length/mean",
)


def named(records: list[Record], framework: str = "verl", filler: int = 4) -> list[Record]:
    """Rename neutral curves as ``framework`` logs them, with ``filler`` unmapped metrics added."""
    names = NAMES[framework]
    out: list[Record] = []
    for step, row in records:
        new: dict[str, float] = {}
        for key, value in row.items():
            if key in names:
                new[names[key]] = value
        if "epoch_frac" in row:
            passes = row["epoch_frac"]
            if framework.startswith("verl"):
                new["training/epoch"] = float(math.floor(passes - 1e-9)) if passes > 0 else 0.0
            elif framework == "trl":
                new["epoch"] = round(passes, 4)
        if framework == "prime-rl" and "zero_std" in row:
            new["batch/solve_none"] = row["zero_std"] * 0.4
            new["batch/solve_all"] = row["zero_std"] * 0.6
        if step > 0:
            for i, extra in enumerate(FILLER[:filler]):
                new[extra] = float(i) + 0.5
        out.append((step, new))
    return out


# -- writers --------------------------------------------------------------------------------------


def _open_text(path: Path, gz: bool):
    path.parent.mkdir(parents=True, exist_ok=True)
    return (
        gzip.open(path, "wt", encoding="utf-8", newline="")
        if gz
        else open(path, "w", encoding="utf-8", newline="")
    )


def _console_value(value: float, numpy_repr: bool) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"np.float64({value!r})" if numpy_repr else repr(value)


def verl_console_lines(
    records: list[Record], ansi: bool = True, ray: bool = True, numpy_repr: bool = True
) -> list[str]:
    lines = []
    for step, row in records:
        body = " - ".join(
            [f"step:{step}"] + [f"{k}:{_console_value(v, numpy_repr)}" for k, v in row.items()]
        )
        if ansi:
            body = f"\x1b[36m{body}\x1b[0m"
        if ray:
            body = f"(TaskRunner pid=4242) {body}"
        lines.append(body + "\n")
    return lines


def write_verl_console(path: Path, records: list[Record], gz: bool = False, **style) -> Path:
    """A verl console log: a preamble of other output, then one ``step:`` line a step."""
    with _open_text(path, gz) as f:
        f.write("(TaskRunner pid=4242) Using LocalLogger is deprecated.\n")
        f.write(
            "(TaskRunner pid=4242) {'actor_rollout_ref': {'rollout': {'n': 8}}, 'trainer': "
            "{'total_epochs': 1}}\n"
        )
        f.write("Training Progress:   0%|          | 0/200 [00:00<?, ?it/s]\n")
        f.writelines(verl_console_lines(records, **style))
    return path


def write_verl_jsonl(path: Path, records: list[Record], gz: bool = False) -> Path:
    with _open_text(path, gz) as f:
        for step, row in records:
            f.write(json.dumps({"step": step, "data": row}) + "\n")
    return path


def write_jsonl(
    path: Path, records: list[Record], step_key: str = "step", gz: bool = False
) -> Path:
    """Plain JSONL (``step_key='_step'`` makes it a W&B history export)."""
    with _open_text(path, gz) as f:
        for step, row in records:
            extra = (
                {"_runtime": step * 100.0, "_timestamp": 1.7e9 + step}
                if step_key == "_step"
                else {}
            )
            f.write(json.dumps({step_key: step, **row, **extra}) + "\n")
    return path


def write_json_array(path: Path, records: list[Record], step_key: str = "_step") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([{step_key: s, **r} for s, r in records]), encoding="utf-8")
    return path


def write_csv(path: Path, records: list[Record], step_key: str = "step", gz: bool = False) -> Path:
    """A CSV with one column per metric (``step_key='_step'``
    as W&B exports it); missing cells empty.
    """
    columns: list[str] = []
    for _, row in records:
        for key in row:
            if key not in columns:
                columns.append(key)
    with _open_text(path, gz) as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow([step_key, *columns])
        for step, row in records:
            w.writerow([step, *[repr(row[c]) if c in row else "" for c in columns]])
    return path


def write_trl_output(
    folder: Path, records: list[Record], checkpoints: tuple[int, ...] = (100,)
) -> Path:
    """A TRL output folder: checkpoint-N/trainer_state.json
    for each N and the final one, as Trainer writes.
    """

    def history(upto: int) -> list[dict]:
        out = []
        for step, row in records:
            if step > upto or step == 0:
                continue
            train = {k: v for k, v in row.items() if k != "eval_reward"}
            out.append({**train, "step": step})
            if "eval_reward" in row:  # eval entries are separate dicts at the same step
                out.append(
                    {
                        "eval_reward": row["eval_reward"],
                        "eval_runtime": 12.5,
                        "epoch": row.get("epoch", 0.0),
                        "step": step,
                    }
                )
        return out

    last = max(s for s, _ in records)
    for n in (*checkpoints, last):
        ckpt = folder / f"checkpoint-{n}"
        ckpt.mkdir(parents=True, exist_ok=True)
        state = {"global_step": n, "epoch": 1.0, "log_history": history(n), "max_steps": last}
        (ckpt / "trainer_state.json").write_text(json.dumps(state, indent=2), encoding="utf-8")
    return folder


def write_tensorboard(logdir: Path, records: list[Record], tensor_encoding: bool = False) -> Path:
    """Event files written with tensorboard's own writer and protobufs (no TensorFlow)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    from tensorboard.util import tensor_util

    logdir.mkdir(parents=True, exist_ok=True)
    writer = EventFileWriter(str(logdir))
    for step, row in records:
        values = []
        for key, value in row.items():
            if tensor_encoding:
                meta = summary_pb2.SummaryMetadata(
                    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
                )
                values.append(
                    summary_pb2.Summary.Value(
                        tag=key,
                        metadata=meta,
                        tensor=tensor_util.make_tensor_proto(np.float32(value)),
                    )
                )
            else:
                values.append(summary_pb2.Summary.Value(tag=key, simple_value=value))
        writer.add_event(
            event_pb2.Event(
                step=step, wall_time=1.7e9 + step, summary=summary_pb2.Summary(value=values)
            )
        )
    writer.close()
    return logdir


_MLFLOW_SCHEMA = """
create table experiments (experiment_id integer primary key, name varchar(256) unique not null,
    artifact_location varchar(256), lifecycle_stage varchar(32));
create table runs (run_uuid varchar(32) primary key, name varchar(250), source_type varchar(20),
    status varchar(9), start_time bigint, end_time bigint, lifecycle_stage varchar(20),
    artifact_uri varchar(200), experiment_id integer references experiments(experiment_id));
create table metrics (key varchar(250) not null, value float not null, timestamp bigint not null,
    run_uuid varchar(32) not null references runs(run_uuid), step bigint default 0 not null,
    is_nan boolean default 0 not null, primary key (key, timestamp, step, run_uuid, value, is_nan));
create table latest_metrics (key varchar(250), value float, timestamp bigint, step bigint,
    is_nan boolean, run_uuid varchar(32), primary key (key, run_uuid));
"""


def _mlflow_value(value: float) -> tuple[float, int]:
    if math.isnan(value):
        return 0.0, 1
    if math.isinf(value):
        return math.copysign(1.7976931348623157e308, value), 0
    return value, 0


def write_mlflow_db(
    path: Path, runs: dict[str, list[Record]], experiment: str = "grpo"
) -> dict[str, str]:
    """An ``mlflow.db`` SQLite store in MLflow's table layout; returns run name -> uuid.

    verl's MLflow adapter writes '@' as '_at_', so names are rewritten the same way.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(_MLFLOW_SCHEMA)
    conn.execute("insert into experiments values (1, ?, '', 'active')", (experiment,))
    ids = {}
    for i, (name, records) in enumerate(runs.items()):
        uuid = uuidlib.UUID(int=i + 1).hex
        ids[name] = uuid
        conn.execute(
            "insert into runs values (?, ?, 'LOCAL', 'FINISHED', ?, ?, 'active', '', 1)",
            (uuid, name, 1000 + i, 2000 + i),
        )
        rows = []
        for n, (step, row) in enumerate(records):
            for key, value in row.items():
                v, is_nan = _mlflow_value(value)
                rows.append(
                    (key.replace("@", "_at_"), v, 1_700_000_000_000 + n, uuid, step, is_nan)
                )
        conn.executemany("insert or replace into metrics values (?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return ids


def write_mlflow_files(root: Path, runs: dict[str, list[Record]], experiment: str = "grpo") -> Path:
    """A legacy ``mlruns/`` file store: metrics/<key> files with ``timestamp value step`` lines."""
    exp = root / "1"
    exp.mkdir(parents=True, exist_ok=True)
    (exp / "meta.yaml").write_text(
        f"experiment_id: '1'\nname: {experiment}\nlifecycle_stage: active\n"
    )
    for i, (name, records) in enumerate(runs.items()):
        uuid = uuidlib.UUID(int=i + 1).hex
        run = exp / uuid
        (run / "metrics").mkdir(parents=True, exist_ok=True)
        (run / "meta.yaml").write_text(f"run_id: {uuid}\nrun_name: {name}\nexperiment_id: '1'\n")
        files: dict[str, io.StringIO] = {}
        for n, (step, row) in enumerate(records):
            for key, value in row.items():
                files.setdefault(key.replace("@", "_at_"), io.StringIO()).write(
                    f"{1_700_000_000_000 + n} {value!r} {step}\n"
                )
        for key, buf in files.items():
            target = run / "metrics" / key
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(buf.getvalue())
    return root


def write_format(kind: str, tmp_path: Path, records: list[Record]) -> Path:
    """Write ``records`` in one format under a name that does not give the format away."""
    if kind == "verl-console":
        return write_verl_console(tmp_path / "out.txt", records)
    if kind == "verl-jsonl":
        return write_verl_jsonl(tmp_path / "out.txt", records)
    if kind == "wandb-csv":
        return write_csv(tmp_path / "out.txt", records, step_key="_step")
    if kind == "wandb-json":
        return write_jsonl(tmp_path / "out.txt", records, step_key="_step")
    if kind == "csv":
        return write_csv(tmp_path / "out.txt", records, step_key="global_step")
    if kind == "jsonl":
        return write_jsonl(tmp_path / "out.txt", records, step_key="iteration")
    if kind == "tensorboard":
        return write_tensorboard(tmp_path / "tb", records)
    if kind == "mlflow-db":
        write_mlflow_db(tmp_path / "mlflow.db", {"run-a": records})
        return tmp_path / "mlflow.db"
    if kind == "mlflow-files":
        return write_mlflow_files(tmp_path / "mlruns", {"run-a": records})
    raise AssertionError(kind)


TEXT_AND_FILE_FORMATS = (
    "verl-console",
    "verl-jsonl",
    "wandb-csv",
    "wandb-json",
    "csv",
    "jsonl",
    "tensorboard",
    "mlflow-db",
    "mlflow-files",
)


#: Phases for a run that changes while it is watched (see :func:`phased`).
PHASES = (
    "healthy",
    "reward_hacking",
    "recovery",
    "nan",
    "rollout_bound",
    "hacking_long",
    "entropy_collapse",
    "generation_bound",
    "saturation",
    "length_explosion",
    "divergence",
    "reward_collapse",
    "saturated_collapse",
    "memorising",
    "not_learning",
)


def _scaled(value: float, factor: float) -> float:
    """Noise scaled down with a level that fell (an entropy's
    noise shrinks with it); untouched at full level.
    """
    return value if factor >= 1.0 else value * factor


def phased(
    phases: list[tuple[str, int]], seed: int = 0, eval_every: int = 10, noise: float = 1.0
) -> list[Record]:
    """One run whose behaviour changes phase by phase, in neutral names, steps 1.. (plus step 0).

    ``healthy``: reward and held-out score rise together.  ``reward_hacking``: the
    training reward keeps rising while the held-out score falls (Gao et al.'s
    signature: reward quality binds).  ``recovery``: both rise again.  ``nan``: the
    policy loss is NaN and the gradient norm inf on every step.  ``rollout_bound``:
    generation takes most of the step.  Levels carry over from phase to phase, so
    appending a phase's records to the log continues the same run.

    The phases a run goes bad with (tests/test_watch_turns_bad.py): ``hacking_long``
    (reward hacking with answers growing longer), ``entropy_collapse`` (entropy falls
    to a few percent of its level while reward and held-out score stall),
    ``generation_bound`` (generation's share of the step climbs to 0.8),
    ``saturation`` (the pool is solved: reward near 1, most groups zero-variance, many
    passes), ``length_explosion`` (length x4 with truncation, no gain), ``divergence``
    (the loss jumps to a new level and stays), ``reward_collapse`` (reward and held-out
    fall), ``saturated_collapse`` (saturation and an entropy collapse at once),
    ``memorising`` (many passes over the pool, reward up, held-out flat) and
    ``not_learning`` (gradient norm exactly 0, loss exactly 0, reward flat).  ``noise``
    scales the step-to-step noise of every curve (1 = the tests' usual run).
    """
    rng = np.random.default_rng(seed)
    reward, heldout, entropy = 0.2, 0.25, 0.6
    length, trunc, gen_share, zero_std, passes, loss_level = 420.0, 0.01, 0.15, 0.1, 0.0, 0.0
    records: list[Record] = [(0, {"heldout": 0.05})]
    step = 0
    # The slopes below suit a run of about 1,000 steps; a longer run moves as far, more slowly.
    pace = 1000 / max(1000, sum(count for _, count in phases))
    for kind, count in phases:
        if kind not in PHASES:
            raise ValueError(f"unknown phase {kind}")
        for i in range(count):
            step += 1
            ramp = min(
                1.0, (i + 1) / max(1, count // 3)
            )  # a bad stretch sets in over its first third
            if kind in {"healthy", "nan", "rollout_bound"}:
                reward, heldout = reward + 0.0008 * pace, heldout + 0.001 * pace
            elif kind in {"reward_hacking", "hacking_long"}:
                reward, heldout = reward + 0.0012 * pace, heldout - 0.0012 * pace
            elif kind == "recovery":  # the held-out score climbs back faster than the reward
                reward, heldout = reward + 0.0003 * pace, heldout + 0.002 * pace
            elif kind in {"saturation", "saturated_collapse"}:
                reward = reward + (0.97 - reward) * 0.05
            elif kind == "reward_collapse":
                reward, heldout = reward - 0.0015 * pace, heldout - 0.0008 * pace
            elif kind == "memorising":
                reward = reward + 0.0012 * pace
            if kind == "hacking_long":
                length *= 1.0 + 0.004 * pace
            elif kind == "length_explosion":
                length, trunc = length * (1.0 + 0.006 * pace), min(0.3, trunc + 0.002)
            if kind in {"entropy_collapse", "saturated_collapse"}:
                entropy = max(0.02, entropy * 0.98)
            if kind in {"saturation", "saturated_collapse"}:
                zero_std = zero_std + (0.85 - zero_std) * 0.05
            if kind in {"saturation", "saturated_collapse", "memorising"}:
                passes += 0.05 * pace
            if kind == "divergence":
                loss_level = 0.8
            gen_step = (
                0.7
                if kind == "rollout_bound"
                else 0.15 + (0.8 - 0.15) * ramp
                if kind == "generation_bound"
                else gen_share
            )
            if kind == "generation_bound":
                gen_share = gen_step
            step_time = 100 + rng.normal(0, 3)
            row = {
                "reward": float(min(reward, 1.0) + rng.normal(0, 0.02 * noise)),
                "entropy": float(entropy + _scaled(rng.normal(0, 0.01 * noise), entropy / 0.6)),
                "length": float(length + rng.normal(0, 8 * noise)),
                "truncation": float(abs(trunc + rng.normal(0, 0.003))),
                "gen_time": float(gen_step * step_time),
                "step_time": float(step_time),
                "grad_norm": float(0.5 * math.exp(rng.normal(0, 0.15 * noise))),
                "clip": float(abs(0.01 + rng.normal(0, 0.002))),
                "zero_std": float(abs(zero_std + rng.normal(0, 0.02))),
                "pg_loss": float(loss_level + rng.normal(0, 0.02)),
                "kl": float(0.003 + abs(rng.normal(0, 0.0003))),
                "kl_coef": 0.001,
                "epoch_frac": step * pace / 2000 + passes,
                "throughput": float(1500 + rng.normal(0, 20)),
                "lr": 1e-6,
            }
            if kind == "nan":
                row["pg_loss"], row["grad_norm"] = math.nan, math.inf
            if kind == "not_learning":
                row["pg_loss"], row["grad_norm"] = 0.0, 0.0
            if step % eval_every == 0:
                row["heldout"] = float(heldout + rng.normal(0, 0.005 * noise))
            records.append((step, row))
    return records
