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

Further, each chosen by cross-validation (params.py): off-topic questions
sent to this bot borrow the catalog's words too (``borrow``), which bounds
what one word proves; an uncorrectable word wordfreq lists is foreign
("sourdough"); a very common foreign word ("ago", "wrote") counts half;
names and bylines are not discounted ("Hafner"); a multi-word title or
alias found whole, and each phrase the catalog writes ("chain of thought"),
add evidence.  An arXiv id the catalog has is decisive.

A byline's full name found whole ("Jimmy Ba", "Andy Jones", "Google Brain"), or a byline word
cited as "Lambert et al", is read as one token of the catalog, not as its everyday words: its
English probability is that of its words together (their product, as if independent), so it
counts as much as a word only the catalog uses, bounded by ``borrow`` like any word, and its
evidence is shared by its words (``name_tokens``).
"""

from __future__ import annotations

import math

from rlmap_bot.search import bylines
from rlmap_bot.search.params import EN_FLOOR_ZIPF, ENTITY_ZIPF, Params
from rlmap_bot.search.query import ASKS_AUTHOR, Query
from rlmap_bot.search.recall import byline_rows
from rlmap_bot.text import NUMBER_WORDS, stem

_NO_TERM = (0, 0, 0.0)  # a stem the catalog never uses: no uses, no documents, no English Zipf


def word_evidence(
    lexicon,
    stem: str,
    kind: str,
    mix: float,
    discount: float = 0.0,
    borrow: float = 0.0,
    rare_zero: bool = False,
) -> float:
    if kind == "foreign":
        return math.log10((1.0 - mix) / (1.0 - borrow))
    if kind not in ("known", "corrected") or not any(c.isalpha() for c in stem):
        return 0.0  # numbers ("12", "22.04") say nothing about the topic
    cf, _df, en_zipf = lexicon.terms.get(stem, _NO_TERM)
    if not cf:
        return 0.0
    # Absolute discounting: a word the catalog uses once or twice is a weak estimate of its
    # language, not evidence (a small catalog makes every word it happens to use look specific).
    p_catalog = max(cf - discount, 0.0) / lexicon.total_tokens
    if rare_zero and p_catalog == 0.0:
        return 0.0  # used too rarely to say anything, for or against
    p_english = 10.0 ** (max(en_zipf, EN_FLOOR_ZIPF) - 9.0)
    ratio = p_catalog / p_english
    # Off-topic questions sent to this bot borrow the map's words ("batch size for cookies"): with
    # weight ``borrow`` the off-topic side draws its words from the catalog too, which bounds what
    # one word can prove at log10(mix / borrow).
    return _log_odds(ratio, mix, borrow)


def _log_odds(ratio: float, mix: float, borrow: float) -> float:
    """The evidence of one token whose catalog probability is ``ratio`` times its English one."""
    return math.log10((mix * ratio + (1.0 - mix)) / (borrow * ratio + (1.0 - borrow)))


def evidence(
    query: Query, lexicon, params: Params, arxiv_hit: bool, names=(), everyday: set | None = None
) -> tuple[float, dict[str, float]]:
    """Total evidence that the question is about the map, and each word's share of it.

    ``names`` are the titles and aliases recall found whole in the question (recall.NameMatch);
    ``everyday``, when given, receives the words read in their everyday sense: catalog words common
    in English, beside a foreign word, whose evidence was scaled down (``everyday_weight``).
    """
    kinds = [_kind(w, query, params) for w in query.words]
    # A quantity in words counts for nothing (number_words_neutral), so it tells no other word's
    # sense either: "percent" beside "score" is how a run is told, not another subject.
    foreign = any(
        k == "foreign" and not (params.number_words_neutral and w.surface in NUMBER_WORDS)
        for w, k in zip(query.words, kinds, strict=True)
    )
    # Words in a phrase the catalog uses ("chain of thought", "gradient descent") are in its sense.
    in_phrase: set[int] = set()
    phrases = 0
    if params.phrase_keep or params.phrase_evidence:
        seq = [(i, w) for i, w in enumerate(query.words) if kinds[i] in ("known", "corrected")]
        for (i, a), (j, b) in zip(seq, seq[1:], strict=False):
            if j == i + 1 and lexicon.has_pair(a.stem, b.stem):
                in_phrase.update((i, j))
                phrases += 1
    per_word = {}
    for i, (w, kind) in enumerate(zip(query.words, kinds, strict=True)):
        # A name is an identity, not a sample of the catalog's language: a byline or one-word name
        # the catalog writes only a few times ("Hafner") is not discounted away.
        if params.number_words_neutral and w.surface in NUMBER_WORDS:
            per_word[w.surface] = 0.0  # a quantity in words, like one in digits
            continue
        en_zipf = lexicon.terms.get(w.stem, _NO_TERM)[2]
        entity = params.entity_undiscounted and _entity(lexicon, w, en_zipf)
        discount = 0.0 if entity else params.discount
        e = word_evidence(
            lexicon, w.stem, kind, params.mix, discount, params.borrow, params.rare_zero
        )
        zipf = w.zipf if kind == "foreign" else en_zipf
        if (
            e < 0
            and zipf >= params.common_foreign_zipf
            and (kind == "foreign" or params.common_known)
        ):
            e *= params.common_foreign_weight
        if (
            foreign
            and e > 0
            and en_zipf >= params.everyday_zipf
            and not (params.phrase_keep and i in in_phrase)
        ):
            e *= params.everyday_weight
            if everyday is not None:
                everyday.add(w.surface)
        per_word[w.surface] = e
    if arxiv_hit:
        return math.inf, per_word
    if params.name_tokens:
        for _label, parts, uses, p_english in _name_tokens(query, lexicon):
            ratio = uses / lexicon.total_tokens / max(p_english, 1e-300)
            share = _log_odds(ratio, params.mix, params.borrow) / len(parts)
            for part in parts:
                per_word[part] = share  # the name counts once, shared by its words
                if everyday is not None:
                    everyday.discard(part)  # a name's words are not read in an everyday sense
    total = sum(per_word.values()) + params.phrase_evidence * min(phrases, 2)
    if params.name_evidence and any(m.span[1] - m.span[0] >= 2 for m in names):
        total += params.name_evidence  # a title or alias of two words or more, found whole
    return total, per_word


def name_stems(query: Query, lexicon) -> list[frozenset[str]]:
    """The stems of each byline name of two words or more found whole in the question ("Andy
    Jones", "UT Austin"): the words of one name say one thing, as the gate counts them."""
    return [
        frozenset(stem(w) for w in parts)
        for _, parts, _, _ in _name_tokens(query, lexicon)
        if len(parts) >= 2
    ]


def _name_tokens(query: Query, lexicon) -> list[tuple[str, list[str], int, float]]:
    """People and organisations named in the question as the catalog writes them: (name, the
    question's words that make it, how many entries carry it, its English probability).

    A name of two words or more must be there whole ("Jimmy Ba", "Google Brain"; an initial may
    be left out: "Andy Jones" for "Andy L. Jones"); one byline word counts when cited with "et al".
    Worked out once per query (the gate, coherence and lone_word all ask).
    """
    found = query.memo.get("name_tokens")
    if found is None:
        found = query.memo["name_tokens"] = _find_name_tokens(query, lexicon)
    return found


def _find_name_tokens(query: Query, lexicon) -> list[tuple[str, list[str], int, float]]:
    by_stem = {w.stem: w.surface for w in query.words if w.kind == "known"}
    found: dict[str, tuple[str, list[str], int, float]] = {}
    for s in by_stem:
        rows = byline_rows(lexicon, s)
        for entry_id, label, person, _zipf in rows:
            for ws in bylines.names(label, person):
                if len(ws) < 2:
                    continue  # a name of one word is a word of the question, counted as such
                name = " ".join(ws)
                stems = {stem(w) for w in ws}
                if name in found or s not in stems or not stems <= by_stem.keys():
                    continue
                zipfs = {
                    p: z
                    for p in stems
                    if (z := lexicon.byline_zipf(p, entry_id, label)) is not None
                }
                uses = len({r[0] for r in rows if r[1] == label})
                found[name] = (
                    name,
                    [by_stem[p] for p in stems],
                    uses,
                    _product(zipfs.get(p, 0.0) for p in stems),
                )
    cited = query.all_words
    for i, surface in enumerate(cited[:-2]):
        if cited[i + 1 : i + 3] != ["et", "al"]:
            continue
        s = stem(surface)
        cites = byline_rows(lexicon, s) if s in by_stem else []
        if not cites or any(by_stem[s] in parts for _, parts, _, _ in found.values()):
            continue  # no byline word, or already part of a full name
        p_english = _product((cites[0][3], lexicon.english_zipf("et"), lexicon.english_zipf("al")))
        found[f"{surface} et al"] = (
            f"{surface} et al",
            [by_stem[s]],
            len({r[0] for r in cites}),
            p_english,
        )
    return list(found.values())


def _product(zipfs) -> float:
    """The probability of words together, taken as independent (wordfreq Zipf -> probability)."""
    return math.prod(10.0 ** (max(z, EN_FLOOR_ZIPF) - 9.0) for z in zipfs)


def _entity(lexicon, word, zipf: float) -> bool:
    """A byline word that names someone alone, or a one-word name, that is no everyday English word
    (wordfreq Zipf under 4);
    ``zipf``: the word's English Zipf as the lexicon has it."""
    if word.kind != "known":
        return False
    # A byline word that names no one alone ("Zürich" of ETH Zürich, "AI" of DeepSeek-AI) is a word
    # like any other (search/bylines.py).
    return zipf < ENTITY_ZIPF and (
        lexicon.names_alone(word.stem, word.surface) or word.stem in lexicon.names
    )


def _kind(word, query: Query, params: Params) -> str:
    """The word's kind as evidence: the query's reading, with two refinements the gate may use."""
    if params.form_neutral and query.authorship and word.surface in ASKS_AUTHOR:
        return "form"  # "who wrote ...": the words that ask for an author say nothing of the topic
    if word.kind == "unknown" and word.zipf >= params.unknown_foreign_zipf:
        return "foreign"  # not a typo of any catalog word, yet an English word: "sourdough"
    return word.kind
