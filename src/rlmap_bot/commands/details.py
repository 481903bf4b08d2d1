"""`details ID`: what a card left out, by the id its Details button carries.

A verdict or alert card says three lines and a few readings; its whole result is kept in the state
store when the card is made (``state.details``), and the card's Details button runs this command to
show it. Hidden: only a button runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.registry import Param, Registry
from rlmap_bot.errors import NotFoundError

if TYPE_CHECKING:
    from rlmap_bot.results.diagnosis import Verdict
    from rlmap_bot.results.runs import RunDiagnosis
    from rlmap_bot.results.watch import Alert

SLACK = frozenset({"slack"})


def register(registry: Registry) -> None:
    registry.command(
        "details",
        "what a verdict or alert card left out: every reading and where it came from",
        Param("id", "the id the card's Details button carries", kind="arg", required=True),
        surfaces=SLACK,
        hidden=True,
    )(details)


def details(ctx: Invocation, id: str) -> RunDiagnosis | Verdict | Alert:
    from rlmap_bot.results.diagnosis import Verdict
    from rlmap_bot.results.runs import RunDiagnosis
    from rlmap_bot.results.watch import Alert
    from rlmap_bot.state.details import DETAILS_KEPT

    kinds: dict[str, type[RunDiagnosis] | type[Verdict] | type[Alert]] = {
        "RunDiagnosis": RunDiagnosis,
        "Verdict": Verdict,
        "Alert": Alert,
    }
    kept = ctx.core.state.details.get(ctx.workspace or ctx.team, id)
    if kept is None or kept[0] not in kinds:
        raise NotFoundError(
            f"these details are no longer kept (a card's are kept {DETAILS_KEPT.days} days)"
        )
    kind, body = kept
    return kinds[kind].model_validate_json(body)
