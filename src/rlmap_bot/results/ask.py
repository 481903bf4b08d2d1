"""The answer front-ends render: pydantic models whose fields the CLI, shell and Slack rely on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field

# What an answer is: "confident" (results, the evidence clears the floor), "guess" (the gate
# refused, yet some word of the question speaks for the map: its nearest entries, marked as a guess)
# or "nothing" (no word of the question speaks for the map).
Tier = Literal["confident", "guess", "nothing"]


class Hit(BaseModel):
    """One matching entry, with why it matched."""

    kind: str
    id: str
    title: str
    short: str | None = Field(
        default=None, description="A name short enough for a button (the catalog's short name)."
    )
    score: float = Field(ge=0, le=1)
    one_line: str
    why: list[str] = Field(default_factory=list)
    byline: str | None = None
    url: str | None = None
    verification: str | None = Field(
        default=None, description="For papers: verified, partial or unverified."
    )
    points_to: str | None = Field(
        default=None,
        description=(
            "For signals: the stage one of its diagnosis rules names, and why, in brief "
            "(search/readings.py)."
        ),
    )


class Answer(BaseModel):
    """The best matches for a question, best first, in one of three tiers (``tier``)."""

    query: str = Field(description="The question, cut to QUERY_ECHO characters with an ellipsis.")
    tier: Tier = Field(
        description=(
            "confident: `results` answer the question; guess: the evidence is too thin to vouch "
            "for any entry, `guesses` are the nearest ones; nothing: no word of the question "
            "speaks for the map."
        )
    )
    results: list[Hit] = Field(description="Confident matches only, best first (tier confident).")
    guesses: list[Hit] = Field(
        default_factory=list,
        description="Tier guess: the nearest entries, shown as a guess, scores at most the floor.",
    )
    map_words: list[str] = Field(
        default_factory=list,
        description="Tier guess: the question's words that speak for the map (why not nothing).",
    )
    corrections: dict[str, str] = Field(
        default_factory=dict, description="Typo -> word searched instead."
    )
    english_only: bool = Field(
        default=False, description="The question is not in English: the bot reads English only."
    )
    close_call: bool = Field(default=False, description="The top two are too close to pick one.")
    known_topics: list[str] = Field(
        default_factory=list, description="What the bot knows, when nothing matched."
    )
    unrelated_words: list[str] = Field(
        default_factory=list,
        description="When nothing matched: the question's words the map never uses.",
    )

    @property
    def shows_entries(self) -> bool:
        """Whether any entry is shown, confident or guessed."""
        return bool(self.results or self.guesses)

    @property
    def shown(self) -> list[Hit]:
        """The entries shown, whichever the tier: the confident results, else the guesses."""
        return self.results or self.guesses


QUERY_ECHO = 500  # a question is echoed back at most this long: enough to recognise, never a wall


def echo(question: str) -> str:
    """The question as echoed back: whole when short,
    else cut after its last whole word, with "…".
    """
    question = question.strip()
    if len(question) <= QUERY_ECHO:
        return question
    head = question[: QUERY_ECHO - 1]
    if not question[QUERY_ECHO - 1].isspace() and any(c.isspace() for c in head):
        head = head[: max(i for i, c in enumerate(head) if c.isspace())]
    return head.rstrip() + "…"


class Unanswered(Answer):
    """An empty line in a batch of questions: an answer with nothing in it that says so, so output
    lines stay aligned (an answer, so its JSON has every key an answer has).

    Its validator is built when the first one is made (pydantic's defer_build): only ``ask -``
    over a batch with an empty line makes one, and a plain ask does not pay for it."""

    model_config = ConfigDict(defer_build=True)

    query: str = ""
    tier: Tier = "nothing"
    results: list[Hit] = Field(default_factory=list)
    error: str = "empty question"


@dataclass
class AnswerStream:
    """`ask -`: answers produced one by one as the questions arrive, rendered as they come."""

    answers: Iterator[Any]
