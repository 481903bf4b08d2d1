"""Suggest, retry, approve, reject: the curation flow, whatever front-end delivers its cards.

Every step keeps the suggestion in the state store first, so nothing is lost: arXiv not
answering leaves it ``waiting`` with a next try (backing off: the first retry after
``RLMAP_SUGGEST_RETRY_SECONDS``, doubling to an hour), and any replica that finds it due
claims that try (a compare-and-set on its time) and carries on. Decisions are
compare-and-set on the status, so a suggestion is approved or rejected once.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

from rlmap_bot.curation.arxiv_source import ArxivSource, ArxivUnavailable
from rlmap_bot.curation.dedupe import from_catalog, in_catalog, known_reference, placed
from rlmap_bot.curation.entry import paper_data, slug
from rlmap_bot.curation.propose import propose
from rlmap_bot.errors import NotFoundError, UsageError
from rlmap_bot.parts import Part, code, emoji, line, title
from rlmap_bot.parts import channel as channel_part
from rlmap_bot.parts import user as user_part
from rlmap_bot.results.curation import ArxivRecord, Candidate, Existing

if TYPE_CHECKING:
    from rlmap_bot.core import Core
    from rlmap_bot.settings import Settings
    from rlmap_bot.state.additions import Suggestion

log = logging.getLogger(__name__)
MAX_BACKOFF = dt.timedelta(hours=1)
LEASE = dt.timedelta(
    minutes=2
)  # a replica trying arXiv for a waiting suggestion owns that try this long
NO_CHANNEL = (
    "no curators' channel is set: set RLMAP_CURATOR_CHANNEL, or have a workspace admin run `/rlmap "
    "curate here` in it"
)


class CardNotPosted(UsageError):
    """The front-end is sure the card was not posted
    (the bot is not in the curators' channel, say).
    """


class Cards(Protocol):
    """What a front-end does for the flow (Slack implements it)."""

    def post_card(
        self, team: str, channel: str, suggestion_id: str, candidate: Candidate, suggested_by: str
    ) -> str:
        """Post the candidate's card with Approve, Edit and
        Reject; return its ts (CardNotPosted: surely not).
        """

    def close_card(
        self, team: str, channel: str, ts: str, candidate: Candidate, outcome: list[Part]
    ) -> None:
        """Replace the card's buttons with the outcome."""

    def tell(self, team: str, channel: str, user: str, text: list[Part]) -> None:
        """A private note to one person."""


class Outcome(BaseModel):
    """What a suggestion or a decision came to, in a line for the person who acted."""

    ok: bool
    text: list[Part]  # names in it (titles, channels, people) are parts each surface shows its way
    suggestion_id: str | None = None


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _and(items: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return " and ".join(filter(None, [", ".join(items[:-1]), items[-1]])) if items else ""


def _when(moment: str | None) -> str:
    return (
        dt.datetime.fromisoformat(moment).strftime("%d %b %Y").lstrip("0") if moment else "earlier"
    )


class Curation:
    """The flow over one core (catalog + state store) and one arXiv source."""

    def __init__(
        self, core: Core, source: ArxivSource | None = None, settings: Settings | None = None
    ):
        settings = settings or core.settings
        self.core = core
        self.settings = settings
        self.source = source or ArxivSource(
            settings.rlmap_arxiv_url,
            settings.rlmap_arxiv_delay_seconds,
            settings.rlmap_arxiv_timeout_seconds,
        )
        self.retry_first = dt.timedelta(seconds=settings.rlmap_suggest_retry_seconds)
        self.curators = settings.curators
        self.default_channel = settings.rlmap_curator_channel

    # -- candidates
    #  ----------------------------------------------------------------------------------
    def candidate(self, record: ArxivRecord, with_state: bool = True) -> Candidate:
        """arXiv's record with proposed tags, and whether
        it is known already (catalog, then decisions).
        """
        stages, subtopics = propose(self.core.searcher, record)
        existing = placed(self.core, in_catalog(self.core.store.catalog.papers, record))
        if existing is None and with_state:
            existing = self._decided(record.arxiv_id)
        return Candidate(record=record, stages=stages, subtopics=subtopics, existing=existing)

    def _decided(self, arxiv_id: str) -> Existing | None:
        found = self.core.state.curation.latest(arxiv_id)
        if found is None:
            return None
        return Existing(
            status=found.status if found.status != "waiting" else "pending",
            how="suggestion",
            by=found.decided_by or found.user,
            reason=found.reason,
            when=dt.datetime.fromisoformat(found.updated_at),
        )

    def describe(self, reference: str) -> Candidate:
        """The terminal's `suggest`: the candidate, nothing
        stored (decisions are read when a state store exists).
        """
        arxiv_id, existing = known_reference(self.core.store.catalog.papers, reference)
        if existing is not None:  # the catalog has it: said without asking arXiv
            return from_catalog(self.core, existing)
        record = self.source.fetch(arxiv_id)
        if record is None:
            raise NotFoundError(f"no paper {arxiv_id} on arXiv")
        return self.candidate(record, with_state=self.core.has_state())

    # -- suggesting
    #  ----------------------------------------------------------------------------------
    def curator_channel(self, team: str) -> str | None:
        return self.core.state.curation.channel(team) or self.default_channel

    def suggest(self, reference: str, team: str, channel: str, user: str, cards: Cards) -> Outcome:
        arxiv_id, existing = known_reference(self.core.store.catalog.papers, reference)
        if existing is not None:  # the catalog has it, by its id or its title: arXiv is not asked
            return Outcome(
                ok=False, text=self.known_text(None, placed(self.core, existing), arxiv_id)
            )
        state = self.core.state.curation
        known = self._known_before_fetch(arxiv_id)
        if known is not None:
            return known
        curators = self.curator_channel(team)
        if curators is None:
            raise UsageError(NO_CHANNEL)
        try:
            record = self.source.fetch(arxiv_id)
        except ArxivUnavailable as exc:
            kept = state.suggest(
                team, arxiv_id, user, channel, "waiting", next_try_at=_now() + self.retry_first
            )
            log.info("suggestion %s of %s kept for a retry: %s", kept.id, arxiv_id, exc)
            return Outcome(
                ok=True,
                suggestion_id=kept.id,
                text=line(
                    f"arXiv is not answering right now, so I kept your suggestion of {arxiv_id} "
                    f"and will try again shortly; I'll tell you here when it reaches the curators."
                ),
            )
        if record is None:
            raise NotFoundError(f"no paper {arxiv_id} on arXiv; check the id")
        candidate = self.candidate(record)
        if candidate.existing is not None:
            return Outcome(ok=False, text=self.known_text(candidate))
        suggestion = state.suggest(
            team, arxiv_id, user, channel, "pending", data=candidate.model_dump_json()
        )
        try:
            self._post(suggestion.id, team, curators, candidate, user, cards)
        except CardNotPosted:
            state.drop(
                suggestion.id, "the card could not be posted"
            )  # so it can be suggested again
            raise
        return Outcome(
            ok=True,
            suggestion_id=suggestion.id,
            text=line(
                "Thanks: ",
                title(record.title),
                f" ({arxiv_id}) is with the curators in ",
                channel_part(curators),
                ".",
            ),
        )

    def _known_before_fetch(self, arxiv_id: str) -> Outcome | None:
        """Suggested before: said without asking arXiv."""
        found = self._decided(arxiv_id)
        if found is None:
            return None
        return Outcome(ok=False, text=self.known_text(None, found, arxiv_id))

    def known_text(
        self, candidate: Candidate | None, existing: Existing | None = None, arxiv_id: str = ""
    ) -> list[Part]:
        existing = existing or (candidate.existing if candidate else None)
        assert existing is not None, "known_text is asked only about a known paper"
        name: Part | str = title(candidate.record.title) if candidate else arxiv_id
        when = _when(existing.when.isoformat() if existing.when else None)
        if existing.status == "in_catalog":
            how = "" if existing.how == "arxiv id" else f", found by {existing.how}"
            where = f", on {_and(existing.where)}" if existing.where else ""
            if not arxiv_id and candidate is None:  # named by its title: the title says it once
                return line(
                    title(existing.title or ""),
                    " is already in the catalog as ",
                    code(existing.entry_id or ""),
                    f"{where}{how}.",
                )
            return line(
                name,
                " is already in the catalog as ",
                title(existing.title or ""),
                " (",
                code(existing.entry_id or ""),
                f"){where}{how}.",
            )
        if existing.status == "approved":
            return line(name, f" was approved on {when}; it is in the catalog.")
        if existing.status == "rejected":
            why = f": {existing.reason}" if existing.reason else ""
            return line(
                name,
                " was suggested before and rejected by ",
                user_part(existing.by),
                f" on {when}{why}",
            )
        return line(name, " is already suggested and waiting for the curators.")

    def _post(
        self,
        suggestion_id: str,
        team: str,
        curators: str,
        candidate: Candidate,
        user: str,
        cards: Cards,
    ) -> None:
        ts = cards.post_card(team, curators, suggestion_id, candidate, user)
        self.core.state.curation.set_card(suggestion_id, curators, ts)

    # -- retries
    #  -------------------------------------------------------------------------------------
    def backoff(self, attempts: int) -> dt.timedelta:
        return min(self.retry_first * (2 ** max(0, attempts - 1)), MAX_BACKOFF)

    def retry_due(self, cards: Cards, now: dt.datetime | None = None) -> int:
        """Try arXiv again for every waiting suggestion
        that is due; return how many reached an end.
        """
        now = now or _now()
        state = self.core.state.curation
        settled = 0
        for suggestion in state.due(now):
            if not state.take(suggestion.id, LEASE, now):
                continue  # another replica took this try
            attempts = suggestion.attempts + 1
            try:
                record = self.source.fetch(suggestion.arxiv_id)
            except ArxivUnavailable:
                state.retry_at(suggestion.id, _now() + self.backoff(attempts))
                continue
            settled += 1
            self._settle(suggestion, record, cards)
        return settled

    def _settle(self, suggestion: Suggestion, record: ArxivRecord | None, cards: Cards) -> None:
        state = self.core.state.curation
        if record is None:
            state.resolve(suggestion.id, "dropped", reason="arXiv has no such paper")
            cards.tell(
                suggestion.team,
                suggestion.channel,
                suggestion.user,
                line(
                    f"arXiv answered: it has no paper {suggestion.arxiv_id}, so your suggestion is "
                    f"dropped."
                ),
            )
            return
        candidate = self.candidate(record, with_state=False)
        if candidate.existing is None:
            earlier = state.latest(record.arxiv_id, ("pending", "approved", "rejected"))
            if earlier is not None and earlier.id != suggestion.id:
                candidate.existing = self._decided(record.arxiv_id)
        if candidate.existing is not None:
            state.resolve(suggestion.id, "dropped", reason="known")
            cards.tell(
                suggestion.team, suggestion.channel, suggestion.user, self.known_text(candidate)
            )
            return
        curators = self.curator_channel(suggestion.team)
        if curators is None:
            state.retry_at(suggestion.id, _now() + MAX_BACKOFF)
            log.warning("suggestion %s waits: %s", suggestion.id, NO_CHANNEL)
            return
        if not state.resolve(suggestion.id, "pending", data=candidate.model_dump_json()):
            return
        try:
            self._post(suggestion.id, suggestion.team, curators, candidate, suggestion.user, cards)
        except CardNotPosted as exc:
            state.drop(suggestion.id, "the card could not be posted")
            cards.tell(
                suggestion.team,
                suggestion.channel,
                suggestion.user,
                line(
                    f"arXiv answered, but your suggestion of {record.arxiv_id} could not reach the "
                    f"curators: {exc}"
                ),
            )
            return
        cards.tell(
            suggestion.team,
            suggestion.channel,
            suggestion.user,
            line(
                "arXiv is answering again: ",
                title(record.title),
                f" ({record.arxiv_id}) is with the curators in ",
                channel_part(curators),
                ".",
            ),
        )

    # -- decisions
    #  -----------------------------------------------------------------------------------
    def is_curator(self, user: str) -> bool:
        return user in self.curators

    def open_suggestion(self, suggestion_id: str, curator: str) -> tuple[Suggestion, Candidate]:
        """The pending suggestion a curator acts on; UsageError (told privately) otherwise."""
        if not self.is_curator(curator):
            raise UsageError(
                "Only the curators in RLMAP_CURATORS can decide on suggestions; nothing changed."
            )
        suggestion = self.core.state.curation.get(suggestion_id)
        if suggestion is None or suggestion.data is None:
            raise UsageError("That suggestion is no longer known.")
        if suggestion.status != "pending":
            who = (
                ""
                if not suggestion.decided_by
                else " by you"
                if suggestion.decided_by == curator
                else " by another curator"
            )
            raise UsageError(f"That suggestion was already {suggestion.status}{who}.")
        return suggestion, Candidate.model_validate_json(suggestion.data)

    def approve(
        self,
        suggestion_id: str,
        curator: str,
        cards: Cards,
        stages: list[str] | None = None,
        subtopics: list[str] | None = None,
        summary: str | None = None,
        facts: list[str] | None = None,
    ) -> Outcome:
        suggestion, candidate = self.open_suggestion(suggestion_id, curator)
        stages = stages if stages is not None else [t.id for t in candidate.stages]
        subtopics = subtopics if subtopics is not None else [t.id for t in candidate.subtopics]
        if not stages:
            raise UsageError("No stage was proposed for this paper; use Edit to choose its stages.")
        from rlmap_bot.knowledge.additions import validate
        from rlmap_bot.knowledge.loader import KnowledgeError

        catalog = self.core.store.catalog
        taken = set(catalog.entries) | {
            a.entry_id for a in self.core.state.curation.additions(None)
        }
        entry_id = slug(candidate.record.title, candidate.record.arxiv_id, taken)
        data = paper_data(
            candidate, entry_id, stages, subtopics, summary, facts or [], dt.date.today()
        )
        try:
            validate(data, f"additions/{entry_id}", catalog)
        except KnowledgeError as exc:
            raise UsageError(
                f"the entry would not pass the catalog's checks: {exc.problem} ({exc.field})"
            ) from None
        state = self.core.state.curation
        if not state.decide(suggestion.id, "approved", curator):
            raise UsageError("Another curator decided on this suggestion first; nothing changed.")
        try:
            state.add(
                entry_id,
                candidate.record.arxiv_id,
                suggestion.id,
                json.dumps(data),
                suggestion.user,
                curator,
            )
        except Exception:
            state.undecide(suggestion.id)
            raise
        # The decision is stored: the card and the suggester hear it now; the rebuild that makes the
        # paper searchable here (seconds on a busy machine) comes after, and every other replica's
        # poller makes its own.
        outcome = line(
            emoji("white_check_mark"),
            " Approved by ",
            user_part(curator),
            " as ",
            code(entry_id),
            ".",
        )
        self._close(suggestion, candidate, outcome, cards)
        self._tell_suggester(
            suggestion,
            cards,
            line(
                "Your suggestion ",
                title(candidate.record.title),
                " was approved by ",
                user_part(curator),
                "; it is in the catalog as ",
                code(entry_id),
                ".",
            ),
        )
        try:
            self.core.sync_additions()
        except Exception:  # noqa: BLE001 - the addition is stored; the poller rebuilds this replica too
            log.exception("rebuild after approving %s failed; the next poll tries again", entry_id)
        return Outcome(
            ok=True,
            suggestion_id=suggestion.id,
            text=line("Approved: ", code(entry_id), " is live."),
        )

    def reject(self, suggestion_id: str, curator: str, reason: str, cards: Cards) -> Outcome:
        suggestion, candidate = self.open_suggestion(suggestion_id, curator)
        reason = " ".join((reason or "").split())[:500]
        if not reason:
            raise UsageError("A rejection needs a reason (the suggester is told it).")
        if not self.core.state.curation.decide(suggestion.id, "rejected", curator, reason):
            raise UsageError("Another curator decided on this suggestion first; nothing changed.")
        self._close(
            suggestion,
            candidate,
            line(emoji("no_entry_sign"), " Rejected by ", user_part(curator), f": {reason}"),
            cards,
        )
        self._tell_suggester(
            suggestion,
            cards,
            line(
                "Your suggestion ",
                title(candidate.record.title),
                " was rejected by ",
                user_part(curator),
                f": {reason}",
            ),
        )
        return Outcome(
            ok=True,
            suggestion_id=suggestion.id,
            text=line("Rejected; it will not be suggested again."),
        )

    def _close(
        self, suggestion: Suggestion, candidate: Candidate, outcome: list[Part], cards: Cards
    ) -> None:
        if suggestion.card_channel and suggestion.card_ts:
            cards.close_card(
                suggestion.team, suggestion.card_channel, suggestion.card_ts, candidate, outcome
            )

    def _tell_suggester(self, suggestion: Suggestion, cards: Cards, text: list[Part]) -> None:
        if suggestion.source == "person":
            cards.tell(suggestion.team, suggestion.channel, suggestion.user, text)
