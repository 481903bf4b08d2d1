"""Command results in Slack: one dispatch from a result's type to what is sent, and how.

:func:`render` is Slack's counterpart of the terminal's ``cli.render.text`` and
``Terminal.show``: each result type registers here, once, what it becomes in Slack, as a list of
*outs*:

- :class:`Message`: blocks and their notification text for the person who asked, where the
  request came from (privately for `/rlmap` and a button, in the thread for a mention or a DM), or
  for the whole channel (``public``);
- :class:`Form`: a modal opened over the click that asked for it;
- :class:`FirstCard`: a guided diagnosis's first card, posted in its thread;
- :class:`CardUpdate`: the card a click came from, updated in place.

The request's reply (:class:`~rlmap_bot.slack.dispatch.Reply`: a slash command's response_url, a
mention's thread, a button's modal, ...) carries each out to Slack, and decides nothing about the
result. A rendering may read its :class:`Place`: whether what it sends is seen by the asker alone
(an answer offers a Share button then), who asked, and the *view* of the result a button asked for.
A follow-up button (:data:`rlmap_bot.slack.clicks.FOLLOW_UPS`) runs a command again and shows
another view of its result (an entry whole, its related entries), as a Details button would: a
view name, its branch in the result's rendering, and a row in that table.

The blocks themselves are built in ``blocks/``, one module per feature: pure, user text escaped,
within Slack's limits.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import singledispatch
from typing import TYPE_CHECKING, Any, Callable, Protocol

from slack_sdk import WebClient
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from rlmap_bot.results.ask import Answer, AnswerStream
from rlmap_bot.results.cards import Card
from rlmap_bot.results.curation import AdditionList, Candidate, CurationForm, Decision
from rlmap_bot.results.diagnosis import DiagnosisOpened, Move, Step, Verdict
from rlmap_bot.results.digest import Digest, Subscribed, SubscriptionSet
from rlmap_bot.results.general import (
    Help,
    KbStats,
    Notice,
    PaperList,
    SessionList,
    StageList,
    SubscriptionList,
)
from rlmap_bot.results.guided import GuidedRun
from rlmap_bot.results.runs import RunDiagnosis
from rlmap_bot.results.scaling import Comparison, Forecast
from rlmap_bot.results.watch import (
    Alert,
    CheckResult,
    Following,
    Unwatched,
    Watching,
    WatchList,
    WatchNow,
    WatchSet,
)
from rlmap_bot.slack.blocks import ask, curate, diagnosis, digest, entries, help, runs, verdicts
from rlmap_bot.slack.blocks import scaling as scaling_blocks
from rlmap_bot.slack.blocks import watch as watch_blocks
from rlmap_bot.slack.blocks.common import section
from rlmap_bot.slack.markup import by, code, escape, mrkdwn, prose
from rlmap_bot.wording import watch_interval, watching

if TYPE_CHECKING:
    from rlmap_bot.slack.diagnosis import DiagnosisThreads

log = logging.getLogger(__name__)

# The views of a result a button can ask for (Place.view); a rendering that has no such view
# shows its brief one.
BRIEF = "brief"
FULL = "full"  # an entry whole, no section cut short
RELATED = "related"  # the entries linked to an entry, as buttons
SHARED = "shared"  # an answer shared in the channel by the person who asked it privately
DETAILS = "details"  # what a verdict's card leaves out (its Details button)


@dataclass(frozen=True)
class Place:
    """What a rendering may know of where it is shown.

    ``private``: what is sent to the asker is seen by them alone (`/rlmap`, a button), not by the
    channel (a mention's thread); ``user``: who asked; ``view``: the view a button asked for;
    ``keep``: keeps a result for its card's Details button and returns the id the button carries
    (None where nothing can be kept).
    """

    private: bool = True
    user: str = ""
    view: str = BRIEF
    keep: Callable[[Any], str] | None = None

    def kept(self, result: Any) -> str | None:
        return self.keep(result) if self.keep is not None else None


class Surface(Protocol):
    """What an out needs of the request's reply to reach Slack (``dispatch.Reply`` has it all)."""

    client: WebClient
    channel: str
    threads: DiagnosisThreads
    respond: Callable | None
    card_ts: str | None  # the card a click came from
    trigger_id: str | None  # lets a click open a modal

    def send(self, message: Message) -> None: ...

    def chart(self, chart: Chart) -> None: ...


@dataclass
class Message:
    """Blocks and their notification text (already safe mrkdwn), sent where the reply sends.

    ``public``: for everyone in the channel even where replies are private (an `/rlmap` reply
    that says what was done to the channel); ``title``: a modal's title, when shown in one.
    """

    blocks: list[Block]
    text: str
    public: bool = False
    title: str | None = None

    def to(self, reply: Surface) -> None:
        reply.send(self)


@dataclass
class Form:
    """A modal opened over the click that asked for it; ``instead`` where nothing was clicked."""

    view: View
    instead: Message

    def to(self, reply: Surface) -> None:
        if reply.trigger_id is None:  # typed text opens no form
            reply.send(self.instead)
            return
        reply.client.views_open(trigger_id=reply.trigger_id, view=self.view)


@dataclass
class FirstCard:
    """A guided diagnosis's first card, posted in its session's thread and remembered there."""

    step: Step

    def to(self, reply: Surface) -> None:
        reply.threads.post_first_card(reply.client, reply.channel, self.step, respond=reply.respond)


@dataclass
class CardUpdate:
    """The card the click came from, updated in place (a new card when it is gone)."""

    step: Step
    by: str | None = None

    def to(self, reply: Surface) -> None:
        reply.threads.show_step(
            reply.client,
            reply.channel,
            self.step,
            ts=reply.card_ts,
            note=self.step.note,
            by=self.by,
        )


@dataclass
class Chart:
    """A result's chart (a PNG the command drew), uploaded after its card where the asker sees
    the answer: its thread, or the asker's DM when the answer is theirs alone."""

    path: str
    filename: str
    name: str  # the run or runs it shows
    title: str
    alt: str

    def to(self, reply: Surface) -> None:
        reply.chart(self)


Out = Message | Form | FirstCard | CardUpdate | Chart
Outs = list[Out]


def said(text: str, public: bool = False) -> Outs:
    """One section of mrkdwn, its own notification text."""
    return [Message([section(text)], text, public=public)]


@singledispatch
def render(result: Any, place: Place = Place()) -> Outs:
    """What a command result becomes in Slack: the rendering registered for its type (or a base of
    it). A type with none is a programming error (``tests/test_renderers.py`` holds every declared
    result to a rendering), said in one line rather than raised at the person."""
    log.error("no Slack rendering for %s", type(result).__name__)
    return said(escape(str(result)))


def message(result: Any, place: Place = Place(private=False)) -> Message:
    """The one message a result is where it is posted for the channel (an announcement, a
    thread's root)."""
    outs = render(result, place)
    found = [out for out in outs if isinstance(out, Message)]
    assert len(found) == len(outs) == 1, f"{type(result).__name__} is not one message"
    return found[0]


@render.register(type(None))
def _(result: None, place: Place = Place()) -> Outs:
    """Nothing: the command told the person already (e.g. the bot cannot post here)."""
    return []


# -- ask and the catalog ------------------------------------------------------------------------
@render.register
def _(result: Answer, place: Place = Place()) -> Outs:
    text = escape(ask.answer_text(result))
    if place.view == SHARED:  # posted for the channel, naming who shared it
        return [Message(ask.answer_blocks(result, shared_by=place.user), text, public=True)]
    # A Share button only where the answer is private; in a thread everyone sees it already.
    shareable = place.private and bool(result.results)
    return [Message(ask.answer_blocks(result, shareable=shareable), text)]


@render.register
def _(result: AnswerStream, place: Place = Place()) -> Outs:
    """Each answer as its own reply, as the terminal prints each in turn."""
    return [out for answer in result.answers for out in render(answer, place)]


@render.register
def _(result: Card, place: Place = Place()) -> Outs:
    if place.view == RELATED:
        return [
            Message(entries.related_blocks(result.title, result.links), "Related", title="Related")
        ]
    blocks = entries.card_blocks(result, full=place.view == FULL)
    return [Message(blocks, escape(result.title), title=result.title)]


@render.register
def _(result: StageList, place: Place = Place()) -> Outs:
    title = "The five stages"
    return [Message(entries.stages_blocks(result), title, title=title)]


@render.register
def _(result: PaperList, place: Place = Place()) -> Outs:
    return [Message(help.papers_blocks(result), f"{len(result.papers)} papers")]


@render.register
def _(result: Help, place: Place = Place()) -> Outs:
    title = "How to use rlmap"
    return [Message(help.help_blocks(result), prose(result.problem or title), title=title)]


@render.register
def _(result: KbStats, place: Place = Place()) -> Outs:
    return [Message(help.kb_stats_blocks(result), f"{result.total} entries")]


# -- diagnosis ------------------------------------------------------------------------------------
@render.register
def _(result: Verdict, place: Place = Place()) -> Outs:
    if place.view == DETAILS:
        return [Message(verdicts.details_blocks(result), "Details", title="Details")]
    blocks = diagnosis.verdict_blocks(result, details=place.kept(result))
    return [Message(blocks, escape(diagnosis.verdict_text(result)))]


@render.register
def _(result: RunDiagnosis, place: Place = Place()) -> Outs:
    name = result.run.run_id or result.run.path
    if place.view == DETAILS:
        return [Message(runs.run_details_blocks(result, name), "Details", title="Details")]
    blocks, text = runs.run_blocks(result, name, details=place.kept(result))
    return [Message(blocks, text)]


# -- what more compute buys ------------------------------------------------------------------------
@render.register
def _(result: Forecast, place: Place = Place()) -> Outs:
    blocks, text = scaling_blocks.forecast_blocks(result, _chart_where(result.chart, place))
    return [Message(blocks, text), *_chart(result)]


@render.register
def _(result: Comparison, place: Place = Place()) -> Outs:
    blocks, text = scaling_blocks.comparison_blocks(result, _chart_where(result.chart, place))
    return [Message(blocks, text), *_chart(result)]


def _chart(result: Forecast | Comparison) -> list[Chart]:
    return [Chart(result.chart, *scaling_blocks.chart_caption(result))] if result.chart else []


def _chart_where(chart: str | None, place: Place) -> str | None:
    """Where the chart follows the card: the asker's DM when the card is theirs alone."""
    if not chart:
        return None
    return "the chart is in your DM with me" if place.private else "the chart follows below"


@render.register
def _(result: Step, place: Place = Place()) -> Outs:
    return [FirstCard(result)]


@render.register
def _(result: Move, place: Place = Place()) -> Outs:
    return [CardUpdate(result.step, result.by)]


@render.register
def _(result: GuidedRun, place: Place = Place()) -> Outs:
    """What the logs told, then the card that asks the rest."""
    return render(result.readings, place) + render(result.step, place)


@render.register
def _(result: DiagnosisOpened, place: Place = Place()) -> Outs:
    told = "started a diagnosis: which stage binds this RL run? Answer in the thread below."
    return [Message([section(":stethoscope: " + by(result.by, told))], "Diagnosis started")]


@render.register
def _(result: SessionList, place: Place = Place()) -> Outs:
    return [Message(help.sessions_blocks(result), f"{len(result.sessions)} open diagnoses")]


# -- notices --------------------------------------------------------------------------------------
@render.register
def _(result: Notice, place: Place = Place()) -> Outs:
    text = mrkdwn(result.parts) if result.parts else by(result.actor, result.text)
    return said(text, public=result.public)


# -- watching runs --------------------------------------------------------------------------------
@render.register
def _(result: Alert, place: Place = Place()) -> Outs:
    """A watch post as its Details button shows it (the post itself goes out through the watch's
    poster, slack/watches.py)."""
    if place.view == DETAILS:
        return [Message(watch_blocks.alert_details_blocks(result), "Details", title="Details")]
    return [Message(watch_blocks.alert_blocks(result), escape(watch_blocks.alert_text(result)))]


@render.register
def _(result: CheckResult, place: Place = Place()) -> Outs:
    return said(watch_blocks.result_line(result))


@render.register
def _(result: Following, place: Place = Place()) -> Outs:
    return said(
        f"Following {code(result.source)} here means a terminal that stays open: in Slack, `/rlmap "
        f"watch` posts its alerts to the channel instead."
    )


@render.register
def _(result: WatchSet, place: Place = Place()) -> Outs:
    verb = {
        "started": "is watching",
        "resumed": "resumed watching",
        "changed": "changed the watch of",
    }[result.change]
    what = (
        "NaN/inf or diverging loss"
        if result.quiet
        else "a stage starting to bind, a change of binding stage, or a NaN/inf or diverging loss"
    )
    return said(
        by(
            result.by,
            f"{verb} `{result.path}` here, {watch_interval(result.every, result.quiet)}. I'll post "
            f"{what}, once each. `/rlmap unwatch {result.short_id}` stops it.",
        )
    )


@render.register
def _(result: Watching, place: Place = Place()) -> Outs:
    return said(prose(watching(result)))


@render.register
def _(result: Unwatched, place: Place = Place()) -> Outs:
    """Told to everyone in the channel, as the watch was announced."""
    return said(by(result.by, f"stopped watching `{result.path}` here."), public=True)


@render.register
def _(result: WatchList, place: Place = Place()) -> Outs:
    return [Message(watch_blocks.watch_list_blocks(result), f"{len(result.watches)} watches")]


@render.register
def _(result: WatchNow, place: Place = Place()) -> Outs:
    text = f"Checked {len(result.results)} watches"
    return [Message(watch_blocks.watch_now_blocks(result), text)]


# -- digests --------------------------------------------------------------------------------------
@render.register
def _(result: SubscriptionSet, place: Place = Place()) -> Outs:
    filters = f", only {', '.join(result.filters)}" if result.filters else ""
    return said(
        by(
            result.by,
            f"subscribed this channel to the RL Map digest, {result.when}{filters}. Next: "
            f"{result.next_run.strftime('%a %d %b %H:%M %Z')}.",
        )
    )


@render.register
def _(result: Subscribed, place: Place = Place()) -> Outs:
    when = result.subscription.next_run.strftime("%a %d %b %H:%M %Z")
    return said(escape(f"Subscribed. Next digest: {when}."))


@render.register
def _(result: Digest, place: Place = Place()) -> Outs:
    blocks = digest.digest_blocks(result, preview=True)
    return [Message(blocks, escape(digest.digest_text(result)))]


@render.register
def _(result: SubscriptionList, place: Place = Place()) -> Outs:
    lines = [
        f"• <#{escape(s.channel)}>: {escape(s.when)}"
        + (f", {escape(', '.join(s.filters))}" if s.filters else "")
        + f"; next {s.next_run.strftime('%a %d %b %H:%M %Z')}"
        for s in result.subscriptions
    ]
    return said("Digest subscriptions:\n" + "\n".join(lines))


# -- curation -------------------------------------------------------------------------------------
@render.register
def _(result: Candidate, place: Place = Place()) -> Outs:
    return [Message(curate.candidate_blocks(result), escape(curate.card_text(result)))]


@render.register
def _(result: AdditionList, place: Place = Place()) -> Outs:
    text = f"{len(result.additions)} papers approved from Slack"
    return [Message(curate.additions_blocks(result), text)]


@render.register
def _(result: CurationForm, place: Place = Place()) -> Outs:
    candidate = result.candidate
    if result.kind == "edit":
        stages = [(c.id, c.title) for c in result.stages]
        subtopics = [(c.id, c.title) for c in result.subtopics]
        view = curate.edit_modal(result.suggestion_id, candidate, stages, subtopics)
    else:
        view = curate.reject_modal(result.suggestion_id, candidate)
    instead = "Use the buttons on the suggestion's card in the curators' channel."
    return [Form(view, Message([section(instead)], instead))]


@render.register
def _(result: Decision, place: Place = Place()) -> Outs:
    """Nothing more to say: the card the decision came from now reads who decided what (only a
    card's buttons and its forms decide)."""
    return []


__all__ = [
    "BRIEF",
    "DETAILS",
    "FULL",
    "RELATED",
    "SHARED",
    "CardUpdate",
    "FirstCard",
    "Form",
    "Message",
    "Out",
    "Place",
    "Surface",
    "message",
    "render",
]
