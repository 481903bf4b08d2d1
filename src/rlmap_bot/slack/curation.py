"""Curation over Slack: candidate cards in the curators' channel, Approve/Edit/Reject, the poller.

Decisions are the core's (:mod:`rlmap_bot.curation.service`), reached through the `curate approve`,
`curate edit` and `curate reject` commands like typed text; this module posts and updates cards,
runs those commands from the buttons and forms, and tells people. Clicks are claimed once like
every other request (slack/claims.py), and each suggestion is decided once (a compare-and-set in
the state store), so a double click, two curators, or two replicas decide it once. A thread on
every replica polls the state store: approved additions are merged into this replica's store within
``RLMAP_ADDITIONS_POLL_SECONDS``, and suggestions kept while arXiv was down are tried again.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from apscheduler.triggers.cron import CronTrigger
from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rlmap_bot.core import Core
from rlmap_bot.curation.scout import Scout, last_due
from rlmap_bot.curation.service import CardNotPosted, Curation
from rlmap_bot.errors import RlmapError, UnavailableError
from rlmap_bot.jobs import Scheduler
from rlmap_bot.jobs.ticker import Ticker
from rlmap_bot.knowledge.schema import STAGE_IDS
from rlmap_bot.parts import Part, line
from rlmap_bot.results.curation import Candidate
from rlmap_bot.settings import Settings, parse_weekly
from rlmap_bot.slack.blocks import curate as blocks
from rlmap_bot.slack.blocks.common import fallback, to_dicts
from rlmap_bot.slack.clicks import CardReply, FormReply
from rlmap_bot.slack.dispatch import SlackCommands
from rlmap_bot.slack.markup import mrkdwn
from rlmap_bot.slack.posting import CANNOT_POST
from rlmap_bot.wording import sentence

log = logging.getLogger(__name__)
CATCH_UP = dt.timedelta(
    hours=12
)  # as digests: a scan missed by a restart is run if it is this recent


@dataclass(frozen=True)
class _Weekly:
    id: str = "weekly"


class ScoutJobs:
    """The weekly scan as a kind of timed job (:mod:`rlmap_bot.jobs`):
    one cron job, caught up within 12 hours.
    """

    name = "scout"
    misfire_grace: dt.timedelta | None = CATCH_UP

    def __init__(self, curation: SlackCuration):
        self.curation, self.schedule = curation, curation.settings.rlmap_scout_schedule

    def load(self) -> list[_Weekly]:
        return [_Weekly()]

    def trigger(self, item: _Weekly) -> CronTrigger:
        day, hour, minute = parse_weekly(self.schedule)
        return CronTrigger(day_of_week=day, hour=hour, minute=minute, timezone=dt.UTC)

    def due(self, item: _Weekly) -> dt.datetime:
        return last_due(self.schedule, dt.datetime.now(dt.UTC))

    def missed(self, items: Sequence[_Weekly], now: dt.datetime | None) -> dict[str, dt.datetime]:
        now = now or dt.datetime.now(dt.UTC)
        due = last_due(self.schedule, now)
        return {"weekly": due} if now - due <= CATCH_UP else {}

    def fire(self, item_id: str, due: dt.datetime) -> object:
        return self.curation.scan(due)


class SlackCards:
    """The curation flow's front-end: cards with chat.postMessage and chat.update, private notes."""

    def __init__(self, client_for: Callable[[str], WebClient]):
        self.client_for = client_for

    def post_card(
        self, team: str, channel: str, suggestion_id: str, candidate: Candidate, suggested_by: str
    ) -> str:
        try:
            response = self.client_for(team).chat_postMessage(
                channel=channel,
                text=fallback(blocks.card_text(candidate)),
                blocks=to_dicts(blocks.card_blocks(suggestion_id, candidate, suggested_by)),
                metadata={
                    "event_type": "rlmap_suggestion",
                    "event_payload": {"suggestion": suggestion_id},
                },
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as exc:  # Slack answered: the card was not posted
            code = str(exc.response.get("error", "error"))
            hint = CANNOT_POST.get(code, f"Slack said {code}")
            raise CardNotPosted(
                f"I can't post in the curators' channel ({channel}): {hint}"
            ) from None
        return str(response["ts"])

    def close_card(
        self, team: str, channel: str, ts: str, candidate: Candidate, outcome: list[Part]
    ) -> None:
        try:
            self.client_for(team).chat_update(
                channel=channel,
                ts=ts,
                text=fallback(blocks.card_text(candidate)),
                blocks=to_dicts(blocks.closed_blocks(candidate, mrkdwn(outcome))),
            )
        except SlackApiError as exc:  # the decision stands; only the card stays as it was
            log.info("could not update the card %s: %s", ts, exc.response.get("error"))

    def tell(self, team: str, channel: str, user: str, text: list[Part]) -> None:
        try:
            self.client_for(team).chat_postEphemeral(channel=channel, user=user, text=mrkdwn(text))
        except SlackApiError as exc:
            log.info("could not tell %s privately: %s", user, exc.response.get("error"))


class SlackCuration:
    """Listeners for the card's buttons and forms, and the poller thread."""

    def __init__(self, core: Core, settings: Settings, client_for: Callable[[str], WebClient]):
        self.core = core
        self.settings = settings
        self.cards = SlackCards(client_for)
        self.flow = Curation(core, settings=settings)
        self.scout = Scout(self.flow)
        self.poll_every = settings.rlmap_additions_poll_seconds
        # Two loops, so a failing rebuild never holds up the retries (or the other way round).
        self._tickers = (
            Ticker("rlmap-additions", self.poll_every, self.merge_additions),
            Ticker("rlmap-suggestions", self.poll_every, self.retry_suggestions),
        )

    # -- the pollers (each tick's errors are logged by the ticker) ------------------------------
    def start(self) -> None:
        for ticker in self._tickers:
            ticker.start()

    def stop(self) -> None:
        for ticker in self._tickers:
            ticker.stop()

    def merge_additions(self) -> None:
        """Merge new additions into this replica's store (a failed rebuild keeps the old store)."""
        if self.core.sync_additions():
            log.info("approved additions changed: the knowledge store was rebuilt")

    def retry_suggestions(self) -> None:
        """Try arXiv again for kept suggestions that are due."""
        self.flow.retry_due(self.cards)

    # -- the weekly scan ---------------------------------------------------------------------------
    def start_scout(self, jobs: Scheduler, now: dt.datetime | None = None) -> bool:
        """Register the weekly scan with the bot's scheduler;
        a slot missed while down (within 12 hours) is run.

        Returns whether a missed slot is caught up (whichever replica claims it first posts).
        """
        if self.settings.rlmap_scout_top == 0:
            return False
        return bool(jobs.register(ScoutJobs(self), now=now))

    def scan(self, due: dt.datetime | None = None) -> int:
        """One scan of the slot ``due`` falls in, to every
        curators' channel; claimed once across replicas.
        """
        now = dt.datetime.now(dt.UTC)
        due = due or last_due(self.settings.rlmap_scout_schedule, now)
        targets = self.core.state.curation.channels()
        default = self.settings.rlmap_curator_channel
        if default and not targets:
            targets = [(self._default_team(), default)]
        try:
            return self.scout.scan(
                "scout:" + due.astimezone(dt.UTC).isoformat(timespec="minutes"), targets, self.cards
            )
        except UnavailableError:
            log.warning("the weekly scan did not run: a service it needs is not answering")
        except Exception:  # noqa: BLE001 - the scheduler must outlive one failed scan
            log.exception("the weekly scan failed")
        return 0

    def _default_team(self) -> str:
        """The one workspace of a bot-token install (the
        scan's posts need a team for their client).
        """
        try:
            return str(self.cards.client_for("").auth_test().get("team_id") or "")
        except (SlackApiError, LookupError):
            return ""

    # -- listeners ---------------------------------------------------------------------------------
    def register(self, app: App, after_ack: Callable, commands: SlackCommands) -> None:
        """The card's buttons and the forms run the `curate approve`, `curate edit` and
        `curate reject` commands through the one door of typed text (``commands.press``)."""

        def click(
            command: str,
            ack: Callable,
            action: dict,
            body: dict,
            client: WebClient,
            respond: Callable,
            context: Any,
        ) -> None:
            ack()
            with after_ack(context, respond):
                commands.press(
                    client,
                    command,
                    {"suggestion": action.get("value", "")},
                    team=_team(body),
                    channel=_channel(body),
                    user=body.get("user", {}).get("id", ""),
                    reply=CardReply(client, body, respond, commands.threads),
                )

        @app.action(blocks.APPROVE)
        def on_approve(
            ack: Callable,
            action: dict,
            body: dict,
            client: WebClient,
            respond: Callable,
            context: Any,
        ) -> None:
            click("curate approve", ack, action, body, client, respond, context)

        @app.action(blocks.EDIT)
        def on_edit(
            ack: Callable,
            action: dict,
            body: dict,
            client: WebClient,
            respond: Callable,
            context: Any,
        ) -> None:
            click("curate edit", ack, action, body, client, respond, context)

        @app.action(blocks.REJECT)
        def on_reject(
            ack: Callable,
            action: dict,
            body: dict,
            client: WebClient,
            respond: Callable,
            context: Any,
        ) -> None:
            click("curate reject", ack, action, body, client, respond, context)

        @app.view(blocks.EDIT_VIEW)
        def on_edit_submitted(ack: Callable, body: dict, view: dict, client: WebClient) -> None:
            values = blocks.form_values(view)
            stages = [s for s in values.get("stages") or [] if s in STAGE_IDS]
            if not stages:
                ack(response_action="errors", errors={"stages": "Choose at least one stage."})
                return
            ack()
            facts = [line for line in str(values.get("facts") or "").splitlines() if line.strip()]
            args = {
                "suggestion": view.get("private_metadata", ""),
                "stage": stages,
                "subtopic": list(values.get("subtopics") or []),
                "summary": str(values.get("summary") or "") or None,
                "fact": facts,
            }
            self._submit(commands, client, body, "curate approve", args)

        @app.view(blocks.REJECT_VIEW)
        def on_reject_submitted(ack: Callable, body: dict, view: dict, client: WebClient) -> None:
            reason = str(blocks.form_values(view).get("reason") or "").strip()
            if not reason:
                ack(response_action="errors", errors={"reason": "Say why, for the suggester."})
                return
            ack()
            args = {"suggestion": view.get("private_metadata", ""), "reason": reason}
            self._submit(commands, client, body, "curate reject", args)

    def _submit(
        self,
        commands: SlackCommands,
        client: WebClient,
        body: dict,
        command: str,
        args: dict[str, Any],
    ) -> None:
        """A form's command after its ack; a refusal is told privately in the curators' channel."""
        user, team = body.get("user", {}).get("id", ""), _team(body)

        def tell(exc: RlmapError) -> None:
            channel = self.flow.curator_channel(team)
            if channel:
                self.cards.tell(team, channel, user, line(sentence(exc)))
            log.info("a curation form was refused: %s", exc)

        reply = FormReply(client, user, commands.threads, tell)
        try:
            commands.press(client, command, args, team=team, channel="", user=user, reply=reply)
        except UnavailableError as exc:
            log.info("a curation form was refused: %s", exc)
        except Exception:  # noqa: BLE001 - logged; a form has no reply URL to say more on
            log.exception("a curation form failed")


def _team(body: dict) -> str:
    return body.get("team", {}).get("id") or body.get("user", {}).get("team_id", "")


def _channel(body: dict) -> str:
    return body.get("channel", {}).get("id") or body.get("container", {}).get("channel_id") or ""
