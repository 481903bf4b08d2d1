"""`diagnose --run PATH` from the command line and the
shell: every format, the JSON, the chart, bad input.
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from rlmap_bot.cli.main import cli
from support import KNOWLEDGE, runlogs
from support.cli import invoke as run_cli
from support.cli import shell


def invoke(args, built_db, input: str | None = None):
    return CliRunner().invoke(
        cli, ["--knowledge", str(KNOWLEDGE), "--db", str(built_db), *args], input=input
    )


@pytest.mark.parametrize("kind", runlogs.TEXT_AND_FILE_FORMATS)
def test_every_format_diagnoses_with_provenance(kind, built_db, tmp_path):
    path = runlogs.write_format(
        kind, tmp_path, runlogs.named(runlogs.curves("reward_hacking"), "verl")
    )
    out = invoke(["diagnose", "--run", str(path), "--json"], built_db)
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert {
        "binding_stage",
        "confidence",
        "ranking",
        "evidence",
        "next_checks",
        "papers",
        "signals",
        "run",
        "signal_sources",
        "missing",
    } <= set(data)
    assert data["run"]["format"] == kind and data["run"]["steps"] > 100
    assert {"format", "steps", "first_step", "last_step", "metrics"} <= set(data["run"])
    assert (
        data["signals"]["proxy_reward_trend"] == "rising"
        and data["signals"]["heldout_score_trend"] == "falling"
    )
    source = data["signal_sources"]["heldout_score_trend"]
    assert {"metric", "window", "method", "detail"} <= set(source) and source["metric"].startswith(
        "val"
    )
    assert "reward_audit_error_rate" in data["missing"], "what logs cannot give is listed"
    assert data["binding_stage"] == "reward"


def test_trl_checkpoint_folder(built_db, tmp_path):
    folder = runlogs.write_trl_output(
        tmp_path / "out", runlogs.named(runlogs.curves("entropy_collapse"), "trl")
    )
    data = json.loads(invoke(["diagnose", "--run", str(folder), "--json"], built_db).output)
    assert data["run"]["format"] == "trl-state" and data["signals"]["entropy_trend"] == "collapsed"


def test_chart_window_and_map(built_db, tmp_path):
    records = runlogs.named(runlogs.curves("entropy_collapse"), "verl")
    for _, row in records:  # a name no alias table knows
        if "actor/entropy" in row:
            row["my/policy_entropy"] = row.pop("actor/entropy")
    path = runlogs.write_verl_jsonl(tmp_path / "run.jsonl", records)
    (tmp_path / "out").mkdir()
    chart = tmp_path / "out" / "run.png"
    out = invoke(
        [
            "diagnose",
            "--run",
            str(path),
            "--map",
            "entropy_trend=my/policy_entropy",
            "--window",
            "30%",
            "--chart",
            str(chart),
            "--json",
        ],
        built_db,
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["signals"]["entropy_trend"] in ("collapsing", "collapsed")
    assert data["signal_sources"]["entropy_trend"]["metric"] == "my/policy_entropy"
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and data["chart"] == str(chart)


@pytest.mark.parametrize(
    "args, expect",
    [
        (["--window", "lots"], "--window takes"),
        (["--map", "entropy_trend"], "--map takes SIGNAL=METRIC"),
        (["--format", "excel"], "Invalid value for '--format'"),
    ],
)
def test_bad_options_are_usage_errors(args, expect, built_db, tmp_path):
    path = runlogs.write_verl_console(
        tmp_path / "run.log", runlogs.named(runlogs.curves("healthy"), "verl")
    )
    out = invoke(["diagnose", "--run", str(path), *args], built_db)
    assert out.exit_code == 2 and expect in out.output and "Traceback" not in out.output


def test_option_edges_are_one_line_exit_2(env, tmp_path):
    """Each edge of --window, --map, --chart, --run and --run-id
    is one line naming the option, exit 2, no output.
    """
    path = runlogs.write_verl_console(
        tmp_path / "run.log", runlogs.named(runlogs.curves("healthy", steps=60), "verl")
    )
    export = tmp_path / "export.csv"
    export.write_text(
        "train/global_step,sea-1 - train/reward,lake-2 - train/reward\n1,0.1,0.2\n2,0.2,0.3\n"
    )
    cases = [
        (["--run", str(path), "--window", "500"], "--window 500 covers the whole run"),
        (["--run", str(path), "--window", "61"], "--window 61 covers the whole run"),
        (["--run", str(path), "--map", "nosuch=m"], "'nosuch' is neither a signal"),
        (["--run", str(path), "--map", "a=b=c"], "--map takes SIGNAL=METRIC"),
        (
            ["--run", str(path), "--map", "entropy_trend=actor/entropyy"],
            "did you mean 'actor/entropy'",
        ),
        (
            ["--run", str(path), "--chart", str(tmp_path / "nonexistent" / "dir" / "x.png")],
            "does not exist",
        ),
        (["--run", "/dev/null"], "neither a file nor a folder"),
    ]
    for args, expect in cases:
        out = run_cli(["diagnose", *args], env)
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2 and len(lines) == 1 and expect in lines[0], (args, out.stderr)
        assert not out.stdout.strip() and "Traceback" not in out.stderr, args
        for word in ("run_id", "extra_metrics", "mapping=", "format=", "in this folder"):
            assert word not in lines[0], (args, lines[0])
    assert not (tmp_path / "nonexistent").exists(), (
        "a chart folder that is not there is not created"
    )
    # A CSV export of two runs is read, not refused: its
    # first run, saying so and how to pick the other.
    both = run_cli(["diagnose", "--run", str(export)], env)
    said = " ".join(both.stdout.split())
    assert both.returncode == 0 and "holds 2 runs" in said and "--run-id" in said, both.stderr
    out = run_cli(["diagnose", "--run", str(path), "--window", "59"], env)
    assert out.returncode == 0 and "Verdict:" in out.stdout, out.stderr


def test_bad_logs_are_one_line_exit_2(env, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("meeting notes\nbuy GPUs\n")
    empty = tmp_path / "empty.log"
    empty.write_text("")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 100)
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("step,foo,bar\n1,2,3\n2,3,4\n")
    for path, expect in [
        (notes, "looked for"),
        (empty, "empty"),
        (junk, "binary"),
        (unknown, "--map"),
        (tmp_path / "nowhere.log", "no such"),
    ]:
        out = run_cli(["diagnose", "--run", str(path)], env)
        assert out.returncode == 2, (path, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and expect in lines[0].lower(), (path, out.stderr)
        assert "Traceback" not in out.stderr


def test_chart_paths_a_person_might_type(env, tmp_path):
    """A folder gets <run>.png inside; a wrong extension
    or an unwritable place is one line, exit 2.
    """
    path = runlogs.write_verl_console(
        tmp_path / "myrun.log", runlogs.named(runlogs.curves("grad_spikes"), "verl")
    )
    folder = tmp_path / "charts"
    folder.mkdir()
    out = run_cli(["diagnose", "--run", str(path), "--chart", str(folder)], env)
    assert out.returncode == 0, out.stderr
    assert (
        f"Chart: {folder / 'myrun.png'}" in out.stdout
        and (folder / "myrun.png").read_bytes()[:4] == b"\x89PNG"
    )
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        cases = [
            (tmp_path / "run.jpg", ".png"),
            (tmp_path / "noext", ".png"),
            (blocker / "c.png", "not a folder"),
        ]
        if (
            os.geteuid() != 0
        ):  # root writes anywhere; the permission case only means something for a user
            cases.append((locked / "c.png", "not writable"))
        for chart, expect in cases:
            out = run_cli(["diagnose", "--run", str(path), "--chart", str(chart)], env)
            lines = out.stderr.strip().splitlines()
            assert out.returncode == 2 and len(lines) == 1 and expect in lines[0], (
                chart,
                out.stderr,
            )
            assert not chart.exists() and not chart.with_suffix(".png").exists()
    finally:
        locked.chmod(0o700)


def test_piped_terminal_prints_provenance_and_verdict(env, tmp_path):
    path = runlogs.write_verl_console(
        tmp_path / "run.log", runlogs.named(runlogs.curves("rollout_bound"), "verl")
    )
    out = run_cli(["diagnose", "--run", str(path)], env)
    assert out.returncode == 0, out.stderr
    assert (
        "From the logs:" in out.stdout
        and "rollout_wait_fraction" in out.stdout
        and "Verdict:" in out.stdout
    )
    read = next(line for line in out.stdout.splitlines() if line.startswith("Read "))
    assert read.endswith(f": {path}"), "a one-file log is not also called a run of its name"


def test_the_verdict_and_the_readings_it_rests_on_come_first(built_db, tmp_path):
    # A newcomer read 45 lines of method before the verdict (2026-12-03): the conclusion and the few
    # numbers behind it lead, named as cards name them; the derivation follows.
    path = runlogs.write_verl_console(
        tmp_path / "run.log", runlogs.named(runlogs.curves("reward_hacking"), "verl")
    )
    out = invoke(["diagnose", "--run", str(path)], built_db).output
    head, _, rest = out.partition("From the logs:")
    # The three lines a Slack card opens with open the report: what binds, how sure, what to do.
    first, second, third = out.splitlines()[:3]
    assert first == "Verdict: Reward quality binds" and second.endswith("readings")
    assert third.startswith("Do this next: ")
    on = head.split("  On:", 1)[1]
    assert "Held-out score trend = falling:" in on and "Training reward trend = rising:" in on
    assert "highest" in on.split("Training reward trend")[0], (
        "a held-out score that fell says where it peaked"
    )
    assert (
        "Sen's slope" not in head.split("  On:", 1)[0] and "median of the recent window" not in head
    )
    assert "Held-out score trend (heldout_score_trend) = falling" in rest, (
        "ids stay beside titles, for --map"
    )
    assert (
        "Claimed eval improvement (eval_improvement) = " in rest
        and " points: " in rest.split("eval_improvement")[1]
    )


def test_the_shell_draws_the_chart_into_rlmap_home(core, tmp_path):
    path = runlogs.write_verl_console(
        tmp_path / "myrun.log", runlogs.named(runlogs.curves("grad_spikes"), "verl")
    )
    text = shell(core, f"diagnose --run {path}", "quit")
    assert "From the logs:" in text and "Chart:" in text
    chart = core.settings.data_dir / "charts" / "myrun.png"
    assert chart.read_bytes()[:4] == b"\x89PNG"


def test_a_custom_logs_column_read_by_its_name_is_said_with_how_to_map_another(built_db, tmp_path):
    """A newcomer's CSV: `eval_acc` is read as the held-out score by its words, and that is said."""
    path = tmp_path / "my.csv"
    rows = ["step,reward,eval_acc,loss,entropy"]
    rows += [
        f"{s},{0.2 + 0.004 * s:.4f},{0.30 + 0.002 * s:.4f},"
        f"{1 / (1 + s / 50):.4f},{0.6 - 0.0005 * s:.4f}"
        for s in range(1, 151)
    ]
    path.write_text("\n".join(rows) + "\n")
    out = invoke(["diagnose", "--run", str(path)], built_db, input="")
    said = " ".join(out.output.split())
    assert "read 'eval_acc' as heldout score by its name" in said, out.output
    assert "--map heldout_score_trend=METRIC" in said and "(heldout_score_trend) = rising" in said
    mapped = invoke(
        ["diagnose", "--run", str(path), "--map", "heldout_score_trend=eval_acc"],
        built_db,
        input="",
    )
    assert (
        "(heldout_score_trend) = rising" in mapped.output
        and "Logged but read for no signal" not in mapped.output
    )


def test_a_column_named_inside_a_used_ones_name_is_still_listed(built_db, tmp_path):
    """ "acc" was hidden because "eval_acc" was read: names are compared whole."""
    path = tmp_path / "two.csv"
    rows = ["step,reward,eval_acc,acc,entropy"]
    rows += [
        f"{s},{0.2 + 0.004 * s:.4f},{0.30 + 0.002 * s:.4f},{0.5:.4f},{0.6 - 0.0005 * s:.4f}"
        for s in range(1, 151)
    ]
    path.write_text("\n".join(rows) + "\n")
    out = invoke(
        ["diagnose", "--run", str(path), "--map", "heldout_score_trend=eval_acc"],
        built_db,
        input="",
    )
    assert "Logged but read for no signal: acc;" in out.output, out.output
