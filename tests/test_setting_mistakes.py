"""A mistyped setting or option is one line naming it,
exit 2, and nothing the bot did not make is touched.

Through the real command line (click's runner over the real command tree, or the installed script
for `serve`), against real files and the Slack Web API stand-in.
"""

from __future__ import annotations

import sqlite3
import subprocess

import pytest

from support.cli import invoke
from support.serve import EXE
from support.standin import BOT_TOKEN


def _one_error_line(out) -> str:
    lines = [line for line in (out.stdout + out.stderr).splitlines() if line.startswith("error:")]
    assert len(lines) == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    return lines[0]


def _someone_elses_database(path) -> bytes:
    with sqlite3.connect(path) as conn:
        conn.execute("create table recipes (name text)")
        conn.execute("insert into recipes values ('soup')")
    conn.close()
    return path.read_bytes()


# -- the knowledge store: never replace a file the bot
#  did not make --------------------------------------
@pytest.mark.parametrize("how", ["RLMAP_DB", "--db"])
@pytest.mark.parametrize("kind", ["notes", "sqlite"])
def test_a_file_that_is_not_a_knowledge_store_is_left_alone(how, kind, tmp_path, env):
    target = tmp_path / ("notes.md" if kind == "notes" else "recipes.db")
    if kind == "notes":
        target.write_text("# my notes\nkeep me\n")
        before = target.read_bytes()
    else:
        before = _someone_elses_database(target)
    args = ["--db", str(target)] if how == "--db" else []
    if how == "RLMAP_DB":
        env["RLMAP_DB"] = str(target)
    else:
        env.pop("RLMAP_DB")
    for command in (["stages"], ["kb", "build"]):
        out = invoke([*args, *command], env)
        assert out.returncode == 2, out.stdout + out.stderr
        line = _one_error_line(out)
        assert line.startswith(f"error: {how}: ") and "is not a knowledge store" in line
        assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(target.name)) == [
        target.name
    ]


def test_an_empty_file_or_our_own_store_is_rebuilt(tmp_path, env):
    empty = tmp_path / "new.db"
    empty.touch()
    env["RLMAP_DB"] = str(empty)
    assert invoke(["stages"], env).returncode == 0
    with sqlite3.connect(empty) as conn:  # now a store of ours: rebuilt again without complaint
        conn.execute("delete from meta where key = 'fingerprint'")
    conn.close()
    out = invoke(["stages"], env)
    assert out.returncode == 0 and "Environments" in out.stdout


@pytest.mark.parametrize("how", ["RLMAP_DB", "--db", "RLMAP_STATE_DB"])
@pytest.mark.parametrize("where", ["proc", "folder"])
def test_a_store_in_an_unwritable_place_names_the_setting(how, where, tmp_path, env):
    target = "/proc/rlmap-test.db" if where == "proc" else str(tmp_path)
    args = ["--db", target] if how == "--db" else []
    if how in {"RLMAP_DB", "RLMAP_STATE_DB"}:
        env[how] = target
    command = ["diagnose", "--list"] if how == "RLMAP_STATE_DB" else ["stages"]
    out = invoke([*args, *command], env)
    assert out.returncode == 2, out.stdout + out.stderr
    assert _one_error_line(out).startswith(f"error: {how}: ")


@pytest.mark.parametrize("kind", ["notes", "sqlite"])
def test_a_state_store_file_the_bot_did_not_make_is_left_alone(kind, tmp_path, env):
    target = tmp_path / ("notes.md" if kind == "notes" else "recipes.db")
    if kind == "notes":
        target.write_text("# my notes\n")
        before = target.read_bytes()
    else:
        before = _someone_elses_database(target)
    env["RLMAP_STATE_DB"] = str(target)
    out = invoke(["diagnose", "--list"], env)
    assert out.returncode == 2
    line = _one_error_line(out)
    assert line.startswith("error: RLMAP_STATE_DB: ") and "is not a state store" in line
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(target.name)] == [target.name]


# -- the knowledge folder: a wrong path is refused, not
#  answered from the old store ------------------------
@pytest.mark.parametrize("how", ["RLMAP_KNOWLEDGE", "--knowledge"])
@pytest.mark.parametrize("what", ["missing", "a file", "an unrelated folder"])
def test_a_wrong_knowledge_path_is_refused(how, what, tmp_path, env):
    path = {
        "missing": tmp_path / "knowlege",
        "a file": tmp_path / "notes.md",
        "an unrelated folder": tmp_path,
    }[what]
    if what == "a file":
        path.write_text("# notes\n")
    args = ["--knowledge", str(path)] if how == "--knowledge" else []
    if how == "RLMAP_KNOWLEDGE":
        env["RLMAP_KNOWLEDGE"] = str(path)
    out = invoke([*args, "ask", "the PPO paper"], env)
    assert out.returncode == 2, out.stdout
    assert _one_error_line(out).startswith(f"error: {how}: {path}: ")
    assert "Proximal Policy Optimization" not in out.stdout, "answered from the previous store"


# -- Slack settings at `serve`
#  ------------------------------------------------------------------------------
def _serve(env, *args):
    return subprocess.run(
        [EXE, "serve", *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_a_bot_token_alone_names_both_ways_in(env):
    env["SLACK_BOT_TOKEN"] = BOT_TOKEN
    for args in (
        ["serve"],
        ["serve", "--http"],
        [],
    ):  # the bare command serves Slack when a token is set
        out = subprocess.run([EXE, *args], env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 2
        line = _one_error_line(out)
        assert "SLACK_APP_TOKEN" in line and "Socket Mode" in line
        assert "SLACK_SIGNING_SECRET" in line and "--http" in line


@pytest.mark.parametrize(
    "setting, value, expected",
    [
        ("SLACK_APP_TOKEN", BOT_TOKEN, "SLACK_APP_TOKEN must be an app-level token"),
        ("SLACK_BOT_TOKEN", "xapp-1-A1-mixedup", "SLACK_BOT_TOKEN must be a bot token"),
    ],
)
def test_a_token_of_the_wrong_kind_is_named_before_connecting(
    setting, value, expected, serve_env, standin
):
    serve_env.update({"SLACK_APP_TOKEN": "xapp-1-A1-test", setting: value})
    out = _serve(serve_env)
    assert out.returncode == 2
    line = _one_error_line(out)
    assert expected in line and value not in out.stderr + out.stdout
    assert standin.calls == [], "nothing was sent to Slack"


@pytest.mark.parametrize("mode", ["socket", "http"])
def test_a_refused_bot_token_is_one_line(mode, serve_env, standin):
    serve_env["SLACK_BOT_TOKEN"] = "xoxb-revoked-0000"
    serve_env["SLACK_APP_TOKEN"] = "xapp-1-A1-test"
    out = _serve(serve_env, *(["--http", "--port", "0"] if mode == "http" else []))
    assert out.returncode == 2
    line = _one_error_line(out)
    assert line.startswith("error: SLACK_BOT_TOKEN: Slack refused the token (invalid_auth")
    assert "xoxb-revoked-0000" not in out.stderr + out.stdout


@pytest.mark.parametrize("error", ["invalid_auth", "not_allowed_token_type"])
def test_a_refused_app_token_is_one_line(error, serve_env, standin):
    serve_env["SLACK_APP_TOKEN"] = "xapp-1-A1-revoked"
    standin.fail_next("apps.connections.open", error)
    out = _serve(serve_env)
    assert out.returncode == 2
    assert _one_error_line(out).startswith(
        f"error: SLACK_APP_TOKEN: Slack refused the token ({error}"
    )
    assert "xapp-1-A1-revoked" not in out.stderr + out.stdout


def test_slack_unreachable_at_serve_names_the_url_setting(serve_env):
    serve_env["SLACK_APP_TOKEN"] = "xapp-1-A1-test"
    serve_env["SLACK_API_URL"] = (
        "http://127.0.0.1:9/api/"  # discard port: nothing listens, connection refused
    )
    out = _serve(serve_env)
    assert out.returncode == 2
    line = _one_error_line(out)
    assert "could not reach Slack at 127.0.0.1:9" in line and "SLACK_API_URL" in line


def test_the_knowledge_store_files_are_untouched_by_a_refused_start(tmp_path, serve_env):
    notes = tmp_path / "notes.md"
    notes.write_text("mine\n")
    serve_env.update(RLMAP_DB=str(notes), SLACK_APP_TOKEN="xapp-1-A1-test")
    out = _serve(serve_env)
    assert out.returncode == 2 and "RLMAP_DB" in _one_error_line(out)
    assert notes.read_text() == "mine\n"
