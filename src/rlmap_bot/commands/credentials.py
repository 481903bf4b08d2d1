"""``/rlmap credentials``: a workspace's tracker keys, set and cleared by its admins, never shown.

Slack only, as a slash command: its text reaches the bot alone (a mention or a DM would leave the
key in the conversation, so the command refuses there and says to rotate it). The value is sealed
with ``RLMAP_ENCRYPTION_KEY`` before it is stored (state/credentials.py) and never repeated: not in
the reply, a usage error or a log line; the request that carried it is kept sealed while it is
handled (slack/sealing.py). Only the workspace's admins may (slack/admins.py decides who). The
rendering is one plain Notice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.registry import Param, Registry
from rlmap_bot.errors import UsageError

if TYPE_CHECKING:
    from rlmap_bot.crypto import TokenCipher
    from rlmap_bot.results.general import Notice

SLACK = frozenset({"slack"})
#: Who a workspace's admins are, as a refusal says it (slack/admins.py decides).
ADMINS = "(its Slack admins and owners, and anyone RLMAP_ADMINS names for it)"
TRACKERS = {"wandb": "W&B API key", "mlflow": "MLflow tracking token"}


def register(registry: Registry) -> None:
    # No ``choices`` on the tracker: click would repeat
    # a mistyped value, which may be the key itself.
    registry.command(
        "credentials",
        "this workspace's tracker keys: set wandb|mlflow KEY, clear wandb|mlflow, or list (admins)",
        Param("action", "set, clear or list", kind="arg", metavar="[set|clear|list]"),
        Param("tracker", "wandb or mlflow", kind="arg", metavar="[wandb|mlflow]"),
        Param(
            "secret", "the key or token (set only); never shown again", kind="rest", metavar="KEY"
        ),
        surfaces=SLACK,
        strict=True,
        admin=True,
        order=92,
        examples=("credentials list", "credentials clear wandb"),
    )(credentials)


def credentials(
    ctx: Invocation,
    action: str | None = None,
    tracker: str | None = None,
    secret: str | None = None,
) -> Notice:
    from rlmap_bot.results.general import Notice
    from rlmap_bot.runs.sources.access import CREDENTIAL_NAMES

    if not ctx.admin:
        raise UsageError(
            f"Only the admins of this workspace {ADMINS} can set or see tracker credentials."
        )
    action = (action or "list").lower()
    store = ctx.core.state.credentials
    settings = ctx.core.settings
    if action == "list":
        rows = store.names(ctx.team)
        if not rows:
            return Notice(text="No tracker credentials are set for this workspace.")
        unopened: set[str] = set()
        if settings.rlmap_encryption_key is not None:
            unopened = set(store.open_all(ctx.team, _cipher(settings))[1])
        bad = "; it does not open with RLMAP_ENCRYPTION_KEY: set it again"
        said = "; ".join(
            f"{name} (set by {by} on {at[:10]}{bad if name in unopened else ''})"
            for name, by, at in rows
        )
        return Notice(text=f"Set for this workspace: {said}.")
    if action not in ("set", "clear"):
        raise UsageError(
            "Say `credentials set wandb|mlflow KEY`, `credentials clear wandb|mlflow` or "
            "`credentials list`."
        )
    if (tracker or "").lower() not in TRACKERS:
        raise UsageError(
            f"Say which tracker: `credentials {action} wandb` or `credentials {action} mlflow`."
        )
    tracker = (tracker or "").lower()
    name = CREDENTIAL_NAMES[tracker]
    if action == "clear":
        gone = store.clear(ctx.team, name)
        return Notice(
            text=f"Removed this workspace's {TRACKERS[tracker]}."
            if gone
            else f"This workspace had no {TRACKERS[tracker]}."
        )
    if ctx.thread_ts is not None:
        raise UsageError(
            "A key typed in a conversation is seen there: nothing was stored. Delete that message, "
            "rotate the key, and set the new one with the `/rlmap credentials` slash command."
        )
    value = (secret or "").strip()
    if not value or len(value.split()) != 1:
        raise UsageError(
            f"Give the {TRACKERS[tracker]} as one word after `credentials set {tracker}`."
        )
    if settings.rlmap_encryption_key is None:
        raise UsageError(
            "Tracker credentials are sealed at rest: set RLMAP_ENCRYPTION_KEY first (`rlmap-bot "
            "key new` makes one); nothing was stored."
        )
    store.set(ctx.team, name, value, _cipher(settings), ctx.user)
    return Notice(
        text=f"Stored this workspace's {TRACKERS[tracker]}, sealed; it is never shown again."
    )


def _cipher(settings: Any) -> TokenCipher:
    from rlmap_bot.crypto import TokenCipher

    return TokenCipher.from_setting(settings.rlmap_encryption_key.get_secret_value())
