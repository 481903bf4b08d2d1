"""A whole diagnosis in a Slack thread: buttons, typed numbers, the card updated in place, the verdict."""

from __future__ import annotations

import json

from slack_standin import BOT_USER
from slackbot import bot, standin, start_bot  # noqa: F401 - fixtures
from test_slack_ask import text_of

TRUTH = {  # a run whose reward model is being over-optimised
    "proxy_reward_trend": "rising", "heldout_score_trend": "falling", "reward_audit_error_rate": 0.3,
    "kl_to_reference": 40, "length_growth": 2.0, "entropy_trend": "stable",
}


def blocks(call) -> list[dict]:
    raw = call.args.get("blocks")
    return json.loads(raw) if isinstance(raw, str) else (raw or [])


def buttons(call) -> dict[str, dict]:
    return {e["action_id"]: e for b in blocks(call) if b["type"] == "actions" for e in b["elements"]}


def current_card(standin, channel: str, ts: str) -> dict:
    """The card as the channel shows it now (after every chat.update)."""
    return next(m for m in standin.messages[channel] if m["ts"] == ts)


class Card:
    """Reads the question on the card and answers it the way a person would."""

    def __init__(self, bot, standin, channel, ts, thread):
        self.bot, self.standin, self.channel, self.ts, self.thread = bot, standin, channel, ts, thread

    @property
    def blocks(self) -> list[dict]:
        raw = current_card(self.standin, self.channel, self.ts)["blocks"]
        return json.loads(raw) if isinstance(raw, str) else raw

    @property
    def buttons(self) -> dict[str, dict]:
        return {e["action_id"]: e for b in self.blocks if b["type"] == "actions" for e in b["elements"]}

    @property
    def signal(self) -> str | None:
        for b in self.buttons.values():
            if b["action_id"] == "diag_skip":
                return json.loads(b["value"])["q"]
        return None

    def updates(self) -> int:
        return len([c for c in self.standin.of("chat.update") if c.args["ts"] == self.ts])

    def _wait_update(self, before: int) -> None:
        self.standin.wait_for("chat.update", lambda c: c.args["ts"] == self.ts, count=before + 1)

    def click(self, action_id: str, user: str = "U1") -> None:
        before = self.updates()
        self.bot.slack.click(action_id, self.buttons[action_id]["value"], user=user, channel=self.channel,
                             message_ts=self.ts, thread_ts=self.thread)
        self._wait_update(before)

    def type(self, text: str, user: str = "U1", expect_update: bool = True) -> None:
        before = self.updates()
        self.bot.slack.event({"type": "message", "channel_type": "channel", "user": user, "channel": self.channel,
                              "ts": f"{self.thread}9", "thread_ts": self.thread, "text": text})
        if expect_update:
            self._wait_update(before)

    def answer(self, truth: dict) -> None:
        """Click the preset that matches the truth, type numbers that have none, else don't know."""
        signal = self.signal
        if signal not in truth:
            return self.click("diag_skip")
        value = truth[signal]
        presets = self.bot.front.core.engine.signals[signal].presets
        for i, preset in enumerate(presets):
            if preset.value == value:
                return self.click(f"diag_preset_{i}")
        return self.type(str(value))


def start(bot, standin, channel="C1", user="U1") -> Card:
    bot.slack.command("diagnose", user=user, channel=channel, respond_as=f"diag-{channel}")
    root, card = standin.wait_for("chat.postMessage", lambda c: c.args["channel"] == channel, count=2)[:2]
    assert card.args["thread_ts"] == root.args.get("ts") or card.args["thread_ts"]
    thread = card.args["thread_ts"]
    ts = next(m["ts"] for m in standin.messages[channel] if m.get("thread_ts") == thread)
    return Card(bot, standin, channel, ts, thread)


def test_slash_diagnose_opens_a_thread_with_the_first_question(bot, standin):
    card = start(bot, standin)
    root = standin.of("chat.postMessage")[0]
    assert root.args["channel"] == "C1" and not root.args.get("thread_ts")
    assert "started a diagnosis" in text_of(blocks(root))
    assert card.thread == standin.messages["C1"][0]["ts"]
    assert {"diag_skip", "diag_stop"} <= set(card.buttons)
    assert "Diagnosis · question 1" in json.dumps(card.blocks, ensure_ascii=False)
    assert "answer in the thread" in standin.wait_for("response_url")[0].args["text"]


def test_full_diagnosis_by_clicks_and_typed_numbers(bot, standin):
    card = start(bot, standin)
    seen = []
    for _ in range(15):
        if card.signal is None:
            break
        seen.append(card.signal)
        card.answer(TRUTH)
    assert card.signal is None, f"still asking after {seen}"
    text = text_of(card.blocks)
    assert "Verdict: Reward quality binds" in json.dumps(card.blocks, ensure_ascii=False)
    assert "Evidence" in text and "Check next" in text or "Read" in text
    read = [b for b in card.buttons.values() if b["action_id"].startswith("entry_show")]
    assert "reward-model-overoptimization" in {b["value"] for b in read}
    # One card, updated in place: no new messages in the thread apart from it.
    thread_posts = [c for c in standin.of("chat.postMessage") if c.args.get("thread_ts") == card.thread]
    assert len(thread_posts) == 1 and card.updates() == len(seen)


def test_typed_values_bad_values_back_and_dont_know(bot, standin):
    card = start(bot, standin)
    first = card.signal
    card.type("certainly not a number", expect_update=False)
    hint = standin.wait_for("chat.postEphemeral")[0]
    assert hint.args["user"] == "U1" and hint.args["thread_ts"] == card.thread
    assert card.signal == first and card.updates() == 0
    card.type("?")
    second = card.signal
    assert second != first and "skipped" in json.dumps(card.blocks, ensure_ascii=False)
    card.click("diag_back")
    assert card.signal == first
    card.click("diag_stop")
    assert card.signal is None and "Verdict" in json.dumps(card.blocks, ensure_ascii=False)
    # A click on the finished card's old buttons is refused politely.
    bot.slack.click("diag_skip", json.dumps({"s": "nope", "q": first, "v": ""}), channel=card.channel,
                    message_ts=card.ts, respond_as="stale")
    assert "no longer exists" in standin.wait_for("response_url", lambda c: c.target == "stale")[0].args["text"]


def test_several_diagnoses_at_once_in_different_threads(bot, standin):
    a = start(bot, standin, channel="C1", user="U1")
    b = start(bot, standin, channel="C2", user="U2")
    a.click("diag_skip")
    b.click("diag_stop", user="U2")
    assert b.signal is None and a.signal is not None
    sessions = bot.front.core.state.list_sessions(status=None)
    assert {(s.channel, s.status) for s in sessions} == {("C1", "open"), ("C2", "stopped")}


def test_diagnosis_survives_a_restart(standin, built_db, tmp_path):
    state = tmp_path / "state.db"
    first = start_bot(standin, built_db, state)
    card = start(first, standin)
    card.answer(TRUTH)
    asked = card.signal
    first.stop()
    second = start_bot(standin, built_db, state)
    try:
        card.bot = second
        assert card.signal == asked
        for _ in range(15):
            if card.signal is None:
                break
            card.answer(TRUTH)
        assert "Verdict: Reward quality binds" in json.dumps(card.blocks, ensure_ascii=False)
    finally:
        second.stop()


def test_diagnose_in_a_mention_runs_under_the_mention(bot, standin):
    bot.slack.event({"type": "app_mention", "user": "U3", "channel": "C3", "ts": "900.1",
                     "text": f"<@{BOT_USER}> diagnose"})
    call = standin.wait_for("chat.postMessage")[0]
    assert call.args["thread_ts"] == "900.1"
    assert "Diagnosis · question 1" in json.dumps(blocks(call), ensure_ascii=False)
    session = bot.front.core.state.find_session("T0001", "C3", "900.1")
    assert session is not None and session.user == "U3"
