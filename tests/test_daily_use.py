"""Bad input meets one clear line or the right behaviour,
never a traceback (the "fit for daily use" cases).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rlmap_bot.cli.main import cli
from rlmap_bot.core import Core
from support import KNOWLEDGE
from support.cli import run_cli, shell
from support.terminal import RealTerminal


def invoke(args, env: dict | None = None, input=None):
    return CliRunner().invoke(cli, args, input=input, env=env)


# -- ask
#  ------------------------------------------------------------------------------------------------
def test_undecodable_bytes_on_stdin_are_answered_as_json(env):
    out = run_cli(["ask", "--json", "-"], env, stdin=b"\xff\xfe reward hacking\n\xff\n")
    assert out.returncode == 0 and b"Traceback" not in out.stderr
    lines = [json.loads(line) for line in out.stdout.decode().splitlines()]
    assert (
        len(lines) == 2 and "reward hacking" in lines[0]["query"] and "\ufffd" in lines[1]["query"]
    )


def test_an_empty_question_is_a_usage_error(built_db):
    out = invoke(["--db", str(built_db), "--knowledge", str(KNOWLEDGE), "ask", "  "])
    assert out.exit_code == 2 and "ask needs a question" in out.output


def test_a_huge_question_is_bounded(built_db):
    rng = random.Random(3)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
        for _ in range(15000)
    ]
    question = " ".join(words)[:100_000]
    out = invoke(["--db", str(built_db), "--knowledge", str(KNOWLEDGE), "ask", "--json", question])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["results"] == [], "random words are not about reinforcement learning"
    assert len(data["query"]) <= 501 and len(data["corrections"]) <= 8
    assert len(out.output) < 5_000, "the question is not echoed back in full"


# -- the knowledge folder
#  ---------------------------------------------------------------------------------
def test_an_empty_or_unrelated_folder_is_not_a_catalog(tmp_path, built_db):
    empty = tmp_path / "empty"
    empty.mkdir()
    check = invoke(["--knowledge", str(empty), "kb", "check"])
    assert check.exit_code == 1 and "not a knowledge folder: no catalog.yaml" in check.output
    db = tmp_path / "kb.db"
    shutil.copy(built_db, db)
    before = db.read_bytes()
    build = invoke(["--knowledge", str(empty), "--db", str(db), "kb", "build"])
    assert build.exit_code == 1 and "previous store is unchanged" in build.output
    assert db.read_bytes() == before
    # A folder that is not a knowledge folder is a wrong path, not a curator's mistake: refused, not
    # answered from the store built earlier (a bad entry in a real folder still falls back to it).
    asked = invoke(["--knowledge", str(empty), "--db", str(db), "ask", "PPO"])
    assert asked.exit_code == 2 and "Proximal Policy Optimization" not in asked.output
    assert f"error: --knowledge: {empty}: not a knowledge folder" in asked.output


def test_a_catalog_without_the_five_stages_is_refused(knowledge_copy):
    (knowledge_copy / "stages" / "evaluation.yaml").unlink()
    out = invoke(["--knowledge", str(knowledge_copy), "kb", "check"])
    assert out.exit_code == 1 and "five stages are required; missing: evaluation" in out.output


def test_a_large_unrelated_folder_is_not_crawled(tmp_path):
    big = tmp_path / "tmp"
    for i in range(
        300
    ):  # YAML scattered around, as a system temp folder has; none of it may be read
        (big / f"d{i}").mkdir(parents=True)
        (big / f"d{i}" / "x.yaml").write_text("not: [a, catalog")
    out = invoke(["--knowledge", str(big), "kb", "check"], env={"RLMAP_KNOWLEDGE": str(big)})
    assert out.exit_code == 1
    lines = [line for line in out.output.splitlines() if line]
    assert lines == [
        (
            f"error: {big}: not a knowledge folder: no catalog.yaml (a knowledge folder holds "
            f"catalog.yaml and the folders stages/, topics/, papers/, signals/)"
        )
    ]


def test_every_mistake_is_reported_with_its_true_field(knowledge_copy):
    clip = knowledge_copy / "signals" / "clip_fraction.yaml"
    text = clip.read_text()
    first_value = text.split("value: ", 1)[1].split("}", 1)[0]
    clip.write_text(text.replace(f"value: {first_value}}}", "value: -5}", 1))
    dapo = knowledge_copy / "papers" / "dapo.yaml"
    dapo.write_text(dapo.read_text().replace("kind: paper", "kind: stage", 1))
    ppo = knowledge_copy / "papers" / "ppo.yaml"
    ppo.write_text(ppo.read_text().replace("year: 2017", "year: soon", 1))
    out = invoke(["--knowledge", str(knowledge_copy), "kb", "check"])
    assert out.exit_code == 1
    lines = sorted(line for line in out.output.splitlines() if line.startswith("error:"))
    assert len(lines) == 3, out.output
    assert "signals/clip_fraction.yaml: entry 'clip_fraction': field 'presets[0].value'" in lines[2]
    assert "papers/dapo.yaml: entry 'dapo': field 'kind': a stage in the papers' folder" in lines[0]
    assert "papers/ppo.yaml: entry 'ppo': field 'year'" in lines[1]


def test_a_broken_metric_alias_file_fails_kb_check(knowledge_copy):
    verl = knowledge_copy / "metrics" / "verl.yaml"
    verl.write_text(verl.read_text() + "\n- nonsense: true\n")
    out = invoke(["--knowledge", str(knowledge_copy), "kb", "check"])
    assert out.exit_code == 1 and "metrics/verl.yaml" in out.output


# -- where the bot writes
#  ---------------------------------------------------------------------------------
@pytest.mark.parametrize("setting", ["RLMAP_DB", "RLMAP_HOME", "--db", "RLMAP_STATE_DB"])
def test_unwritable_places_are_one_line_exit_2(setting, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("I am a file, not a folder")
    target = blocker / "inside" / "store.db"
    env = {"RLMAP_HOME": str(tmp_path / "home")}
    args = ["--knowledge", str(KNOWLEDGE)]
    if setting == "--db":
        args += ["--db", str(target)]
    elif setting == "RLMAP_HOME":
        env["RLMAP_HOME"] = str(blocker / "home")
    else:
        env[setting] = str(target)
    for command in (["ask", "PPO"], ["kb", "build"], ["diagnose", "--list"]):
        if setting == "RLMAP_STATE_DB" and command[0] != "diagnose":
            continue  # asking and building never open the state store
        out = invoke(args + command, env=env)
        assert out.exit_code == 2, (command, out.output)
        assert (
            out.output.count("error:") == 1 and f"{blocker} is a file, not a folder" in out.output
        )
        assert "Traceback" not in out.output


# -- digests in the terminal
#  ------------------------------------------------------------------------------
def test_digest_preview_across_years_is_capped_like_slack(built_db):
    out = invoke(
        [
            "--db",
            str(built_db),
            "--knowledge",
            str(KNOWLEDGE),
            "digest",
            "preview",
            "--since",
            "2025-01-01",
        ]
    )
    assert out.exit_code == 0, out.output
    assert "1 Jan 2025 to " in out.output
    listed = [line for line in out.output.splitlines() if line.startswith("  - [")]
    assert len(listed) == 30 and "...and " in out.output
    data = json.loads(
        invoke(
            [
                "--db",
                str(built_db),
                "--knowledge",
                str(KNOWLEDGE),
                "digest",
                "preview",
                "--since",
                "2025-01-01",
                "--json",
            ]
        ).output
    )
    assert len([i for g in data["groups"] for i in g["items"]]) == 30 and data["more"] > 0


# -- the shell
#  --------------------------------------------------------------------------------------------
def test_the_shell_lists_and_resumes_diagnoses_and_help_explains(built_db, tmp_path):
    core = Core(KNOWLEDGE, built_db, state_url=tmp_path / "state.db")
    first = shell(core, "diagnose", "?", "help", "a")
    assert "How to measure:" in first and "paused; resume with `diagnose --resume" in first
    short = first.split("diagnose --resume ")[1][:8]
    listed = shell(core, "diagnose --list")
    assert short in listed and "1 answer " in listed
    resumed = shell(core, f"diagnose --resume {short}", "stop")
    assert "Q3." in resumed and "Verdict:" in resumed


def test_a_shell_error_is_one_line_and_logged_in_rlmap_home(built_db, tmp_path):
    state = tmp_path / "state.db"
    core = Core(KNOWLEDGE, built_db, state_url=state)
    assert "no open diagnoses" in shell(core, "diagnose --list")
    core.state.engine.dispose()
    state.write_bytes(
        b"this is not a database" * 100
    )  # the state file is corrupted under the running shell
    out = shell(core, "diagnose --list")
    assert "error: something went wrong" in out and "Traceback" not in out
    log = core.settings.data_dir / "shell.log"
    assert "Traceback" in log.read_text() and "diagnose --list" in log.read_text()


def test_ctrl_c_at_the_prompt_cancels_the_line_not_the_shell(env):
    with RealTerminal(["shell"], env) as terminal:
        terminal.read_until(b"rlmap> ")
        terminal.type(b"half a question")
        # As a person would: Ctrl-C once the typed words
        # are on the screen (readline has taken them in and
        # waits for the next key; a signal that lands while
        # it is still busy is only seen at the next key).
        terminal.read_until(b"half a question")
        terminal.type(b"\x03")  # Ctrl-C
        # Under load the first Ctrl-C can land while
        # readline is still busy and is only acted on at the
        # next key: press it again while nothing happens,
        # as a person would (on an empty line it only
        # gives a fresh prompt).
        terminal.read_until(b"rlmap> ", nudge=b"\x03")
        terminal.type(b"stages\n")
        assert b"3. Reward quality (reward)" in terminal.read_until(b"5. Evaluation")
        terminal.type(b"quit\n")
        terminal.read_until(b"bye")


def test_unknown_shell_commands_that_look_like_typos_say_so(core):
    out = shell(core, "stagse", "papres", "show me papers on entropy collapse")
    assert "unknown command `stagse`; did you mean `stages`?" in out
    assert "unknown command `papres`; did you mean `papers`?" in out
    # "show" starts the third line, but its words are a question: searched, never an entry's id.
    answer = out.split("did you mean `papers`?", 1)[1]
    assert "1. [signal] Entropy trend" in answer and "error" not in answer, answer


def test_a_corrupted_state_file_is_one_line_for_the_cli(env, tmp_path):
    state = tmp_path / "bad-state.db"
    state.write_bytes(b"garbage" * 1000)
    env["RLMAP_STATE_DB"] = str(state)
    out = run_cli(["diagnose", "--list"], env)
    assert out.returncode == 2 and out.stderr.count("error:") == 1 and "Traceback" not in out.stderr
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(state).execute("select 1 from sqlite_master").fetchall()


# -- empty values
#  -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, named",
    [
        (["papers", "--by", ""], "--by"),
        (["papers", "--stage", "  "], "--stage"),
        (["papers", "by", ""], "--by"),
        (["diagnose", "--resume", ""], "--resume"),
        (["diagnose", "--run", ""], "--run"),
        (["diagnose", "--run", "x.log", "--chart", ""], "--chart"),
        (["watch", "", "--once"], "PATH"),
    ],
)
def test_an_empty_value_is_a_slip_not_no_filter(args, named, env):
    """`--by ""` (a variable that expanded to nothing) must
    not quietly list everything or start something.
    """
    out = invoke(args, env)
    assert (
        out.exit_code == 2
        and out.output.strip() == f"error: {named} needs a value, not an empty one"
    )
    if "--resume" in args:
        assert not (Path(env["RLMAP_HOME"]) / "state.db").exists(), "no diagnosis was started"


def test_an_empty_setting_means_unset(tmp_path, built_db):
    """`RLMAP_HOME=` falls back to the default place, not to the folder the command runs in."""
    cwd, home = tmp_path / "work", tmp_path / "user"
    cwd.mkdir()
    env = {
        **os.environ,
        "RLMAP_HOME": "",
        "RLMAP_DB": "",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
    }
    out = subprocess.run(
        [str(Path(sys.executable).with_name("rlmap-bot")), "stages"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert list(cwd.iterdir()) == [] and (home / "data" / "rlmap-bot" / "knowledge.db").exists()
