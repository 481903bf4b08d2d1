"""What a question says, before any entry is scored: its words, typos, ids and intent.

A question is capped first (``MAX_CHARS``, ``MAX_WORDS``) so a pasted log or a
100 KB wall of words costs the same as a long question.  Each content word is
then one of:

* ``known``: its stem is in the index;
* ``corrected``: not an English word and not in the index, so a typo, corrected
  to the closest index word ("rewrad" -> "reward");
* ``foreign``: an English word the catalog never uses ("cookies", "desert");
  never corrected, it is evidence the question is about something else;
* ``unknown``: neither (ids, code names): no evidence either way.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from rlmap_bot.search.params import (
    CORRECTION_SIMILARITY,
    ENGLISH_ZIPF,
    ENTITY_ZIPF,
    MARKER_SHARE,
    MIN_CORRECTABLE,
    MIN_MARKERS,
    OTHER_SCRIPT_SHARE,
    SETTING_ASKERS,
    SETTING_FILLERS,
    SETTING_GAP,
    SETTING_PAST,
    SETTINGS,
)
from rlmap_bot.text import ARXIV, NOT_EVIDENCE, STOPWORDS, fold, normalize, stem, words

# A question longer than this is read from its start only: 2,000 characters is about 300
# words, several times the longest question in tests/questions.yaml (about 20 content words).
MAX_CHARS = 2000
MAX_WORDS = 60  # content words used, for the same reason
MAX_CORRECTIONS = 8  # each correction scans the vocabulary; a question has a few typos, not dozens

# Words that ask who wrote something ("who wrote PPO", "papers by Schulman", "PPO authors").
AUTHOR_NOUNS = frozenset("author authors authored authorship wrote written byline".split())
AUTHOR_VERBS = frozenset(
    """wrote write writes written proposed propose proposes introduced introduce introduces invented
    invent created create developed develop published publish released release came made
    behind originated""".split()
)
ASKS_AUTHOR = (
    AUTHOR_NOUNS | AUTHOR_VERBS
)  # every word of "who wrote X" that asks for a person, not a topic


# Chat markup is not part of the question: mentions, channel links, URLs and emoji are
# dropped, a link's label and a code span's text are kept (`clip_fraction` is asked about).
_MARKUP = [
    (re.compile(r"<[@!][^>]*>"), " "),  # <@U123>, <!here>: Slack mentions, when they arrive raw
    (re.compile(r"<#[^>]*>"), " "),  # <#C1|general>
    (
        re.compile(r"<(?:https?://|mailto:)[^>|]*\|([^>]*)>"),
        r" \1 ",
    ),  # <https://...|label>: the label
    (re.compile(r"<(?:https?://|mailto:)[^>]*>"), " "),
    (re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE), " "),
    (
        re.compile(r"(?<![\w&])#[a-z0-9][a-z0-9_.-]*", re.IGNORECASE),
        " ",
    ),  # #general, as Slack text reads it
    (
        re.compile(r":[a-z0-9_+'-]*[a-z][a-z0-9_+'-]*:", re.IGNORECASE),
        " ",
    ),  # :tada:, :+1::skin-tone-2:
    (re.compile(r"`+"), " "),  # `code` and ```blocks```: the text stays, the marks go
]


def plain(text: str) -> str:
    """The question without chat markup."""
    if not any(c in text for c in "<#:`") and "www." not in text.lower():
        return text  # every pattern above needs one of these (a URL with a scheme has a colon)
    for pattern, replacement in _MARKUP:
        text = pattern.sub(replacement, text)
    return text


_WORD = re.compile(r"[^\W\d_]+")


def other_language(text: str, all_words: list[str], markers: frozenset[str], lexicon=None) -> bool:
    ascii_only = text.isascii()  # every ASCII letter is Latin, and has no diacritic
    letters = [] if ascii_only else [c for c in text if c.isalpha()]
    if letters and sum(
        1 for c in letters if "LATIN" not in unicodedata.name(c, "")
    ) >= OTHER_SCRIPT_SHARE * len(letters):
        return True
    found = {w for w in all_words if w in markers}
    if lexicon is not None and found and not ascii_only:
        # Beside one of another language's common words, a word written with a diacritic that
        # neither the catalog nor English has ("divergência", "fällt") is that language's too;
        # "café" and "naïve" are English, and names alone ("Hervé Jégou") are no language.
        for raw in _WORD.findall(text):
            if not raw.isascii():
                w = fold(raw).lower()
                if not lexicon.knows(stem(w)) and lexicon.english_zipf(w) < ENGLISH_ZIPF:
                    found.add(w)
    hits = sum(1 for w in all_words if w in found)
    return hits >= MIN_MARKERS and hits >= MARKER_SHARE * len(all_words)


@dataclass(slots=True)  # a question makes a few dozen: slots make them quicker to build
class Word:
    surface: str  # as typed, normalised
    stem: str  # what is matched: the stem of the word, or of its correction
    kind: str  # known, corrected, foreign, unknown
    fixed: str | None = None  # the index word a typo was corrected to
    zipf: float = (
        0.0  # wordfreq Zipf of a word the index lacks (0 when known, or rarer than the table keeps)
    )


@dataclass
class Query:
    text: str  # the question as used (capped)
    normalized: str = ""  # its surface words as one string, markup included (text.normalize)
    words: list[Word] = field(default_factory=list)
    all_words: list[str] = field(default_factory=list)  # every surface word, stopwords included
    arxiv: list[str] = field(default_factory=list)
    authorship: bool = False
    other_language: bool = False  # not written in English: answered with a note
    # The setting whose value the question asks for, of those the catalog gives no value for
    # ("learning rate" in "what learning rate for RLHF on a 7B model?"; asks_setting), whether it
    # asks what was done ("did", "used": params.SETTING_PAST), and the word right after "does",
    # "do" or "did" (an article skipped): whom it asks about ("verl" in "how much GPU memory does
    # verl save").
    setting: str = ""
    past: bool = False
    asked_of: str = ""
    # What later steps work out from the query alone, kept so each is worked out once per question
    # (a query is read against one lexicon, and neither changes): offtopic's cited names.
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def corrections(self) -> dict[str, str]:
        return {w.surface: w.fixed for w in self.words if w.fixed}

    @property
    def stems(self) -> list[str]:
        return [w.stem for w in self.words if w.kind in ("known", "corrected")]


_LAST_WORD = re.compile(r"\s\S*$")


def cap(question: str) -> str:
    """The question's first MAX_CHARS characters, cut after a whole word: a word cut in two is
    neither searched nor "corrected". A first word longer than the cap (a pasted blob) is cut
    where the cap falls: it is no word of the map either way, and the answer still shows what was
    asked, cut to a length, not an empty question."""
    text = question.strip()
    if len(text) <= MAX_CHARS:
        return text
    head = text[:MAX_CHARS]
    if not text[MAX_CHARS].isspace():
        # The last word runs past the cut: drop it, unless it is the only one.
        last = _LAST_WORD.search(head)
        head = head[: last.start()] if last else head
    return head.rstrip()


def parse(question: str, lexicon) -> Query:
    """Read ``question`` against ``lexicon`` (a :class:`~rlmap_bot.search.engine.Lexicon`)."""
    text = cap(question)
    content = plain(text)  # an arXiv id still counts inside a link
    read = words(content)
    all_words = _split_run_together(_join_compounds(read, lexicon), lexicon)
    query = Query(
        text=text,
        normalized=" ".join(read) if content == text else normalize(text),
        all_words=all_words,
        arxiv=list(dict.fromkeys(ARXIV.findall(text))),
        other_language=other_language(content, all_words, lexicon.markers, lexicon),
    )
    seen: set[str] = set()
    corrections = 0
    named: dict[str, list[str]] | None = None  # read when a correction needs it
    for surface in all_words:
        if surface in STOPWORDS or surface in NOT_EVIDENCE or surface in seen:
            continue
        seen.add(surface)
        if len(query.words) >= MAX_WORDS:
            break
        s = stem(surface)
        if lexicon.knows(s):
            query.words.append(Word(surface, s, "known"))
            continue
        zipf = lexicon.english_zipf(surface) if surface.isalpha() else 0.0
        if zipf >= ENGLISH_ZIPF:
            query.words.append(Word(surface, s, "foreign", zipf=zipf))
        elif (
            corrections < MAX_CORRECTIONS
            and len(surface) >= MIN_CORRECTABLE
            and surface.isalpha()
            and not query.other_language
        ):  # "fallt" in a German question is no typo of "falls"
            corrections += 1
            fixed = lexicon.correct(surface, CORRECTION_SIMILARITY)
            if fixed and named is None:
                named = _capitalised_inside(content)
            if (
                fixed
                and named is not None
                and surface in named
                and not lexicon.is_byline_word(stem(fixed))
                and fixed not in lexicon.names
                and not any(
                    lexicon.has_pair(*pair)
                    for n in named[surface]
                    for pair in ((stem(fixed), stem(n)), (stem(n), stem(fixed)))
                )
            ):
                fixed = None  # "Lilian Weng" is a name the catalog lacks, not a typo of "went"
            if fixed:
                query.words.append(Word(surface, stem(fixed), "corrected", fixed, zipf=zipf))
            else:
                query.words.append(Word(surface, s, "unknown", zipf=zipf))
        else:
            query.words.append(Word(surface, s, "unknown", zipf=zipf))
    present = set(all_words)
    query.authorship = (
        bool(present & AUTHOR_NOUNS)
        or (("who" in present or "whose" in present) and bool(present & AUTHOR_VERBS))
        or _by_someone(all_words, lexicon)
        or ("et" in present and "al" in present)
    )
    query.setting = asks_setting(all_words)
    query.past = not present.isdisjoint(SETTING_PAST)
    query.asked_of = _asked_of(all_words) if query.setting else ""
    return query


def _asked_of(all_words: list[str]) -> str:
    """The word after the first "does", "do" or "did", an article skipped ("what learning rate does
    the PPO paper use": "ppo")."""
    for i, w in enumerate(all_words[:-1]):
        if w in ("does", "do", "did"):
            rest = [x for x in all_words[i + 1 : i + 3] if x not in ("the", "a", "an")]
            return rest[0] if rest else ""
    return ""


_ASKERS = [tuple(a.split()) for a in SETTING_ASKERS]
_SETTINGS = [tuple(s.split()) for s in SETTINGS]


def _as_setting(word: str) -> str:
    """A word as params.SETTINGS writes it: a plural's "s" dropped ("gpus", "a100s"), British
    "-iser" as "-izer" ("tokeniser")."""
    if word.endswith("iser") or word.endswith("isers"):
        word = word.replace("iser", "izer")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def asks_setting(all_words: list[str]) -> str:
    """The setting whose value or recommendation the question asks for: a word that asks for one
    (params.SETTING_ASKERS), then at most SETTING_GAP filler words, then a setting of
    params.SETTINGS ("what's a good KL coefficient", "how many GPUs do I need", "which tokenizer
    should I use"). "" when the question asks for none ("why does a larger learning rate ...")."""
    if not any(_as_setting(w) in {s[0] for s in _SETTINGS} for w in all_words):
        return ""  # most questions name no setting: no scan
    folded = [_as_setting(w) for w in all_words]
    for i in range(len(folded)):
        for asker in _ASKERS:
            if tuple(all_words[i : i + len(asker)]) != asker:
                continue
            j = i + len(asker)
            for gap in range(SETTING_GAP + 1):
                for setting in _SETTINGS:
                    if tuple(folded[j + gap : j + gap + len(setting)]) == setting:
                        return " ".join(setting)
                if j + gap >= len(all_words) or all_words[j + gap] not in SETTING_FILLERS:
                    break
    return ""


# Two or more capitalised words after a lower-case
# one ("anything from Lilian Weng"): a person's name.
# One capitalised word is as often a typo written with a capital ("what about Entorpy collapse").
_CAPITALISED_RUN = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")


def _capitalised_inside(text: str) -> dict[str, list[str]]:
    """The words of capitalised runs inside a sentence
    (lower-cased), each with its neighbours in the
    run. They are names: corrected only into a name, or into a phrase the catalog writes with a
    neighbour ("Reward Hackign" is reward hacking; "Lilian Weng" is not "lilian went")."""
    out: dict[str, list[str]] = {}
    for run in _CAPITALISED_RUN.findall(text):
        words = run.lower().split()
        for i, w in enumerate(words):
            out.setdefault(w, []).extend(words[max(0, i - 1) : i] + words[i + 1 : i + 2])
    return out


def _join_compounds(ws: list[str], lexicon) -> list[str]:
    """ "over-optimisation", "roll outs": two words the catalog writes as one are that one word."""
    out: list[str] = []
    vocab = lexicon.vocab_df
    joined = False  # the word was joined to the one before it
    for a, b in zip(ws, [*ws[1:], ""], strict=False):  # "": no word after the last
        if joined:
            joined = False
            continue
        # Six letters or more: short joins ("in" + "to") are words of their own.
        if b and len(a) + len(b) >= 6 and a.isalpha() and b.isalpha() and (a + b) in vocab:
            out.append(a + b)
            joined = True
        else:
            out.append(a)
    return out


def _split_run_together(ws: list[str], lexicon) -> list[str]:
    """ "r1zero", "r2egym": a name of several words typed as one is those words, unless it is a word
    of its own: the catalog's ("apex", the alias ApeX, is never split into Ape-X) or English's."""
    if lexicon.run_together.keys().isdisjoint(ws):
        return ws  # no word is a name typed run together
    out: list[str] = []
    for w in ws:
        parts = lexicon.run_together.get(w)
        if parts and not lexicon.knows(stem(w)) and lexicon.english_zipf(w) < ENGLISH_ZIPF:
            out.extend(parts)
        else:
            out.append(w)
    return out


def _by_someone(all_words: list[str], lexicon) -> bool:
    """ "papers by Schulman", "by DeepSeek": "by" right before a byline word; "papers from
    DeepSeek", "anything from z.ai": "from" right before a byline name that no English text writes
    (search/bylines.py: a person's word or an organisation's first, rarer in English than a name
    must be, params.ENTITY_ZIPF), so "learning from human feedback" asks for no one."""
    if "by" not in all_words and "from" not in all_words:
        return False
    for a, b in zip(all_words, all_words[1:], strict=False):
        if a == "by" and lexicon.is_byline_word(stem(b)):
            return True
        if (
            a == "from"
            and lexicon.names_alone(stem(b), b)
            and lexicon.english_zipf(b) < ENTITY_ZIPF
        ):
            return True
    return False
