"""The Bolt app: Slack events, commands and clicks in; core calls; Block Kit out.

Nothing here decides anything about RL: listeners translate a Slack payload to
a core call (ask, card, diagnosis flow) and the result to blocks.  Every
listener acks first and works after (Bolt runs listeners on a thread pool, so
the ack reaches Slack within its 3 seconds whatever the work costs).
"""

from __future__ import annotations

import logging
import re
from typing import Any, Callable

from slack_bolt import App, BoltResponse
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

from rlmap_bot.core import Core
from rlmap_bot.diagnosis.flow import FlowError, Step, control_word
from rlmap_bot.slack import blocks as bk
from rlmap_bot.slack.commands import Command, CommandError, parse_command
from rlmap_bot.slack.digests import SlackDigests
from rlmap_bot.slack.hints import CANNOT_POST
from rlmap_bot.slack.settings import SlackSettings
from rlmap_bot.state.store import ConflictError

log = logging.getLogger(__name__)

MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")


def make_client(settings: SlackSettings) -> WebClient:
    """A Web API client pointed at ``SLACK_API_URL`` that waits out 429s instead of losing calls."""
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    return WebClient(
        token=token,
        base_url=settings.slack_api_url,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=2),
            RateLimitErrorRetryHandler(max_retry_count=settings.rlmap_rate_limit_retries),
        ],
    )


def cannot_post_hint(exc: SlackApiError) -> str | None:
    return CANNOT_POST.get(str(exc.response.get("error", "")))


class SlackFrontEnd:
    """Holds the core and the Bolt app; one instance per process."""

    def __init__(self, core: Core, settings: SlackSettings):
        self.core = core
        self.settings = settings
        secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
        self.installations = None
        oauth_settings = None
        if settings.oauth:
            from slack_bolt.oauth.oauth_settings import OAuthSettings

            from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
            from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

            # Installations live in the state database, in slack-sdk's own tables.
            self.installations = SQLAlchemyInstallationStore(client_id=settings.slack_client_id, engine=core.state.engine)
            self.installations.create_tables()
            oauth_states = SQLAlchemyOAuthStateStore(expiration_seconds=600, engine=core.state.engine)
            oauth_states.metadata.create_all(core.state.engine)
            oauth_settings = OAuthSettings(
                client_id=settings.slack_client_id,
                client_secret=settings.slack_client_secret.get_secret_value() if settings.slack_client_secret else None,
                scopes=[s.strip() for s in settings.slack_scopes.split(",") if s.strip()],
                redirect_uri=settings.slack_redirect_uri,
                installation_store=self.installations,
                state_store=oauth_states,
            )
        self.app = App(
            client=make_client(settings),
            signing_secret=secret,
            process_before_response=False,
            oauth_settings=oauth_settings,
            logger=logging.getLogger("rlmap_bot.slack.bolt"),
        )
        self.digests = SlackDigests(core, self.client_for)
        self._register()

    def client_for(self, team: str) -> WebClient:
        """The Web API client for a workspace: its installation's token, or the one bot token."""
        if self.installations is None:
            return self.app.client
        bot = self.installations.find_bot(enterprise_id=None, team_id=team)
        if bot is None:
            raise LookupError(f"workspace {team} has no installation")
        client = make_client(self.settings)
        client.token = bot.bot_token
        return client

    # -- wiring -------------------------------------------------------------------------------
    def _register(self) -> None:
        app = self.app
        app.middleware(self._dedupe_events)
        app.event("app_mention")(self.on_mention)
        app.event("message")(self.on_message)
        app.event("app_home_opened")(self.on_home)
        app.command("/rlmap")(self.on_command)
        app.action(re.compile(r"^entry_show(_\d+)?$"))(self.on_show)
        app.action("entry_more")(self.on_show_more)
        app.action(re.compile(r"^entry_related(_\d+)?$"))(self.on_related)
        app.action("answer_share")(self.on_share)
        app.action("stages_show")(self.on_stages_button)
        app.action("help_show")(self.on_help_button)
        app.action(re.compile(r"^diag_(preset_\d+|skip|back|stop)$"))(self.on_diagnosis_click)
        app.event("app_uninstalled")(self.on_uninstalled)
        app.event("tokens_revoked")(self.on_tokens_revoked)
        app.error(self.on_error)

    def _dedupe_events(self, body: dict, next: Callable[[], Any]) -> BoltResponse | None:
        """Answer each event once: Slack's retries (and other replicas) find the id claimed."""
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        if event_id and not self.core.state.claim_event(event_id, body.get("team_id", "")):
            log.info("event %s already handled; acking the retry without acting", event_id)
            return BoltResponse(status=200, body="")
        return next()

    def on_error(self, error: Exception, body: dict, logger: logging.Logger, respond: Callable | None = None) -> None:
        # Tokens are never in request bodies or in our exceptions' messages, so the trace is safe to log.
        logger.error("listener failed: %s: %s", type(error).__name__, error, exc_info=error)
        if respond is not None and body.get("response_url"):
            try:  # never silence: the person who clicked or typed hears that it failed
                respond(response_type="ephemeral", replace_original=False,
                        text="Something went wrong on my side; it has been logged. Please try again.")
            except Exception:  # noqa: BLE001 - the reply is best effort
                logger.info("could not tell the user about the failure")

    # -- events -------------------------------------------------------------------------------
    def on_mention(self, event: dict, client: WebClient, context: dict) -> None:
        if event.get("bot_id"):
            return
        text = bk.from_slack(MENTION.sub("", event.get("text", "")))
        team = context.get("team_id") or event.get("team") or ""
        channel, user = event["channel"], event.get("user", "")
        thread = event.get("thread_ts") or event["ts"]
        if text.lower().split()[:1] == ["diagnose"]:
            self.start_diagnosis(client, team, channel, user, thread_ts=thread)
            return
        if event.get("thread_ts") and self.typed_answer(client, team, channel, event["thread_ts"], user, text):
            return
        self.post_answer(client, channel, user, text, thread_ts=thread)

    def on_message(self, event: dict, client: WebClient, context: dict) -> None:
        if event.get("bot_id") or event.get("subtype"):
            return  # other bots, edits, joins: never answered
        raw_text = event.get("text") or ""
        text = bk.from_slack(raw_text)
        team = context.get("team_id") or event.get("team") or ""
        channel, user = event["channel"], event.get("user", "")
        bot_user = context.get("bot_user_id")
        if event.get("channel_type") == "im":
            if event.get("thread_ts") and self.typed_answer(client, team, channel, event["thread_ts"], user, text):
                return
            if text.lower().split()[:1] == ["diagnose"]:
                self.start_diagnosis(client, team, channel, user, thread_ts=event["ts"])
                return
            self.post_answer(client, channel, user, text, thread_ts=event.get("thread_ts"))
            return
        if bot_user and f"<@{bot_user}" in raw_text:
            return  # the app_mention event handles it
        if event.get("thread_ts"):
            self.typed_answer(client, team, channel, event["thread_ts"], user, text)

    def on_home(self, event: dict, client: WebClient, context: dict) -> None:
        if event.get("tab", "home") != "home":
            return
        user = event["user"]
        team = context.get("team_id") or ""
        store = self.core.store
        newest = sorted(store.history(), key=lambda s: (s.entry.added, s.first_seen, s.entry.id), reverse=True)
        newest = [(s.entry, s.entry.added.isoformat()) for s in newest if s.entry.kind in {"paper", "topic", "stage"}][:8]
        sessions = self.core.flow.open_sessions(team=team, user=user)
        client.views_publish(user_id=user, view=bk.home_view(self.core.stages(), newest, sessions))

    def on_uninstalled(self, body: dict) -> None:
        """The workspace removed the app: forget its tokens, subscriptions, sessions and ledger."""
        team = body.get("team_id", "")
        if self.installations is not None:
            self.installations.delete_all(enterprise_id=body.get("enterprise_id"), team_id=team)
        removed = self.core.state.forget_team(team)
        self.digests.resync()
        log.info("workspace %s uninstalled the app; removed %s", team, removed)

    def on_tokens_revoked(self, event: dict, body: dict) -> None:
        if (event.get("tokens") or {}).get("bot"):
            self.on_uninstalled(body)
        elif self.installations is not None:
            for user in (event.get("tokens") or {}).get("oauth", []):
                self.installations.delete_installation(enterprise_id=body.get("enterprise_id"),
                                                       team_id=body.get("team_id"), user_id=user)

    # -- the slash command --------------------------------------------------------------------
    def on_command(self, ack: Callable, command: dict, respond: Callable, client: WebClient) -> None:
        ack()
        try:
            parsed: Command = parse_command(bk.from_slack(command.get("text", "")))
        except CommandError as exc:
            respond(response_type="ephemeral", text=bk.escape(exc), blocks=bk.to_dicts(bk.help_blocks(str(exc))))
            return
        user, channel = command.get("user_id", ""), command.get("channel_id", "")
        team = command.get("team_id", "")
        if parsed.name == "ask":
            answer = self.core.ask(parsed.arg)
            respond(response_type="ephemeral", text=bk.fallback(bk.answer_text(answer)),
                    blocks=bk.to_dicts(bk.answer_blocks(answer, shareable=bool(answer.results))))
        elif parsed.name == "diagnose":
            self.start_diagnosis(client, team, channel, user, thread_ts=None, respond=respond)
        elif parsed.name == "stages":
            respond(response_type="ephemeral", text="The five stages", blocks=bk.to_dicts(bk.stages_blocks(self.core.stages())))
        elif parsed.name == "show":
            self._respond_card(respond, parsed.arg)
        elif parsed.name == "digest":
            self.digests.command(parsed.arg.split(), team, channel, user, respond, client)
        elif parsed.name == "reload":
            if user not in self.settings.admins:
                respond(response_type="ephemeral", text="Only the admins in RLMAP_ADMINS can reload the catalog.")
                return
            try:
                counts = self.core.reload()
            except Exception as exc:  # noqa: BLE001 - a curator's mistake must reach the admin, not crash
                respond(response_type="ephemeral", text=f"Reload failed, the previous catalog stays in use: {bk.escape(exc)}")
                return
            respond(response_type="ephemeral", text="Reloaded: " + ", ".join(f"{n} {k}{'' if n == 1 else 's'}"
                                                                            for k, n in counts.items()))
        else:
            respond(response_type="ephemeral", text="How to use rlmap", blocks=bk.to_dicts(bk.help_blocks()))

    # -- buttons ------------------------------------------------------------------------------
    def _show(self, body: dict, client: WebClient, respond: Callable, blocks: list, text: str, title: str) -> None:
        """Entry details: a modal from App Home (no response_url there), else a private reply."""
        if body.get("container", {}).get("type") == "view" or not body.get("response_url"):
            from slack_sdk.models.views import View

            view = View(type="modal", title=bk.plain(bk.cut(title, 24), 24), blocks=bk.fit(blocks, 100))
            if (body.get("view") or {}).get("type") == "modal":
                client.views_push(trigger_id=body["trigger_id"], view=view)  # a click inside a modal
            else:
                client.views_open(trigger_id=body["trigger_id"], view=view)
            return
        thread = body.get("message", {}).get("thread_ts") or body.get("container", {}).get("thread_ts")
        respond(response_type="ephemeral", replace_original=False, text=bk.fallback(text), blocks=bk.to_dicts(blocks),
                **({"thread_ts": thread} if thread else {}))

    def _respond_card(self, respond: Callable, entry_id: str) -> None:
        card = self.core.card(entry_id)
        if card is None:
            close = self.core.suggest_ids(entry_id)
            hint = f" Did you mean {', '.join(f'`{bk.escape(c)}`' for c in close)}?" if close else ""
            respond(response_type="ephemeral", text=f"No entry with id `{bk.escape(entry_id)}`.{hint}")
            return
        respond(response_type="ephemeral", text=bk.fallback(card.title), blocks=bk.to_dicts(bk.card_blocks(card)))

    def on_show(self, ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable) -> None:
        ack()
        card = self.core.card(action.get("value", ""))
        if card is None:
            gone = "That entry is no longer in the catalog."
            self._show(body, client, respond, [bk.section(gone)], gone, "Not found")
            return
        self._show(body, client, respond, bk.card_blocks(card), card.title, card.title)

    def on_show_more(self, ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable) -> None:
        ack()
        card = self.core.card(action.get("value", ""))
        if card is not None:
            self._show(body, client, respond, bk.card_blocks(card, full=True), card.title, card.title)

    def on_related(self, ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable) -> None:
        ack()
        card = self.core.card(action.get("value", ""))
        if card is not None:
            self._show(body, client, respond, bk.related_blocks(card.title, card.links), f"Related to {card.title}", "Related")

    def on_stages_button(self, ack: Callable, body: dict, client: WebClient, respond: Callable) -> None:
        ack()
        self._show(body, client, respond, bk.stages_blocks(self.core.stages()), "The five stages", "The five stages")

    def on_help_button(self, ack: Callable, body: dict, client: WebClient, respond: Callable) -> None:
        ack()
        self._show(body, client, respond, bk.help_blocks(), "How to use rlmap", "How to use rlmap")

    def on_share(self, ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable) -> None:
        ack()
        user = body.get("user", {}).get("id", "")
        channel = body.get("channel", {}).get("id") or body.get("container", {}).get("channel_id")
        answer = self.core.ask(action.get("value", ""))
        try:
            client.chat_postMessage(channel=channel, text=bk.fallback(bk.answer_text(answer)),
                                    blocks=bk.answer_blocks(answer, shared_by=user), unfurl_links=False)
        except SlackApiError as exc:
            hint = cannot_post_hint(exc) or f"I couldn't share it: {exc.response.get('error')}"
            respond(response_type="ephemeral", replace_original=False, text=hint)
            return
        respond(delete_original=True)

    def on_diagnosis_click(self, ack: Callable, action: dict, body: dict, client: WebClient, respond: Callable) -> None:
        ack()
        flow = self.core.flow
        try:
            data = bk.parse_action_value(action.get("value", ""))
            session_id, signal = data["s"], data["q"]
            team = body.get("team", {}).get("id") or body.get("user", {}).get("team_id", "")
            session = flow.load(session_id)
            if session.team != team:
                raise FlowError("that diagnosis no longer exists")  # another workspace's session
            kind = action["action_id"]
            if kind.startswith("diag_preset"):
                preset = self.core.engine.signals[signal].presets[int(data["v"])]
                step = flow.answer(session_id, signal, preset.value)
            elif kind == "diag_skip":
                step = flow.skip(session_id, signal)
            elif kind == "diag_back":
                if session.current != signal:
                    raise FlowError("that question was already answered; use the latest card")
                step = flow.back(session_id)
            else:
                step = flow.stop(session_id)
        except (FlowError, ConflictError, KeyError, IndexError, ValueError) as exc:
            respond(response_type="ephemeral", replace_original=False, text=bk.escape(exc))
            return
        user = body.get("user", {}).get("id", "")
        channel = body.get("channel", {}).get("id") or body.get("container", {}).get("channel_id")
        ts = body.get("message", {}).get("ts") or body.get("container", {}).get("message_ts")
        self.show_step(client, channel, step, ts=ts, note=step.note, by=user)

    # -- shared steps -------------------------------------------------------------------------
    def post_answer(self, client: WebClient, channel: str, user: str, text: str, thread_ts: str | None) -> None:
        if not text:
            blocks, fallback = bk.help_blocks(), "How to use rlmap"
        else:
            answer = self.core.ask(text)
            blocks, fallback = bk.answer_blocks(answer), bk.answer_text(answer)
        self.post(client, channel, user, blocks=blocks, text=fallback, thread_ts=thread_ts)

    def post(self, client: WebClient, channel: str, user: str, blocks: list, text: str,
             thread_ts: str | None = None, respond: Callable | None = None, **extra: Any) -> dict | None:
        """chat.postMessage; when Slack says the bot cannot post, tell the user what to do."""
        try:
            return client.chat_postMessage(channel=channel, blocks=blocks, text=bk.fallback(text),
                                           thread_ts=thread_ts, unfurl_links=False, unfurl_media=False, **extra).data
        except SlackApiError as exc:
            hint = cannot_post_hint(exc)
            if hint is None:
                raise
            log.info("cannot post in %s: %s", channel, exc.response.get("error"))
            if respond is not None:
                respond(response_type="ephemeral", text=hint)
            else:
                try:
                    client.chat_postEphemeral(channel=channel, user=user, text=hint)
                except SlackApiError:
                    log.info("could not reach %s with the hint either", user)
            return None

    def start_diagnosis(self, client: WebClient, team: str, channel: str, user: str,
                        thread_ts: str | None, respond: Callable | None = None) -> None:
        """Open a thread (unless already in one), post the first question card there, remember it."""
        if thread_ts is None:
            root = self.post(client, channel, user, blocks=[bk.section(
                f":stethoscope: {bk.who(user)} started a diagnosis: which stage binds this RL run? "
                "Answer in the thread below.")], text="Diagnosis started", respond=respond)
            if root is None:
                return
            thread_ts = root["ts"]
        step = self.core.flow.start(user=user, team=team, channel=channel, thread_ts=thread_ts)
        card = self.post(client, channel, user, blocks=bk.step_blocks(step), text=bk.question_text(step),
                         thread_ts=thread_ts, respond=respond)
        if card is None:
            self.core.flow.stop(step.session.id)  # nobody can see it: do not leave it open
            return
        self.core.flow.attach(step.session.id, message_ts=card["ts"])
        if respond is not None:
            respond(response_type="ephemeral", text="Diagnosis started: answer in the thread I just opened.")

    def typed_answer(self, client: WebClient, team: str, channel: str, thread_ts: str, user: str, text: str) -> bool:
        """A reply in a diagnosis thread: the answer to the current question. False if no diagnosis here."""
        session = self.core.state.find_session(team, channel, thread_ts)
        if session is None or session.current is None:
            return False
        flow = self.core.flow
        if not text.strip():
            return True  # an empty reply (an image, a file) is not an answer
        control = control_word(text)
        try:
            if control == "skip":
                step = flow.skip(session.id, session.current)
            elif control == "back":
                step = flow.back(session.id)
            elif control == "stop":
                step = flow.stop(session.id)
            else:
                step = flow.answer(session.id, session.current, text)
        except (FlowError, ConflictError) as exc:
            try:
                client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts,
                                          text=f"{bk.escape(exc)}. Use the buttons, or type a value, '?', 'back' or 'stop'.")
            except SlackApiError:
                log.info("could not send a hint to %s", user)
            return True
        self.show_step(client, channel, step, ts=step.session.message_ts, note=step.note, by=user, thread_ts=thread_ts)
        return True

    def show_step(self, client: WebClient, channel: str, step: Step, ts: str | None, note: str | None,
                  by: str | None = None, thread_ts: str | None = None) -> None:
        """Update the diagnosis card in place (post a new one if it is gone)."""
        blocks = bk.step_blocks(step, note, by)
        text = bk.question_text(step) if not step.finished else bk.verdict_text(step.verdict)
        if ts:
            try:
                client.chat_update(channel=channel, ts=ts, blocks=blocks, text=bk.fallback(text))
                return
            except SlackApiError as exc:
                if exc.response.get("error") not in {"message_not_found", "cant_update_message"}:
                    raise
        card = self.post(client, channel, step.session.user, blocks=blocks, text=text,
                         thread_ts=thread_ts or step.session.thread_ts)
        if card is not None and not step.finished:
            self.core.flow.attach(step.session.id, message_ts=card["ts"])


def build_app(core: Core, settings: SlackSettings) -> App:
    return SlackFrontEnd(core, settings).app
