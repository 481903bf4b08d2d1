"""A training log dropped in a Slack diagnosis thread:
downloaded with the bot token, read, answered in the thread.
"""

from __future__ import annotations

import gzip
import json

from support import runlogs
from support.slackio import blocks_of, start, text_of
from support.standin import BOT_TOKEN


def share(
    bot, standin, card, name: str, data: bytes, user: str = "U1", user_team: str | None = None
) -> dict:
    file = standin.share_file(name, data, user=user)
    if user_team is not None:
        file["user_team"] = user_team
    event = {
        "type": "message",
        "subtype": "file_share",
        "channel_type": "channel",
        "channel": card.channel,
        "user": user,
        "ts": f"{card.thread}7",
        "thread_ts": card.thread,
        "text": "",
        "files": [file],
    }
    if user_team is not None:
        event["user_team"] = user_team
    bot.slack.event(event)
    return file


def verl_log(tmp_path, pattern: str) -> bytes:
    path = runlogs.write_verl_console(
        tmp_path / f"{pattern}.log", runlogs.named(runlogs.curves(pattern), "verl")
    )
    return path.read_bytes()


def test_a_log_in_a_diagnosis_thread_is_read_and_answered_with_the_chart(bot, standin, tmp_path):
    card = start(bot, standin)
    file = share(
        bot, standin, card, "run.log.gz", gzip.compress(verl_log(tmp_path, "reward_hacking"))
    )
    posted = standin.wait_for(
        "chat.postMessage", lambda c: "run.log.gz" in text_of(blocks_of(c)), timeout=30
    )[0]
    assert posted.args["thread_ts"] == card.thread and posted.args["channel"] == card.channel
    text = text_of(blocks_of(posted))
    assert "Verdict: Reward quality binds" in text and "*Do this next:*" in text
    assert "/tmp" not in json.dumps(posted.args), "the server's temporary path is never shown"
    # every reading, behind the card's Details button
    details = next(
        e
        for b in blocks_of(posted)
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == "details_show"
    )
    bot.slack.click("details_show", details["value"], channel=card.channel, thread_ts=card.thread)
    view = standin.wait_for("views.open", timeout=30)[0].args["view"]
    view = json.loads(view) if isinstance(view, str) else view
    shown = text_of(view["blocks"])
    assert "proxy_reward_trend" in shown and "heldout_score_trend" in shown
    assert "/tmp" not in json.dumps(view)
    # Downloaded with the bot token; the chart went up through
    # the three-step external upload, into the thread.
    assert standin.downloads == [{"file": file["id"], "token": BOT_TOKEN}]
    complete = standin.wait_for("files.completeUploadExternal", timeout=30)[0]
    upload = next(u for u in standin.uploads.values() if u["completed"])
    assert (
        upload["data"][:8] == b"\x89PNG\r\n\x1a\n"
        and upload["completed"]["thread_ts"] == card.thread
    )
    assert complete.args["channel_id"] == card.channel
    # The diagnosis card moved on with what the logs told: those questions are not asked again.
    standin.wait_for("chat.update", lambda c: c.args["ts"] == card.ts, timeout=30)
    assert card.signal not in {
        "proxy_reward_trend",
        "heldout_score_trend",
        "entropy_trend",
        "length_growth",
    }


def test_not_a_log_gets_one_line_in_the_thread(bot, standin):
    card = start(bot, standin)
    share(bot, standin, card, "notes.txt", b"meeting notes: buy more GPUs\nand coffee\n")
    posted = standin.wait_for(
        "chat.postMessage", lambda c: "could not read" in text_of(blocks_of(c)), timeout=30
    )[0]
    assert posted.args["thread_ts"] == card.thread
    assert "notes.txt" in text_of(blocks_of(posted)) and "Traceback" not in json.dumps(posted.args)
    assert not standin.of("files.getUploadURLExternal")


def test_files_outside_a_diagnosis_thread_or_from_other_organisations_are_not_read(
    bot, standin, tmp_path
):
    card = start(bot, standin)
    data = verl_log(tmp_path, "healthy")
    share(bot, standin, card, "theirs.log", data, user="UEXT", user_team="TOTHER")
    other = standin.share_file("elsewhere.log", data)
    bot.slack.event(
        {
            "type": "message",
            "subtype": "file_share",
            "channel_type": "channel",
            "channel": card.channel,
            "user": "U1",
            "ts": "555.1",
            "thread_ts": "555.0",
            "text": "",
            "files": [other],
        }
    )
    # A question afterwards proves the bot is alive; nothing was downloaded.
    bot.slack.event(
        {
            "type": "message",
            "channel_type": "im",
            "user": "U1",
            "channel": "D1",
            "ts": "556.1",
            "text": "PPO",
        }
    )
    standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "D1")
    standin.settle()
    assert standin.downloads == []


def test_a_log_over_the_size_limit_is_refused_without_downloading(standin, built_db, tmp_path):
    from support.bot import start_bot

    small = start_bot(standin, built_db, tmp_path / "state.db", rlmap_max_log_mb=1)
    try:
        card = start(small, standin)
        share(small, standin, card, "huge.log", b"step:1 - x:1\n" * 100_000)  # 1.3 MB
        posted = standin.wait_for(
            "chat.postMessage", lambda c: "could not read" in text_of(blocks_of(c)), timeout=30
        )[0]
        assert "RLMAP_MAX_LOG_MB" in text_of(blocks_of(posted))
        assert standin.downloads == []
    finally:
        small.stop()
