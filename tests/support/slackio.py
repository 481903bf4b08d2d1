"""Typing `/rlmap`, reading what the bot sent to the stand-in, and answering a diagnosis card as a
person would."""

from __future__ import annotations

import json
import time


def slash(bot, standin, text: str, channel: str = "C1", user: str = "U1", timeout=60) -> dict:
    """`/rlmap TEXT`, typed by ``user`` in ``channel``: the arguments of the bot's reply to it."""
    name = f"r{time.time_ns()}"
    bot.slack.command(text, channel=channel, user=user, respond_as=name)
    return standin.wait_for("response_url", lambda c: c.target == name, timeout=timeout)[0].args


def blocks_of(call) -> list[dict]:
    """The blocks a call sent (slack-sdk sends them as JSON text or as a list)."""
    blocks = call.args.get("blocks")
    return json.loads(blocks) if isinstance(blocks, str) else (blocks or [])


def text_of(blocks: list[dict]) -> str:
    out = []
    for block in blocks:
        if isinstance(block.get("text"), dict):
            out.append(block["text"]["text"])
        for element in block.get("elements", []):
            if isinstance(element.get("text"), dict):
                out.append(element["text"]["text"])
            elif isinstance(element.get("text"), str):
                out.append(element["text"])
        if block.get("accessory"):
            out.append(block["accessory"]["text"]["text"])
    return "\n".join(out)


def buttons(call) -> dict[str, dict]:
    return {
        e["action_id"]: e for b in blocks_of(call) if b["type"] == "actions" for e in b["elements"]
    }


def current_card(standin, channel: str, ts: str) -> dict:
    """The card as the channel shows it now (after every chat.update)."""
    return next(m for m in standin.messages[channel] if m["ts"] == ts)


class Card:
    """Reads the question on the card and answers it the way a person would."""

    def __init__(self, bot, standin, channel, ts, thread):
        self.bot, self.standin, self.channel, self.ts, self.thread = (
            bot,
            standin,
            channel,
            ts,
            thread,
        )
        self.typed = 0

    @property
    def blocks(self) -> list[dict]:
        raw = current_card(self.standin, self.channel, self.ts)["blocks"]
        return json.loads(raw) if isinstance(raw, str) else raw

    @property
    def buttons(self) -> dict[str, dict]:
        return {
            e["action_id"]: e for b in self.blocks if b["type"] == "actions" for e in b["elements"]
        }

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
        self.bot.slack.click(
            action_id,
            self.buttons[action_id]["value"],
            user=user,
            channel=self.channel,
            message_ts=self.ts,
            thread_ts=self.thread,
        )
        self._wait_update(before)

    def reply_ts(self) -> str:
        """A fresh message ts in the thread, later than every earlier one (as Slack's are)."""
        self.typed += 1
        seconds, _, micros = self.thread.partition(".")
        return f"{int(seconds) + self.typed}.{micros or '000000'}"

    def type(
        self, text: str, user: str = "U1", expect_update: bool = True, ts: str | None = None
    ) -> None:
        before = self.updates()
        self.bot.slack.event(
            {
                "type": "message",
                "channel_type": "channel",
                "user": user,
                "channel": self.channel,
                "ts": ts or self.reply_ts(),
                "thread_ts": self.thread,
                "text": text,
            }
        )
        if expect_update:
            self._wait_update(before)

    def answer(self, truth: dict) -> None:
        """Click the button labelled with the truth's answer, type numbers that have none, else
        don't know. A person reads the buttons the card shows (a complaint may have left fewer
        than the signal's presets), so the button is found by its label."""
        signal = self.signal
        if signal not in truth:
            return self.click("diag_skip")
        value = truth[signal]
        presets = self.bot.front.core.engine.signals[signal].presets
        label = next((p.label for p in presets if p.value == value), None)
        for action_id, button in self.buttons.items():
            if action_id.startswith("diag_preset_") and button["text"]["text"] == label:
                return self.click(action_id)
        return self.type(str(value))


def start(bot, standin, channel="C1", user="U1") -> Card:
    bot.slack.command("diagnose", user=user, channel=channel, respond_as=f"diag-{channel}")
    root, card = standin.wait_for(
        "chat.postMessage", lambda c: c.args["channel"] == channel, count=2
    )[:2]
    # The card sits in the thread the root message opened
    # (the root's ts is what the stand-in answered).
    roots = {
        m["ts"]
        for m in standin.messages[channel]
        if not m.get("thread_ts") and m["text"] == root.args["text"]
    }
    assert not root.args.get("thread_ts") and card.args["thread_ts"] in roots
    thread = card.args["thread_ts"]
    ts = next(m["ts"] for m in standin.messages[channel] if m.get("thread_ts") == thread)
    return Card(bot, standin, channel, ts, thread)


def metadata_of(call_or_message) -> dict:
    """The Slack message metadata a post carries (the bot
    tags every post: a reply, a digest, a watch alert).
    """
    source = getattr(call_or_message, "args", call_or_message)
    meta = source.get("metadata")
    meta = json.loads(meta) if isinstance(meta, str) else meta
    return meta or {}


def is_watch_alert(call_or_message) -> bool:
    return metadata_of(call_or_message).get("event_type") == "rlmap_watch"


def details_of(bot, standin, call, channel: str = "C1") -> str:
    """Click the Details button of the card a call posted; the text of the modal it opens."""
    [value] = [
        e["value"]
        for b in blocks_of(call)
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == "details_show"
    ]
    before = len(standin.of("views.open"))
    bot.slack.click("details_show", value, channel=channel)
    view = standin.wait_for("views.open", count=before + 1, timeout=30)[-1].args["view"]
    view = json.loads(view) if isinstance(view, str) else view
    return text_of(view["blocks"])
