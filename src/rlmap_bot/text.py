"""Text normalisation shared by the index and the query side.

Both sides go through :func:`tokens`, so British spellings, plurals,
possessives and punctuation meet in one form and FTS5 (unicode61, no stemmer)
matches them exactly.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+(?:[.@+][a-z0-9]+)*")
ARXIV = re.compile(r"\b(\d{4}\.\d{4,5})(?:v\d+)?\b")

# British -> American forms that matter in this field; applied per token.
_BRITISH = {
    "optimisation": "optimization", "optimisations": "optimization", "optimise": "optimize",
    "optimised": "optimized", "optimiser": "optimizer", "optimisers": "optimizer",
    "optimising": "optimizing", "overoptimisation": "overoptimization", "over-optimisation": "overoptimization",
    "generalisation": "generalization", "generalise": "generalize", "normalisation": "normalization",
    "normalise": "normalize", "regularisation": "regularization", "utilisation": "utilization",
    "parallelisation": "parallelization", "behaviour": "behavior", "behaviours": "behavior",
    "modelling": "modeling", "labelled": "labeled", "labelling": "labeling", "analyse": "analyze",
    "centre": "center", "colour": "color", "favour": "favor", "organisation": "organization",
    "tokenisation": "tokenization", "minimise": "minimize", "maximise": "maximize",
    "characterising": "characterizing", "characterise": "characterize", "summarise": "summarize",
}

STOPWORDS = frozenset(
    """a an the and or but of to in on at for from by with about into over under as is are was were be been being
    it its this that these those there here what which who whom whose when where why how do does did doing done
    i me my we our us you your he she they them their his her can could should would will shall may might must
    have has had having not no yes so if then than too very just also any some all each every more most much
    many few one get got give tell show find look looking see know want need please thanks thank hi hello hey
    anything something everything paper papers work works article study studies read reading say says said
    bot rlmap ask question questions answer think like use using used go going let lets make up out off""".split()
)


@lru_cache(maxsize=65536)
def _norm_token(tok: str) -> str:
    tok = _BRITISH.get(tok, tok)
    if tok.endswith("'s") or tok.endswith("’s"):
        tok = tok[:-2]
    if len(tok) > 4 and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is", "ics")):
        return tok[:-1]
    return tok


def fold(text: str) -> str:
    """Accents and width folded away: "Zürich" -> "Zurich", "réward" -> "reward", "ＰＰＯ" -> "PPO"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokens(text: str) -> list[str]:
    """Lower-cased, normalised word tokens, stopwords kept (names need them)."""
    lowered = fold(text).lower().replace("’", "'").replace("'s ", " ").replace("-", " ")
    lowered = lowered.replace("'s", "")
    out: list[str] = []
    for raw in _WORD.findall(lowered):
        for part in raw.replace("@", " ").replace("+", " ").split():
            # "pass@k" and "2.77" stay whole; "e.g." style dotted words split.
            if "." in part and not re.fullmatch(r"\d+(\.\d+)*", part):
                out.extend(_norm_token(p) for p in part.split(".") if p)
            else:
                out.append(_norm_token(part))
    return out


def content_tokens(text: str) -> list[str]:
    """Tokens that carry meaning: stopwords dropped, order kept, no repeats."""
    seen: dict[str, None] = {}
    for tok in tokens(text):
        if tok not in STOPWORDS and tok not in seen:
            seen[tok] = None
    return list(seen)


def normalize(text: str) -> str:
    """One string of normalised tokens, for fuzzy comparison and the FTS index."""
    return " ".join(tokens(text))


def normalize_content(text: str) -> str:
    return " ".join(content_tokens(text))
