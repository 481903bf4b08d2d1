"""Is the question about the map at all?  Decided on evidence from its words.

The question is scored as a text from two sources: the catalog's own language
(each stem's share of the catalog's words) mixed with general English, against
general English alone (wordfreq).  The evidence is the log10 likelihood ratio,
summed over the question's content words:

* a word the catalog uses far more than English does ("GRPO", "rollouts",
  "overoptimization") is strong evidence for the map;
* an everyday word the catalog uses about as much as English ("size", "work")
  is close to no evidence, and one it uses less is slight evidence against;
* an English word the catalog never uses ("cookies", "desert", "fright") is
  evidence against, bounded by ``log10(1 - mix)``: the sense of "batch" in
  "batch size for cookies" is given away by the word next to it;
* a typo counts as the word it was corrected to; a word neither English nor in
  the catalog (an id, a code name) counts for nothing;
* next to such a foreign word, the catalog's *everyday* words (common English:
  "batch", "size", "reward", "policy") are likely used in their everyday sense,
  so their evidence is scaled down (``everyday_weight``); words the catalog
  owns ("GRPO", "entropy", "rollout") keep theirs.

An arXiv id the catalog has is decisive.  The mixture weight and the
threshold are chosen by cross-validation on the tuning set (params.py).
"""

from __future__ import annotations

import math

from rlmap_bot.search.params import Params
from rlmap_bot.search.query import Query

# wordfreq's large English list ends near Zipf 1: a word it does not list is at most that common.
EN_FLOOR_ZIPF = 1.0


def word_evidence(lexicon, stem: str, kind: str, mix: float, discount: float = 0.0) -> float:
    if kind == "foreign":
        return math.log10(1.0 - mix)
    if kind not in ("known", "corrected") or not any(c.isalpha() for c in stem):
        return 0.0  # numbers ("12", "22.04") say nothing about the topic
    cf, _df, en_zipf = lexicon.terms.get(stem, (0, 0, 0.0))
    if not cf:
        return 0.0
    # Absolute discounting: a word the catalog uses once or twice is a weak estimate of its
    # language, not evidence (a small catalog makes every word it happens to use look specific).
    p_catalog = max(cf - discount, 0.0) / lexicon.total_tokens
    p_english = 10.0 ** (max(en_zipf, EN_FLOOR_ZIPF) - 9.0)
    return math.log10(mix * p_catalog / p_english + (1.0 - mix))


def evidence(query: Query, lexicon, params: Params, arxiv_hit: bool) -> tuple[float, dict[str, float]]:
    """Total evidence that the question is about the map, and each word's share of it."""
    foreign = any(w.kind == "foreign" for w in query.words)
    per_word = {}
    for w in query.words:
        e = word_evidence(lexicon, w.stem, w.kind, params.mix, params.discount)
        if foreign and e > 0 and lexicon.terms.get(w.stem, (0, 0, 0.0))[2] >= params.everyday_zipf:
            e *= params.everyday_weight
        per_word[w.surface] = e
    if arxiv_hit:
        return math.inf, per_word
    return sum(per_word.values()), per_word
