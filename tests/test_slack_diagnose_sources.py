"""`/rlmap diagnose --run SOURCE` in a workspace: paths
only inside RLMAP_RUN_ROOTS, refusals in one line.
"""

from __future__ import annotations

import json

from support import runlogs as rl
from support.bot import start_bot
from support.slackio import slash, text_of

HACKING = rl.named(rl.phased([("healthy", 150), ("reward_hacking", 150)]), "verl")


def shown(reply: dict) -> str:
    return reply.get("text", "") + text_of(reply.get("blocks") or [])


def test_a_log_under_the_roots_is_diagnosed_from_slack(standin, built_db, tmp_path):
    roots = tmp_path / "runs"
    rl.write_verl_console(roots / "exp" / "train.log", HACKING)
    bot = start_bot(standin, built_db, tmp_path / "state.db", rlmap_run_roots=str(roots))
    try:
        reply = slash(bot, standin, "diagnose --run exp/train.log")
        said = shown(reply)
        assert "Reward quality" in said, json.dumps(reply)[:600]
        assert "Traceback" not in said
    finally:
        bot.stop()


def test_paths_outside_the_roots_or_without_roots_are_refused_in_one_line(
    standin, built_db, tmp_path
):
    roots = tmp_path / "runs"
    roots.mkdir()
    secret = rl.write_verl_console(tmp_path / "outside" / "secret.log", HACKING[:50])
    bot = start_bot(standin, built_db, tmp_path / "state.db", rlmap_run_roots=str(roots))
    try:
        for text in (str(secret), "../outside/secret.log", "/etc/passwd"):
            said = shown(slash(bot, standin, f"diagnose --run {text}"))
            assert "RLMAP_RUN_ROOTS" in said and "Verdict" not in said, (text, said)
            assert len(said.strip().splitlines()) == 1, said
    finally:
        bot.stop()
    off = start_bot(standin, built_db, tmp_path / "state2.db")
    try:
        said = shown(slash(off, standin, f"diagnose --run {secret}"))
        assert "RLMAP_RUN_ROOTS" in said and "not read from chat" in said and "Verdict" not in said
    finally:
        off.stop()


def test_a_tracker_the_workspace_may_not_read_is_refused_in_one_line(standin, built_db, tmp_path):
    bot = start_bot(standin, built_db, tmp_path / "state.db")
    try:
        said = shown(slash(bot, standin, "diagnose --run wandb:someone-else/proj/abc123"))
        assert "RLMAP_WANDB_ENTITIES" in said and "Traceback" not in said, said
    finally:
        bot.stop()
