"""Text normalisation shared by the index and the query side.

Two forms of a word exist:

* the *surface* form (:func:`words`): lower case, accents and width folded,
  British spelling folded to American, possessive "'s" dropped.  The index
  columns hold surface words, FTS5 stems them itself (``porter`` tokenizer),
  and spelling correction and the English-word check work on them: "stuck" is
  an English word, its stem says nothing about that.
* the *stem* (:func:`stem`, Snowball English via PyStemmer): what names,
  authors and word statistics are matched on, so "rewards", "rewarded" and
  "reward" meet without a hand-written plural stripper ("goes" never becomes
  a word of its own that needs correcting).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+(?:[.@+][a-z0-9]+)*")
ARXIV = re.compile(r"\b(\d{4}\.\d{4,5})(?:v\d+)?\b")

# British -> American forms that matter in this field; applied per word, before stemming.
_BRITISH = {
    "optimisation": "optimization",
    "optimisations": "optimizations",
    "optimise": "optimize",
    "optimised": "optimized",
    "optimiser": "optimizer",
    "optimisers": "optimizers",
    "optimising": "optimizing",
    "overoptimisation": "overoptimization",
    "generalisation": "generalization",
    "generalise": "generalize",
    "normalisation": "normalization",
    "normalise": "normalize",
    "regularisation": "regularization",
    "utilisation": "utilization",
    "parallelisation": "parallelization",
    "behaviour": "behavior",
    "behaviours": "behaviors",
    "modelling": "modeling",
    "labelled": "labeled",
    "labelling": "labeling",
    "analyse": "analyze",
    "centre": "center",
    "colour": "color",
    "colours": "colors",
    "favour": "favor",
    "organisation": "organization",
    "tokenisation": "tokenization",
    "minimise": "minimize",
    "maximise": "maximize",
    "characterising": "characterizing",
    "characterise": "characterize",
    "summarise": "summarize",
    "prioritised": "prioritized",
    "misbehaviour": "misbehavior",
    "maths": "math",
    "generalised": "generalized",
    "normalised": "normalized",
}

# "don't" is "do not", not the words "don" and "t".
_CONTRACTIONS = {
    "n't": "not",
    "'re": "are",
    "'ve": "have",
    "'ll": "will",
    "'d": "would",
    "'m": "am",
}
_CONTRACTION = re.compile(r"(n't|'re|'ve|'ll|'d|'m)\b")
_POSSESSIVE = re.compile(r"'s\b")
_NUMBER = re.compile(r"\d+(\.\d+)*")

STOPWORDS = frozenset(
    """a an the and or but of to in on at for from by with about into over under as is are was were
    be been being it its this that these those there here what which who whom whose when
    where why how do does did doing done i me my we our us you your he she they them
    their his her can could should would will shall may might must have has had having
    not no yes so if then than too very just also any some all each every more most much
    many few one get got give tell show find look looking see know want need please
    thanks thank hi hello hey anything something everything paper papers work works
    article study studies read reading say says said bot rlmap ask question questions
    answer think like use using used go going goes went let lets make up out off et al ca
    wo am summarize summary summaries overview gist tldr eli5 rundown recap briefly quick
    quickly explain explained explanation takeaway takeaways ok okay lol huh hmm hm btw
    fyi pls plz thx anyone anybody guys folks""".split()
)
# The last line: chat's fillers ("still ok?", "lol", "huh?", "anyone seen this?"), like "hi" and
# "thanks" above; counted as foreign words they held everyday questions about a run under the floor
# (held out on the tuning set: top-3 0.924 -> 0.928, MRR 0.883 -> 0.887, rejection the same).
# The two lines before it: how people ask for an entry ("can you summarise the DAPO paper", "explain
# ScaleRL briefly", "the gist of DreamerV3"), like "tell", "show" and "please" above; the map never
# uses them as topics, and counted as evidence they turned a named lookup into "nothing relevant".
# Words that look like content but are no evidence of what an entry is about: "et al." and
# "team" sit in bylines ("Kimi Team"), "paper"/"arxiv" in how people refer to any entry, "vs" in
# any comparison.
NOT_EVIDENCE = frozenset("team teams arxiv http https www org abs pdf html vs versus".split())
# Quantities spelled out. A number in digits says nothing about what a question is about, so the
# off-topic evidence counts it as nothing (offtopic.word_evidence); "a fifth", "a dozen times" and
# "twenty percent" are the same numbers in words, and as foreign words they counted against
# questions that describe a run with its figures ("about a fifth of answers hit the length limit").
NUMBER_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred hundreds thousand thousands million millions billion billions dozen
    dozens half halves third thirds quarter quarters fifth fifths tenth tenths twice
    thrice percent percentage pct""".split()
)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer: Snowball English, a C extension that imports in about a millisecond

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball English stem of a surface word; numbers and ids stay as they are."""
    if not word.isalpha():
        return word
    return _stemmer().stemWord(word)


def fold(text: str) -> str:
    """Accents and width folded away: "Zürich" -> "Zurich", "réward" -> "reward",
    "ＰＰＯ" -> "PPO"."""
    if text.isascii():
        return text  # nothing to fold: ASCII is its own NFKD form, with no combining marks
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    """Surface words: lower case, folded, British ->
    American, possessives dropped, stopwords kept.
    """
    lowered = fold(text).lower().replace("’", "'").replace("-", " ").replace("_", " ")
    if "'" in lowered:  # contractions and possessives both have one
        lowered = _CONTRACTION.sub(lambda m: " " + _CONTRACTIONS[m.group(1)], lowered)
        lowered = _POSSESSIVE.sub("", lowered)
    out: list[str] = []
    for raw in _WORD.findall(lowered):
        if "." not in raw and "@" not in raw and "+" not in raw:
            out.append(_BRITISH.get(raw, raw))  # one plain word, as most are
            continue
        for part in raw.replace("@", " ").replace("+", " ").split():
            # "2.77" and arXiv ids stay whole; "e.g." and "arxiv.org" split.
            if "." in part and not _NUMBER.fullmatch(part):
                out.extend(_BRITISH.get(p, p) for p in part.split(".") if p)
            else:
                out.append(_BRITISH.get(part, part))
    return out


def content_words(text: str) -> list[str]:
    """Surface words that carry meaning: stopwords and
    non-evidence dropped, order kept, no repeats.
    """
    seen: dict[str, None] = {}
    for w in words(text):
        if w not in STOPWORDS and w not in NOT_EVIDENCE and w not in seen:
            seen[w] = None
    return list(seen)


def content_tokens(text: str) -> list[str]:
    """Stems of the content words, order kept, no repeats."""
    return list(dict.fromkeys(stem(w) for w in content_words(text)))


def normalize(text: str) -> str:
    """One string of surface words: what the index columns hold (FTS5 stems them itself)."""
    return " ".join(words(text))


def normalize_content(text: str) -> str:
    """The content stems of a text as one string: the key names and aliases are matched on."""
    return " ".join(content_tokens(text))
