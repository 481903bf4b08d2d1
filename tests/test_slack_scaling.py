"""`/rlmap forecast SOURCE` and `/rlmap compare A B` in a workspace (issue 37, item 6): the real
Bolt app over signed HTTP against the Slack stand-in, the runs read under RLMAP_RUN_ROOTS. One card
each, and the chart: to the asker's DM with the bot for `/rlmap` (whose answer is theirs alone), in
the thread for a mention."""

from __future__ import annotations

import json

from support.bot import start_bot
from support.scalingcurves import Truth, run, write_log
from support.slackio import blocks_of, slash, text_of
from support.standin import mention

PNG = b"\x89PNG\r\n\x1a\n"


def shown(reply: dict) -> str:
    blocks = reply.get("blocks") or []
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    return reply.get("text", "") + "\n" + text_of(blocks)


def _runs(tmp_path):
    roots = tmp_path / "runs"
    (roots / "a").mkdir(parents=True)
    (roots / "b").mkdir(parents=True)
    write_log(roots / "a" / "train.jsonl", *run(Truth(0.8, 1.5, 60), 300, noise=0.015, seed=1))
    write_log(roots / "b" / "train.jsonl", *run(Truth(0.5, 1.5, 60), 300, noise=0.015, seed=2))
    return roots


def _chart_in(standin, channel: str, thread: str | None) -> dict:
    standin.wait_for("files.completeUploadExternal", timeout=60)
    upload = next(u for u in standin.uploads.values() if u["completed"])
    assert upload["data"][:8] == PNG
    assert upload["completed"]["channel_id"] == channel
    assert upload["completed"]["thread_ts"] == thread
    return upload


def test_slash_forecast_answers_with_one_card_and_the_chart_in_a_dm(standin, built_db, tmp_path):
    roots = _runs(tmp_path)
    bot = start_bot(standin, built_db, tmp_path / "state.db", rlmap_run_roots=str(roots))
    try:
        reply = slash(bot, standin, "forecast a/train.jsonl")
        said = " ".join(shown(reply).split())
        assert "Ceiling near 0.8" in said, said
        assert "the chart is in your DM with me" in said
        assert reply["response_type"] == "ephemeral"
        assert str(tmp_path) not in json.dumps(reply), "no server path in the card"
        # the DM: a line saying what the chart is, and the chart under it
        dm = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "U1")[0]
        assert "a/train.jsonl" in dm.args["text"]
        ts = standin.messages["U1"][-1]["ts"]
        upload = _chart_in(standin, "U1", ts)
        assert upload["filename"] == "forecast.png"
    finally:
        bot.stop()


def test_a_mention_compares_two_runs_with_the_chart_in_its_thread(standin, built_db, tmp_path):
    roots = _runs(tmp_path)
    bot = start_bot(standin, built_db, tmp_path / "state.db", rlmap_run_roots=str(roots))
    try:
        bot.slack.event(mention("1700000100.000100", "compare a/train.jsonl b/train.jsonl"))
        posted = standin.wait_for(
            "chat.postMessage", lambda c: "ceiling" in text_of(blocks_of(c)), timeout=60
        )[0]
        said = " ".join(text_of(blocks_of(posted)).split())
        assert blocks_of(posted)[0]["text"]["text"].startswith(":scales: *")
        assert "a/train.jsonl has the higher ceiling" in said, said
        assert "aligned on steps" in said
        _chart_in(standin, "C1", "1700000100.000100")
    finally:
        bot.stop()


def test_a_run_outside_the_roots_is_refused_in_one_line(standin, built_db, tmp_path):
    roots = _runs(tmp_path)
    outside = write_log(tmp_path / "secret.jsonl", *run(Truth(0.8, 1.5, 60), 300))
    bot = start_bot(standin, built_db, tmp_path / "state.db", rlmap_run_roots=str(roots))
    try:
        said = " ".join(shown(slash(bot, standin, f"compare a/train.jsonl {outside}")).split())
        assert "RLMAP_RUN_ROOTS" in said and "Traceback" not in said, said
        # The refusal names the command used, not watch's words.
        assert "the folders compare may read runs from" in said and "nothing is compared" in said
        assert "watch" not in said, said
        said = " ".join(shown(slash(bot, standin, f"forecast {outside}")).split())
        assert "the folders forecast may read runs from" in said and "watch" not in said, said
        assert not standin.uploads
    finally:
        bot.stop()
