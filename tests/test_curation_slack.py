"""Suggest, curate and go live end to end: two real
`serve --http` replicas on one PostgreSQL, the Slack
Web API stand-in, and a local arXiv stand-in serving arXiv's own recorded answers."""

from __future__ import annotations

import datetime as dt
import json
import time
import urllib.parse

import pytest

from rlmap_bot.state.models import Subscription
from rlmap_bot.state.store import StateStore
from support.slackio import blocks_of, buttons, text_of
from support.standin import TEAM, Slack, mention, sign

# "REST: Stress Testing Large Reasoning Models by Asking Multiple Problems at Once"
REST = "2507.10541"
CURATORS = "CCUR"


@pytest.fixture
def replicas(serve_env, standin, pg_url, processes, tmp_path, arxiv, store_copy):
    def launch(name: str, **more: str) -> Slack:
        env = dict(
            serve_env,
            RLMAP_SCOUT_TOP="0",
            RLMAP_STATE_URL=pg_url,
            RLMAP_DB=store_copy(name),
            RLMAP_ARXIV_URL=arxiv.url,
            RLMAP_ARXIV_DELAY_SECONDS="0",
            RLMAP_ARXIV_TIMEOUT_SECONDS="2",
            RLMAP_CURATORS="UCUR,UCUR2",
            RLMAP_CURATOR_CHANNEL=CURATORS,
            RLMAP_ADDITIONS_POLL_SECONDS="0.5",
            RLMAP_SUGGEST_RETRY_SECONDS="0.5",
            RLMAP_ADMINS="UADMIN",
        )
        env.update(more)
        _, url = processes(env, tmp_path / f"{name}.log")
        return Slack(url, standin)

    return launch


def reply(standin, name: str, count: int = 1) -> str:
    call = standin.wait_for("response_url", lambda c: c.target == name, count=count, timeout=15)[
        count - 1
    ]
    return call.args.get("text", "") + "\n" + text_of(blocks_of(call))


def card(standin, count: int = 1):
    return standin.wait_for(
        "chat.postMessage", lambda c: c.args["channel"] == CURATORS, count=count, timeout=15
    )[count - 1]


def told(standin, user: str, words: str):
    return standin.wait_for(
        "chat.postEphemeral",
        lambda c: c.args.get("user") == user and words in c.args["text"],
        timeout=15,
    )[0]


def card_ts(standin, call) -> str:
    return next(m["ts"] for m in standin.messages[CURATORS] if m["text"] == call.args["text"])


def suggestion_status(pg_url: str, arxiv_id: str) -> list[str]:
    state = StateStore(pg_url)
    try:
        return [
            s.status
            for s in [
                state.curation.latest(
                    arxiv_id, ("waiting", "pending", "approved", "rejected", "dropped")
                )
            ]
            if s
        ]
    finally:
        state.close()


def test_suggest_approve_live_on_the_other_replica_then_in_the_digest_once(
    replicas, standin, pg_url
):
    state = StateStore(pg_url)
    state.subscriptions.save(
        Subscription(
            team=TEAM,
            channel="CDIG",
            frequency="weekly",
            day="mon",
            time="09:00",
            timezone="UTC",
            created_at=dt.datetime.now(dt.UTC) - dt.timedelta(days=1),
        )
    )
    state.close()
    a, b = replicas("a"), replicas("b")
    a.command(
        f"suggest https://arxiv.org/abs/{REST}v1", user="U1", channel="C1", respond_as="suggest"
    )
    assert "with the curators" in reply(standin, "suggest")
    posted = card(standin)
    shown = text_of(blocks_of(posted))
    assert "REST: Stress Testing Large Reasoning Models" in shown and "Evaluation (0." in shown
    sid = buttons(posted)["curate_approve"]["value"]
    ts = card_ts(standin, posted)

    b.click(
        "curate_approve", sid, user="U2", channel=CURATORS, message_ts=ts, respond_as="outsider"
    )
    assert "Only the curators" in reply(standin, "outsider")
    assert suggestion_status(pg_url, REST) == ["pending"] and not standin.of("chat.update")

    a.click(
        "curate_approve", sid, user="UCUR", channel=CURATORS, message_ts=ts, respond_as="curator"
    )
    standin.wait_for("chat.update", lambda c: c.args["ts"] == ts)
    assert "approved by <@UCUR>" in told(standin, "U1", "approved by").args["text"]

    # The other replica's poller merges it (a poll, then
    # a rebuild: seconds, more on a loaded CI): asked
    # until it does, no fixed sleep; the minute is only where the test gives up on a broken bot.
    deadline = time.time() + 60
    for n in range(1, 1000):
        b.command(
            "ask stress testing large reasoning models with multiple problems at once",
            respond_as="ask",
        )
        if (
            "REST: Stress Testing" in reply(standin, "ask", n).split("\n\n")[0]
            or time.time() > deadline
        ):
            break
    assert "REST: Stress Testing" in reply(standin, "ask", n), (
        "replica b never found the approved paper"
    )

    b.command("digest now", channel="CDIG", respond_as="digest")
    digest = standin.wait_for(
        "chat.postMessage", lambda c: c.args["channel"] == "CDIG", timeout=15
    )[0]
    body = text_of(blocks_of(digest))
    assert (
        body.count("REST: Stress Testing") == 1
        and "suggested by <@U1>, approved by <@UCUR>" in body
    )
    reply(standin, "digest")
    a.command("digest now", channel="CDIG", respond_as="digest2")
    assert "Nothing new" in reply(standin, "digest2")

    b.command(f"suggest {REST}", user="U3", channel="C1", respond_as="again")
    # Replica b has merged the paper (asked above), so it says where the paper is in the catalog.
    said = reply(standin, "again")
    assert "REST: Stress Testing" in said and "is already in the catalog as " in said, said
    assert len(standin.of("chat.postMessage")) == 2  # the card and the digest: nothing more


def test_reject_with_a_reason_is_final_also_for_a_late_approve(replicas, standin, pg_url):
    a, b = replicas("a"), replicas("b")
    paper = "2412.16620"  # "A Large-scale Empirical Study on Fine-tuning Large Language Models ..."
    a.command(f"suggest 10.48550/arXiv.{paper}", user="U1", channel="C1", respond_as="suggest")
    reply(standin, "suggest")
    posted = card(standin)
    sid, ts = buttons(posted)["curate_reject"]["value"], card_ts(standin, posted)
    b.click("curate_reject", sid, user="UCUR", channel=CURATORS, message_ts=ts)
    opened = standin.wait_for("views.open")[0]
    view = (
        json.loads(opened.args["view"])
        if isinstance(opened.args["view"], str)
        else opened.args["view"]
    )
    assert view["callback_id"] == "curate_reject_view" and view["private_metadata"] == sid
    b.submit_view(
        "curate_reject_view",
        sid,
        {"reason": {"value": {"type": "plain_text_input", "value": "fine-tuning, not RL"}}},
        user="UCUR",
    )
    standin.wait_for("chat.update", lambda c: c.args["ts"] == ts)
    assert "fine-tuning, not RL" in told(standin, "U1", "rejected by <@UCUR>").args["text"]
    a.click("curate_approve", sid, user="UCUR2", channel=CURATORS, message_ts=ts, respond_as="late")
    assert "already rejected" in reply(standin, "late")
    a.command(f"suggest {paper}", user="U2", channel="C1", respond_as="again")
    again = reply(standin, "again")
    assert "rejected by <@UCUR>" in again and "fine-tuning, not RL" in again
    assert suggestion_status(pg_url, paper) == ["rejected"] and len(card_calls(standin)) == 1


def card_calls(standin):
    return [c for c in standin.of("chat.postMessage") if c.args["channel"] == CURATORS]


def test_arxiv_down_keeps_the_suggestion_and_it_lands_when_arxiv_is_back(
    replicas, standin, arxiv, pg_url
):
    a, b = replicas("a"), replicas("b")
    paper = "2501.17461"  # "AugmenTest: Enhancing Tests with LLM-Driven Oracles"
    arxiv.down = True
    a.command(f"suggest {paper}", user="U1", channel="C1", respond_as="suggest")
    assert "arXiv is not answering" in reply(standin, "suggest")
    assert suggestion_status(pg_url, paper) == ["waiting"] and not card_calls(standin)
    arxiv.wait_for_request(
        paper, count=3
    )  # the suggestion asked twice (a try and a retry); a replica tried again
    arxiv.down = False
    posted = card(standin)
    assert "AugmenTest" in text_of(blocks_of(posted))
    told(standin, "U1", "arXiv is answering again")
    standin.settle(quiet=1.5)
    assert len(card_calls(standin)) == 1, "two replicas retried; one card"
    sid, ts = buttons(posted)["curate_edit"]["value"], card_ts(standin, posted)
    b.click("curate_edit", sid, user="UCUR", channel=CURATORS, message_ts=ts)
    standin.wait_for("views.open")
    values = {
        "stages": {
            "value": {"type": "multi_static_select", "selected_options": [{"value": "evaluation"}]}
        },
        "summary": {
            "value": {"type": "plain_text_input", "value": "LLM-written test oracles, scored."}
        },
        "facts": {
            "value": {"type": "plain_text_input", "value": "Oracles from an LLM\nChecked on Java"}
        },
    }
    b.submit_view("curate_edit_view", sid, values, user="UCUR")
    standin.wait_for("chat.update", lambda c: c.args["ts"] == ts)
    state = StateStore(pg_url)
    try:
        added = json.loads(state.curation.additions("live")[0].data)
    finally:
        state.close()
    assert (
        added["stages"] == ["evaluation"]
        and added["summary"] == "LLM-written test oracles, scored."
    )
    assert added["facts"] == ["Oracles from an LLM", "Checked on Java"] and added["arxiv"] == paper


def test_a_title_with_markup_and_a_huge_abstract_reach_the_card_escaped_and_capped(
    replicas, standin, arxiv
):
    arxiv.variant(
        REST,
        "2512.90003",
        title="<!channel> *Free* <https://evil.example|click here> RL",
        abstract="reward hacking " * 350_000,
    )
    a = replicas("a")
    a.command("suggest 2512.90003", user="U1", channel="C1", respond_as="suggest")
    thanks = reply(
        standin, "suggest"
    )  # the title, escaped, beside a real link to the curators' channel
    assert (
        "<!channel>" not in thanks and "&lt;!channel&gt;" in thanks and f"<#{CURATORS}>" in thanks
    )
    posted = card(standin)
    raw = json.dumps(blocks_of(posted))
    assert (
        "<!channel>" not in raw and "<https://evil.example" not in raw and "&lt;!channel&gt;" in raw
    )
    assert len(raw) < 12_000


def test_the_weekly_scan_posts_the_best_new_papers_once_across_replicas_and_never_a_rejected_one(
    replicas, standin, pg_url, arxiv
):
    state = StateStore(pg_url)
    rejected = state.curation.suggest(
        TEAM, "2412.16620", "U1", "C1", "pending"
    )  # the scan's best match
    state.curation.decide(rejected.id, "rejected", "UCUR", "fine-tuning, not RL")
    state.close()
    due = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=2)
    schedule = due.strftime("%a %H:%M").lower()
    replicas(
        "a", RLMAP_SCOUT_TOP="3", RLMAP_SCOUT_SCHEDULE=schedule
    )  # both catch the slot up at start
    replicas("b", RLMAP_SCOUT_TOP="3", RLMAP_SCOUT_SCHEDULE=schedule)
    card(standin, count=3)
    standin.settle(quiet=1.5)
    posted = card_calls(standin)
    assert len(posted) == 3, "one replica posts the top three, once"
    shown = [text_of(blocks_of(c)) for c in posted]
    assert all("Suggested by the weekly scan" in s for s in shown)
    assert not any("A Large-scale Empirical Study on Fine-tuning" in s for s in shown), (
        "a rejected paper came back"
    )
    searches = [q for q in arxiv.requests if q.get("search_query")]
    assert len(searches) == 1 and "cat:cs.LG" in searches[0]["search_query"]


# -- in process: the commands around the flow
#  ----------------------------------------------------------
@pytest.fixture
def cbot(standin, built_db, tmp_path, arxiv):
    from support.bot import start_bot

    running = start_bot(
        standin,
        built_db,
        tmp_path / "state.db",
        rlmap_arxiv_url=arxiv.url,
        rlmap_arxiv_delay_seconds=0,
        rlmap_curators="UCUR",
        rlmap_scout_top=0,
    )
    yield running
    running.stop()


def test_app_home_and_help_show_the_curation_commands(cbot, standin):
    cbot.slack.event({"type": "app_home_opened", "user": "U1", "tab": "home"})
    view = standin.wait_for("views.publish")[0].args["view"]
    text = json.dumps(view)
    assert (
        "/rlmap suggest ARXIV" in text
        and "/rlmap curate here" in text
        and "/rlmap kb additions" in text
    )


def test_without_a_curators_channel_a_suggestion_says_how_to_set_one_and_an_admin_sets_it(
    cbot, standin
):
    cbot.slack.command(f"suggest {REST}", user="U1", respond_as="nochan")
    assert "RLMAP_CURATOR_CHANNEL" in reply(standin, "nochan")
    cbot.slack.command("curate here", user="U1", channel="CX", respond_as="notadmin")
    assert "Only" in reply(standin, "notadmin") and "admins" in reply(standin, "notadmin")
    cbot.slack.command("curate here", user="UADMIN", channel="CX", respond_as="admin")
    assert "curators' channel" in reply(standin, "admin")
    cbot.slack.event(
        mention("60.1", f"suggest <https://arxiv.org/abs/{REST}|arxiv.org/abs/{REST}>")
    )
    posted = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "CX")[0]
    assert "REST: Stress Testing" in text_of(blocks_of(posted))
    thanks = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "C1")[0]
    assert "with the curators in <#CX>" in thanks.args["text"]


def test_additions_are_listed_and_removed_by_curators_only(cbot, standin):
    cbot.slack.command("curate here", user="UADMIN", channel="CX", respond_as="admin")
    reply(standin, "admin")
    cbot.slack.command(f"suggest {REST}", user="U1", respond_as="s")
    reply(standin, "s")
    posted = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == "CX")[0]
    cbot.slack.click(
        "curate_approve", buttons(posted)["curate_approve"]["value"], user="UCUR", channel="CX"
    )
    standin.wait_for("chat.update")
    cbot.slack.command("kb additions list", user="U1", respond_as="no")
    assert "Only the curators" in reply(standin, "no")
    cbot.slack.command("kb additions list", user="UCUR", respond_as="list")
    listed = reply(standin, "list")
    assert "REST: Stress Testing" in listed and "approved by <@UCUR>" in listed
    entry_id = listed.split("`")[1]
    # The card closes first; the rebuild that makes the entry searchable here follows it.
    deadline = time.time() + 60
    while cbot.front.core.get(entry_id) is None and time.time() < deadline:
        time.sleep(0.05)
    assert cbot.front.core.get(entry_id) is not None
    cbot.slack.command(f"kb additions remove {entry_id}", user="UCUR", respond_as="rm")
    assert "Removed" in reply(standin, "rm") and cbot.front.core.get(entry_id) is None


def test_unknown_papers_and_an_unreachable_curators_channel_are_one_private_line(cbot, standin):
    cbot.slack.command("curate here", user="UADMIN", channel="CX", respond_as="admin")
    reply(standin, "admin")
    cbot.slack.command("suggest 2101.99999", user="U1", respond_as="unknown")
    assert "No paper 2101.99999 on arXiv" in reply(standin, "unknown")
    cbot.slack.command("suggest https://example.com/paper.pdf", user="U1", respond_as="bad")
    assert "not on arxiv.org or doi.org" in reply(standin, "bad")
    standin.fail_next("chat.postMessage", "not_in_channel")
    cbot.slack.command(f"suggest {REST}", user="U1", respond_as="noroom")
    assert "can't post in the curators' channel" in reply(standin, "noroom")
    cbot.slack.command(
        f"suggest {REST}", user="U1", respond_as="retry"
    )  # not stuck as "already suggested"
    assert "with the curators" in reply(standin, "retry")


def test_one_click_delivered_to_both_replicas_decides_once(replicas, standin, pg_url):
    a, b = replicas("a"), replicas("b")
    a.command(f"suggest {REST}", user="U1", channel="C1", respond_as="suggest")
    reply(standin, "suggest")
    posted = card(standin)
    sid, ts = buttons(posted)["curate_approve"]["value"], card_ts(standin, posted)
    payload = a.click_payload("curate_approve", sid, user="UCUR", channel=CURATORS, message_ts=ts)
    body = urllib.parse.urlencode({"payload": json.dumps(payload)})
    for replica in (a, b):  # Slack's retry of the same click reaching the other replica
        assert replica._send(body, "application/x-www-form-urlencoded", sign(body))[0] == 200
    standin.wait_for("chat.update", lambda c: c.args["ts"] == ts)
    told(standin, "U1", "approved by")
    standin.settle(quiet=1.5)
    assert len(standin.of("chat.update")) == 1 and len(standin.of("chat.postEphemeral")) == 1
    state = StateStore(pg_url)
    try:
        assert len(state.curation.additions("live")) == 1
    finally:
        state.close()


def test_a_paper_the_catalog_has_is_said_in_slack_without_arxiv(cbot, standin, arxiv):
    # Issue 38: by its id or its name, where it is in the catalog, and arXiv is not asked.
    arxiv.down = True
    cbot.slack.command("suggest 2402.03300", user="U1", respond_as="byid")
    said = reply(standin, "byid")
    assert "already in the catalog as" in said and "deepseekmath-grpo" in said
    assert "on Optimization" in said
    cbot.slack.command("suggest DeepSeekMath", user="U1", respond_as="byname")
    assert "already in the catalog as" in reply(standin, "byname")
