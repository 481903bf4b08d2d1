"""Tracker credentials in App Home (admins only): which are set for the workspace, never a value,
and the modal that sets or clears one.  Built with ``slack_sdk.models`` (views and blocks)."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    Block,
    InputBlock,
    Option,
    PlainTextInputElement,
    RadioButtonsElement,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from rlmap_bot.slack.blocks.common import button, fit, plain, section
from rlmap_bot.slack.markup import escape, mention

#: The button that opens the form, and the form's callback id.
OPEN_ACTION = "credentials_open"
FORM = "credentials_form"
TITLE = "Tracker credentials"
#: What the form offers, as ``/rlmap credentials`` names it.
TRACKERS = (
    ("wandb", "W&B API key", "WANDB_API_KEY"),
    ("mlflow", "MLflow token", "MLFLOW_TRACKING_TOKEN"),
)


def home_blocks(names: list[tuple[str, str, str]]) -> list[Block]:
    """The App Home section: each tracker's credential set (by whom, when) or not; no value."""
    set_ = {name: (by, at) for name, by, at in names}
    lines = []
    for _, label, name in TRACKERS:
        if name in set_:
            by, at = set_[name]
            lines.append(f"• {escape(label)}: set by {mention(by)} on {escape(at[:10])}")
        else:
            lines.append(f"• {escape(label)}: not set")
    return [
        section(
            f"*{TITLE}*\n" + "\n".join(lines),
            accessory=button("Set or clear", OPEN_ACTION, "open"),
        )
    ]


def _option(value: str, label: str) -> Option:
    return Option(value=value, text=plain(label, 75))


def form_view() -> View:
    """The modal: which tracker, set or clear, and the key (an empty input; never pre-filled)."""
    trackers = [_option(t, label) for t, label, _ in TRACKERS]
    actions = [_option("set", "Set (replaces any stored one)"), _option("clear", "Clear")]
    blocks: list[Block] = [
        InputBlock(
            block_id="tracker",
            label=plain("Tracker"),
            element=StaticSelectElement(
                action_id="tracker", options=trackers, initial_option=trackers[0]
            ),
        ),
        InputBlock(
            block_id="action",
            label=plain("Action"),
            element=RadioButtonsElement(
                action_id="action", options=actions, initial_option=actions[0]
            ),
        ),
        InputBlock(
            block_id="secret",
            label=plain("Key or token (to set)"),
            optional=True,
            element=PlainTextInputElement(action_id="secret"),
            hint=plain("Sealed at rest and never shown again."),
        ),
    ]
    return View(
        type="modal",
        callback_id=FORM,
        title=plain(TITLE, 24),
        submit=plain("Save", 24),
        close=plain("Cancel", 24),
        blocks=blocks,
    )


def result_view(blocks: list[Block]) -> View:
    """What the form turns into once submitted: the command's reply."""
    return View(
        type="modal", title=plain(TITLE, 24), close=plain("Done", 24), blocks=fit(blocks, 100)
    )


def form_values(view: dict) -> dict[str, Any]:
    """The submitted form as the command's arguments (action, tracker, secret)."""
    values = (view.get("state") or {}).get("values") or {}

    def field(block: str) -> dict:
        return (values.get(block) or {}).get(block) or {}

    def chosen(block: str) -> str:
        return str((field(block).get("selected_option") or {}).get("value") or "")

    return {
        "action": chosen("action"),
        "tracker": chosen("tracker"),
        "secret": str(field("secret").get("value") or "") or None,
    }
