"""People and organisations in bylines, read as whole names.

A byline label is a person ("Andy L. Jones") or an organisation line that may list several ("SPCL,
ETH Zürich", "Meta and UT Austin", "Allen Institute for AI (Ai2)"): each is a name of its own. A
name is cited whole, its words written together or apart, with or without hyphens and dots, in any
case ("DeepSeek-AI", "deepseek ai", "DeepSeekAI"; "Z.ai", "zai"; "OpenAI", "open ai"), or by a
short form: a person by a word of the name ("Hafner"), an organisation by its first word
("DeepSeek" for DeepSeek-AI, "Moonshot" for Moonshot AI, "ETH" for ETH Zürich).

An organisation's later words say what kind of body it is ("AI", "Lab", "Research", "University")
or where it is ("Zürich", "Austin"): alone they name no one. judgement, from the catalog's
organisation labels: every one of them is known by its first word or whole ("Google DeepMind" is
also "DeepMind", which the catalog writes as a label of its own).
"""

from __future__ import annotations

import functools
import re

from rlmap_bot.text import NOT_EVIDENCE, STOPWORDS, words

# An organisation label may list several ("Meta and UT Austin", "Sea AI Lab / NUS", "Allen Institute
# for AI (Ai2)", "Shanghai AI Lab et al."): each is a name of its own.
ORG_PARTS = re.compile(r"\s*(?:[,/()&;]|\band\b|\bet al\b\.?)\s*")


@functools.lru_cache(maxsize=8192)
def written(label: str, person: bool) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The names of a byline label: each as the label writes it, with every word it is written
    with (text.words, numbers left out). A person's initials are left out ("Andy L. Jones": andy
    jones); an organisation's single letters are its name ("Z.ai": z ai)."""
    parts = [label] if person else ORG_PARTS.split(label)
    found: dict[tuple[str, ...], str] = {}
    for part in parts:
        ws = tuple(
            w
            for w in words(part)
            if not w.isdigit() and (len(w) >= 2 or not person) and w not in ("et", "al")
        )
        if ws:
            found.setdefault(ws, part.strip())
    return tuple((text, ws) for ws, text in found.items())


def spelled(label: str, person: bool) -> tuple[tuple[str, ...], ...]:
    """The names of a byline label, each as every word it is written with (see ``written``)."""
    return tuple(ws for _, ws in written(label, person))


@functools.lru_cache(maxsize=8192)
def names(label: str, person: bool) -> tuple[tuple[str, ...], ...]:
    """The names of a byline label as a question's content words meet them: stopwords and the words
    that are no evidence left out ("Cohere For AI": cohere ai; "Kimi Team": kimi)."""
    found = (
        tuple(w for w in ws if w not in STOPWORDS and w not in NOT_EVIDENCE)
        for ws in spelled(label, person)
    )
    return tuple(dict.fromkeys(ws for ws in found if ws))


@functools.lru_cache(maxsize=8192)
def citable(label: str, person: bool) -> frozenset[str]:
    """The words of a label that name someone alone: every word of a person's name, the first word
    of an organisation's."""
    if person:
        return frozenset(w for ws in names(label, person) for w in ws)
    return frozenset(ws[0] for ws in names(label, person))


def compact(ws) -> str:
    """Words as one string, however they were spaced ("deepseek ai", "deepseekai")."""
    return "".join(ws)


def runs(ws: tuple[str, ...], person: bool) -> frozenset[str]:
    """How a name may be cited, each as one string: a person by any run of neighbouring words of
    the name, an organisation by the run that starts at its first word ("DeepSeek", "DeepSeek-AI";
    not "AI")."""
    starts = range(len(ws)) if person else range(1)
    return frozenset(compact(ws[i:j]) for i in starts for j in range(i + 1, len(ws) + 1))


@functools.lru_cache(maxsize=8192)
def spellings(label: str, person: bool) -> frozenset[str]:
    """Every way of citing a label's names (``runs``), each as one string."""
    return frozenset().union(*(runs(ws, person) for ws in spelled(label, person)))


@functools.lru_cache(maxsize=8192)
def inner(label: str, person: bool) -> frozenset[str]:
    """An organisation's later runs of words ("DeepMind" of "Google DeepMind", "AI" of
    "DeepSeek-AI"): a name only where the catalog writes one of them as a name of its own."""
    if person:
        return frozenset()
    return frozenset(
        compact(ws[i:j])
        for ws in spelled(label, person)
        for i in range(1, len(ws))
        for j in range(i + 1, len(ws) + 1)
    )


def whole_forms(label: str, person: bool) -> dict[str, tuple[str, ...]]:
    """Each name of two words or more written as one word ("zai", "deepseekai", "moonshotai"), to
    its words: how a question may type it run together."""
    return {compact(ws): ws for ws in names(label, person) if len(ws) >= 2}


def cites(asked: list[str], label: str, person: bool, known: frozenset[str] = frozenset()) -> bool:
    """Whether the words ``asked`` name someone in ``label``, written together or apart: a run of a
    person's name, an organisation's name from its first word ("deepseek ai" and "DeepSeek" for
    DeepSeek-AI, never "deepseek research" nor "AI"), or a later run of it that ``known`` (the
    catalog's whole names, each as one string) holds as a name of its own ("DeepMind")."""
    wanted = compact(asked)
    if not wanted:
        return False
    return wanted in spellings(label, person) or (
        wanted in known and wanted in inner(label, person)
    )


def whole_names(labels) -> frozenset[str]:
    """Every whole name of the (label, person) pairs, each as one string."""
    return frozenset(compact(ws) for label, person in labels for ws in spelled(label, person))


def as_written(text: str, ws: tuple[str, ...]) -> str:
    """The words ``ws`` of a name as ``text`` writes them: the whole text when they are all of it
    ("DeepSeek-AI"), else each word with its capitals ("DeepMind" of "Google DeepMind")."""
    if tuple(w for w in words(text) if not w.isdigit()) == ws:
        return text
    cased = {words(raw)[0]: raw for raw in re.findall(r"[^\W_]+", text) if words(raw)}
    return " ".join(cased.get(w, w) for w in ws)
