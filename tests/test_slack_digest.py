"""Digests over Slack, against the stand-in: subscribe,
preview, now, exactly once, restarts, crashes.
"""

from __future__ import annotations

import datetime as dt
import json
import signal
import subprocess
import time

import pytest
import yaml

from support.bot import start_bot
from support.http import get, metric
from support.serve import start
from support.slackio import slash, text_of
from support.standin import Slack

NEW_PAPER = f"""id: zz-new-paper
kind: paper
title: Quokka Scaling Laws for Verifier Rewards
summary: A made-up test entry about how verifier quality scales.
authors: [Quokka]
year: 2026
verification: verified
stages: [reward]
subtopics: [reward-overoptimization]
added: {dt.date.today().isoformat()}
"""


@pytest.fixture
def kbot(standin, knowledge_copy, tmp_path):
    # Over HTTP: the tests read the digest counters from /metrics beside /slack/events.
    bot = start_bot(
        standin, tmp_path / "kb.db", tmp_path / "state.db", knowledge=knowledge_copy, http=True
    )
    bot.knowledge = knowledge_copy
    yield bot
    bot.stop()


def command(bot, standin, text: str, channel: str = "C1", user: str = "U1") -> dict:
    return slash(bot, standin, f"digest {text}", channel=channel, user=user)


def add_entry(bot, text: str = NEW_PAPER, name: str = "zz-new-paper.yaml") -> None:
    (bot.front.core.knowledge_root / "papers" / name).write_text(text)
    bot.front.core.reload()


def edit_yaml(path, **changes) -> None:
    data = yaml.safe_load(path.read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def is_digest(call) -> bool:
    """A digest post: tagged with the digest's own metadata
    (every post also carries the claim's otherwise).
    """
    metadata = call.args.get("metadata") or {}
    metadata = json.loads(metadata) if isinstance(metadata, str) else metadata
    return metadata.get("event_type") == "rlmap_digest"


def digests_posted(standin, channel: str = "C1") -> list:
    return [
        c for c in standin.of("chat.postMessage") if c.args["channel"] == channel and is_digest(c)
    ]


def test_subscribe_defaults_to_the_users_timezone_and_lists_next_run(kbot, standin):
    standin.user_tz["U1"] = "America/Los_Angeles"
    reply = command(kbot, standin, "subscribe")
    assert reply["response_type"] == "ephemeral" and reply["text"].startswith(
        "Subscribed. Next digest: Mon"
    )
    confirmation = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "C1")[0]
    assert "<@U1> subscribed this channel" in confirmation.args["text"]
    assert "every Mon at 09:00 (America/Los_Angeles)" in confirmation.args["text"]
    assert standin.of("users.info")[0].args["user"] == "U1"
    command(kbot, standin, "subscribe daily 07:30 UTC stage:reward", channel="C2")
    listing = command(kbot, standin, "list")["text"]
    assert "<#C1>: every Mon at 09:00 (America/Los_Angeles); next Mon" in listing
    assert "<#C2>: daily at 07:30 (UTC), stage:reward; next" in listing


def test_subscribing_where_the_bot_cannot_post_says_so_and_saves_nothing(kbot, standin):
    standin.fail_next("chat.postMessage", "not_in_channel")
    reply = command(kbot, standin, "subscribe", channel="CPRIV")
    assert "/invite" in reply["text"] and "not saved" in reply["text"]
    assert kbot.front.core.state.subscriptions.get("T0001", "CPRIV") is None


def test_bad_arguments_say_what_was_wrong(kbot, standin):
    assert (
        "'fortnightly' is not a frequency"
        in command(kbot, standin, "subscribe fortnightly")["text"]
    )
    assert (
        "Unknown stage 'rewrd'; did you mean stage:reward?"
        in command(kbot, standin, "subscribe stage:rewrd")["text"]
    )
    assert "Usage" in command(kbot, standin, "resubscribe")["text"]
    assert "no digest subscription" in command(kbot, standin, "now")["text"]
    assert kbot.front.core.state.subscriptions.list() == []


def flush(kbot, standin, channel=None) -> int:
    """Post what the bundled catalog has dated today (new to a channel subscribed today), so a
    test does not depend on the day it runs; returns the digests posted so far."""
    kwargs = {"channel": channel} if channel else {}
    command(kbot, standin, "now", **kwargs)
    return len(digests_posted(standin))


def test_new_entry_appears_in_the_next_digest_and_only_there(kbot, standin):
    command(kbot, standin, "subscribe")
    before = flush(kbot, standin)
    preview = command(kbot, standin, "preview")
    assert "Nothing new" in text_of(preview["blocks"])
    assert "nothing was posted" in command(kbot, standin, "now")["text"]
    assert len(digests_posted(standin)) == before
    add_entry(kbot)
    preview = command(kbot, standin, "preview")
    assert "Quokka Scaling Laws for Verifier Rewards" in text_of(preview["blocks"])
    assert "Preview" in text_of(preview["blocks"])
    counted = metric(get(kbot.url + "/metrics")[1], "rlmap_digest_posts_total")
    assert command(kbot, standin, "now")["text"] == "Posted a digest of 1 entry."
    posted = digests_posted(standin)[before:]
    assert len(posted) == 1
    assert metric(get(kbot.url + "/metrics")[1], "rlmap_digest_posts_total") == counted + 1
    blocks = (
        json.loads(posted[0].args["blocks"])
        if isinstance(posted[0].args["blocks"], str)
        else posted[0].args["blocks"]
    )
    assert "Quokka Scaling Laws for Verifier Rewards" in text_of(
        blocks
    ) and "Reward quality" in text_of(blocks)
    metadata = posted[0].args["metadata"]
    metadata = json.loads(metadata) if isinstance(metadata, str) else metadata
    assert metadata["event_type"] == "rlmap_digest" and metadata["event_payload"]["digest_id"]
    # A second "now" finds nothing new: the ledger remembers what the channel got.
    assert "nothing was posted" in command(kbot, standin, "now")["text"]
    assert len(digests_posted(standin)) == before + 1
    assert "Nothing new" in text_of(command(kbot, standin, "preview")["blocks"])


def test_filters_and_the_empty_note(kbot, standin):
    command(kbot, standin, "subscribe stage:evaluation note-empty", channel="C5")
    flush(kbot, standin, channel="C5")
    add_entry(kbot)  # a reward paper: filtered out for this channel
    assert "a note was posted" in command(kbot, standin, "now", channel="C5")["text"]
    note = [c for c in standin.of("chat.postMessage") if c.args["channel"] == "C5"][-1]
    assert "Nothing new" in note.args["text"] and not is_digest(note)


def test_announced_update_is_shown_apart(kbot, standin):
    command(kbot, standin, "subscribe")
    edit_yaml(
        kbot.knowledge / "papers" / "ppo.yaml", summary="Now with a clearer summary.", announce=True
    )
    edit_yaml(kbot.knowledge / "papers" / "dapo.yaml", summary="Quietly edited.")  # not announced
    kbot.front.core.reload()
    text = text_of(command(kbot, standin, "preview")["blocks"])
    assert "*Updated in the catalog*" in text and "Proximal Policy Optimization" in text
    assert "DAPO" not in text


def _paper(slug: str, title: str, year: int, arxiv: str, author: str) -> str:
    return f"""id: {slug}
kind: paper
title: "{title}"
summary: A made-up test entry, dated by its arXiv id.
authors: [{author}, Someone Else]
year: {year}
arxiv: "{arxiv}"
verification: verified
stages: [reward]
added: {dt.date.today().isoformat()}
"""


def test_a_digest_tells_papers_out_in_its_period_from_older_ones_new_to_the_catalog(kbot, standin):
    """Issue 38: DPO (2023) was "New" because it entered the catalog. A paper's arXiv month says
    when it came out; every paper shows its year; its title is its link (no URL as text)."""
    today = dt.date.today()
    command(kbot, standin, "subscribe")
    before = flush(kbot, standin)
    add_entry(
        kbot,
        _paper("zz-fresh", "Fresh Quokka RL", today.year, f"{today:%y%m}.00001", "Ada Quokka"),
        "zz-fresh.yaml",
    )
    add_entry(
        kbot, _paper("zz-old", "Old Wombat RL", 2019, "1905.00002", "Bo Wombat"), "zz-old.yaml"
    )
    command(kbot, standin, "now")
    [post] = digests_posted(standin)[before:]
    blocks = (
        json.loads(post.args["blocks"])
        if isinstance(post.args["blocks"], str)
        else (post.args["blocks"])
    )
    text = "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")
    new, _, added = text.partition("*Added to the catalog*")
    assert "*New papers, out in this period*" in new and "Fresh Quokka RL" in new
    assert "Old Wombat RL" not in new and "Old Wombat RL" in added
    assert f"({today.year}, Ada Quokka et al.)" in text and "(2019, Bo Wombat et al.)" in text
    assert "<https://arxiv.org/abs/1905.00002|Old Wombat RL>" in text
    assert "|https://" not in text, "a URL is never a link's text"
    assert "1 new paper, 1 more added to the catalog" in post.args["text"]


def test_restart_does_not_repeat_and_unsubscribe_stops(standin, knowledge_copy, tmp_path):
    first = start_bot(standin, tmp_path / "kb.db", tmp_path / "state.db", knowledge=knowledge_copy)
    command(first, standin, "subscribe")
    add_entry(first)
    command(first, standin, "now")
    first.stop()
    second = start_bot(standin, tmp_path / "kb.db", tmp_path / "state.db", knowledge=knowledge_copy)
    try:
        assert "nothing was posted" in command(second, standin, "now")["text"]
        # A scheduled slot fired twice (a restart re-running a caught-up slot) posts once.
        sub = second.front.core.state.subscriptions.get("T0001", "C1")
        add_entry(
            second,
            NEW_PAPER.replace("zz-new-paper", "zz-second").replace(
                "Quokka Scaling", "Wombat Scaling"
            ),
            "zz-second.yaml",
        )
        due = dt.datetime(2026, 12, 7, 9, tzinfo=dt.UTC)
        assert second.front.digests.fire(sub.id, due).status == "posted"
        assert second.front.digests.fire(sub.id, due).status == "duplicate"
        assert len(digests_posted(standin)) == 2
        assert "unsubscribed" in command(second, standin, "unsubscribe")["text"]
        assert second.front.digests.fire(sub.id, due) is None
        assert "no digest subscription" in command(second, standin, "now")["text"]
    finally:
        second.stop()


def test_scheduler_posts_the_digest_on_time(kbot, standin):
    command(kbot, standin, "subscribe")
    add_entry(kbot)
    digests = kbot.front.digests
    digests.start_scheduler()
    try:
        sub = kbot.front.core.state.subscriptions.get("T0001", "C1")
        digests.jobs.run_soon(
            "digest", sub.id, dt.datetime.now(dt.UTC) + dt.timedelta(milliseconds=200)
        )
        standin.wait_for("chat.postMessage", is_digest)
        deadline = time.time() + 10  # the run is marked after the post is recorded
        while (
            kbot.front.core.state.subscriptions.get("T0001", "C1").last_run_at is None
            and time.time() < deadline
        ):
            time.sleep(0.05)
    finally:
        digests.stop_scheduler()
    assert kbot.front.core.state.subscriptions.get("T0001", "C1").last_run_at is not None


def test_crash_after_posting_before_recording_does_not_repeat(
    serve_env, standin, knowledge_copy, tmp_path
):
    serve_env["RLMAP_KNOWLEDGE"] = str(knowledge_copy)
    log = tmp_path / "serve.log"
    proc, url = start(serve_env, log)
    try:
        slack = Slack(url, standin)
        slack.command("digest subscribe", respond_as="sub")
        standin.wait_for("response_url", lambda c: c.target == "sub")
        (knowledge_copy / "papers" / "zz-new-paper.yaml").write_text(NEW_PAPER)
        proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 20
        while "reloaded the catalog" not in log.read_text() and time.time() < deadline:
            time.sleep(0.1)
        # Slack stores the post at once but answers slowly; the bot dies before it can record it.
        standin.holds["chat.postMessage"] = 5
        slack.command("digest now", respond_as="now1")
        standin.wait_for("chat.postMessage", is_digest)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        standin.holds.clear()
        proc, url = start(serve_env, log)
        slack = Slack(url, standin)
        slack.command("digest now", respond_as="now2")
        reply = standin.wait_for("response_url", lambda c: c.target == "now2")[0]
        assert "nothing was posted" in reply.args["text"]
        assert len(digests_posted(standin)) == 1, "the digest was posted twice"
        assert standin.of("conversations.history"), "recovery looked for the post by its metadata"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_two_nows_at_once_post_one_digest(kbot, standin):
    command(kbot, standin, "subscribe")
    before = flush(kbot, standin)
    add_entry(kbot)
    standin.holds["chat.postMessage"] = (
        1.5  # the first run is still posting when the second arrives
    )
    kbot.slack.command("digest now", respond_as="first")
    standin.wait_for("chat.postMessage", is_digest)
    kbot.slack.command("digest now", respond_as="second")
    second = standin.wait_for("response_url", lambda c: c.target == "second")[0].args["text"]
    first = standin.wait_for("response_url", lambda c: c.target == "first")[0].args["text"]
    standin.holds.clear()
    assert first == "Posted a digest of 1 entry."
    # The second run either waits its turn or finds the first one's post by its metadata.
    assert "being posted right now" in second or "nothing was posted" in second
    assert len(digests_posted(standin)) == before + 1
    assert "Nothing new" in text_of(command(kbot, standin, "preview")["blocks"])
