"""`forecast` and `compare` from the command line: the JSON a script reads, the chart, the batch
decision, and bad input said in one line."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from rlmap_bot.cli.main import cli
from support import KNOWLEDGE
from support.scalingcurves import Truth, run, write_log


def invoke(args, built_db):
    return CliRunner().invoke(cli, ["--knowledge", str(KNOWLEDGE), "--db", str(built_db), *args])


def test_forecast_json_gives_the_level_at_a_step_and_the_ceiling(built_db, tmp_path):
    x, y = run(Truth(0.75, 1.3, 120), 250, noise=0.015)
    log = write_log(tmp_path / "run.jsonl", x, y)
    chart = tmp_path / "forecast.png"
    out = invoke(["forecast", str(log), "--to", "800", "--json", "--chart", str(chart)], built_db)
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["metric"] == "reward" and data["quantity"] == "training reward"
    assert set(data["at"]) >= {"step", "value", "low", "high"} and data["at"]["step"] == 800
    assert data["at"]["low"] <= data["at"]["value"] <= data["at"]["high"]
    assert set(data["asymptote"]) >= {"value", "low", "high"}
    assert data["asymptote"]["low"] < 0.75 < data["asymptote"]["high"] + 0.05
    assert data["step_95"] > 250 and data["abstain"] is None
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_forecast_text_says_the_ceiling_and_when_95_percent_is_reached(built_db, tmp_path):
    x, y = run(Truth(0.75, 1.3, 120), 250, noise=0.015)
    out = invoke(["forecast", str(write_log(tmp_path / "run.jsonl", x, y))], built_db)
    assert out.exit_code == 0, out.output
    assert "Forecast: ceiling near" in out.output
    assert "95% of the gain still to come is reached by step" in out.output


def test_forecast_of_a_short_run_abstains_with_its_reason(built_db, tmp_path):
    x, y = run(Truth(0.75, 1.3, 120), 12)
    out = invoke(["forecast", str(write_log(tmp_path / "run.jsonl", x, y)), "--json"], built_db)
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["abstain"].startswith("only 12 points") and data["asymptote"] is None


def test_an_unknown_metric_is_one_line_with_the_nearest_name(built_db, tmp_path):
    x, y = run(Truth(0.75, 1.3, 120), 60)
    log = write_log(tmp_path / "run.jsonl", x, y)
    out = invoke(["forecast", str(log), "--metric", "rewrd"], built_db)
    assert out.exit_code == 2
    assert "no metric 'rewrd'" in out.output and "did you mean 'reward'" in out.output
    assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1


def test_compare_two_runs_with_their_batch_sizes(built_db, tmp_path):
    xs, ys = run(Truth(0.7, 1.5, 100), 400, seed=1)
    xl, yl = run(Truth(0.7, 1.5, 50), 400, seed=2)
    small = write_log(tmp_path / "b256.jsonl", xs, ys, step_seconds=10.0)
    large = write_log(tmp_path / "b512.jsonl", xl, yl, step_seconds=25.0)
    out = invoke(["compare", str(small), str(large), "--batch", "256,512", "--json"], built_db)
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["kind"] == "efficiency" and data["faster"] == "b512.jsonl"
    batch = data["batch"]
    assert 1.5 < batch["speedup"] < 2.5
    assert batch["wall_clock"] == "b256.jsonl"
    said = invoke(["compare", str(small), str(large), "--batch", "256,512"], built_db).output
    text = " ".join(said.split())
    assert "batch_doubling_speedup" in text and "what separates them is efficiency" in text


def test_compare_refuses_a_bad_batch_list_in_one_line(built_db, tmp_path):
    x, y = run(Truth(0.7, 1.5, 60), 80)
    a = write_log(tmp_path / "a.jsonl", x, y)
    b = write_log(tmp_path / "b.jsonl", x, y)
    out = invoke(["compare", str(a), str(b), "--batch", "256"], built_db)
    assert out.exit_code == 2 and "--batch takes one positive size per run" in out.output


def test_one_export_holding_two_runs_is_compared_run_by_run(built_db, tmp_path):
    """A CSV with a run column (as several runs are exported into one file): each run is fitted
    apart, and the one with the higher ceiling is named by its run name."""
    high = run(Truth(0.85, 1.5, 40), 300, seed=3)
    low = run(Truth(0.55, 1.5, 40), 300, seed=4)
    path = tmp_path / "runs.csv"
    with path.open("w", encoding="utf-8") as f:
        f.write("run,step,reward\n")
        for name, (x, y) in (("grpo-a", high), ("grpo-b", low)):
            f.writelines(f"{name},{int(s)},{v:.5f}\n" for s, v in zip(x, y, strict=True))
    out = invoke(["compare", str(path), "--json"], built_db)
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["labels"] == ["grpo-a", "grpo-b"]
    assert data["higher_ceiling"] == "grpo-a" and data["kind"] in ("ceiling", "both")


def test_compare_of_one_source_with_one_run_asks_for_two(built_db, tmp_path):
    x, y = run(Truth(0.7, 1.5, 60), 80)
    out = invoke(["compare", str(write_log(tmp_path / "a.jsonl", x, y))], built_db)
    assert out.exit_code == 2 and "give two runs or more" in out.output


def test_forecast_of_an_export_holding_two_runs_says_which_and_how_to_see_the_others(
    built_db, tmp_path
):
    path = tmp_path / "runs.csv"
    with path.open("w", encoding="utf-8") as f:
        f.write("run,step,reward\n")
        for name, seed in (("grpo-a", 3), ("grpo-b", 4)):
            x, y = run(Truth(0.7, 1.5, 40), 200, seed=seed)
            f.writelines(f"{name},{int(s)},{v:.5f}\n" for s, v in zip(x, y, strict=True))
    out = invoke(["forecast", str(path), "--json"], built_db)
    assert out.exit_code == 0, out.output
    notes = " ".join(json.loads(out.output)["notes"])
    assert "holds 2 runs" in notes and "--run-id" in notes and "compare" in notes


def test_compare_says_first_a_fault_found_in_one_run_and_not_the_other(built_db, tmp_path):
    # Expected before running: B's loss goes NaN from step 201 for 20 steps, A's never: the
    # first reading that differs is that fault, with B from step 201 and A none; B's entropy
    # stays as A's.
    from support import runlogs as rl

    a = rl.write_verl_console(tmp_path / "A.log", rl.named(rl.phased([("healthy", 300)]), "verl"))
    b = rl.write_verl_console(
        tmp_path / "B.log",
        rl.named(rl.phased([("healthy", 200), ("nan", 20), ("healthy", 80)]), "verl"),
    )
    out = CliRunner().invoke(
        cli,
        ["--knowledge", str(KNOWLEDGE), "--db", str(built_db), "compare", str(a), str(b), "--json"],
    )
    assert out.exit_code == 0, out.output
    first = json.loads(out.output)["differences"][0]
    assert "NaN" in first["reading"] or "nan" in first["reading"].lower(), first
    assert first["values"]["A.log"] == "none"
    assert first["values"]["B.log"].startswith("from step 20"), first


def test_a_run_at_its_forecast_ceiling_is_said_in_words_and_its_json_keeps_the_figures(
    built_db, tmp_path
):
    # Expected before running: the bend is at step 10 of 1,000, so the run is at its ceiling
    # (about 0.75) and 1,000 more steps buy under 0.001: said so, never "100% ... +0.000" (a
    # figure written to the ceiling interval's decimals, "+0.0003" when that interval is narrow
    # enough for four, is fine; "+0.000" alone reads as broken).
    x, y = run(Truth(0.75, 1.5, 10), 1000, noise=0.01, seed=3)
    log = write_log(tmp_path / "run.jsonl", x, y)
    out = invoke(["forecast", str(log)], built_db)
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())
    assert "100% of it reached" not in said and not re.search(r"\+0\.0+(?!\d)", said), said
    assert "at its forecast ceiling, near 0.75" in said, said
    assert re.search(
        r"more steps buy almost nothing \((less than 0\.001|about \+0\.000[1-4]) per 1,000 steps\)",
        said,
    ), said
    data = json.loads(invoke(["forecast", str(log), "--json"], built_db).output)
    assert data["reached"] > 0.995 and 0 <= data["per_1000_steps"] < 0.0005


def test_a_signal_that_differs_is_named_by_its_title_in_its_unit_and_its_id_kept_in_json(
    built_db, tmp_path
):
    # Expected before running: B's trainer waits for rollouts over its second half, A's never
    # does: the reading that differs is the knowledge store's "Trainer wait for rollouts", as
    # percentages, A low and B high, over the same recent steps said once.
    from support import runlogs as rl

    a = rl.write_verl_console(tmp_path / "A.log", rl.named(rl.phased([("healthy", 300)]), "verl"))
    b = rl.write_verl_console(
        tmp_path / "B.log",
        rl.named(rl.phased([("healthy", 150), ("rollout_bound", 150)]), "verl"),
    )
    out = invoke(["compare", str(a), str(b)], built_db)
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())
    assert "rollout_wait_fraction" not in said, said
    import re

    line = re.search(
        r"Trainer wait for rollouts: A\.log (\d+)%, B\.log (\d+)% \(steps \d+-300\)", said
    )
    assert line is not None, said
    assert int(line.group(1)) < 30 < int(line.group(2))
    data = json.loads(invoke(["compare", str(a), str(b), "--json"], built_db).output)
    [wait] = [d for d in data["differences"] if d["signal"] == "rollout_wait_fraction"]
    assert wait["reading"] == "Trainer wait for rollouts"
