"""The weights and thresholds of ask, in one place, each with where its value comes from.

Values marked "CV" were chosen by 5-fold cross-validation on tests/questions.yaml
(the tuning set; `python3 dev.py bench` reruns it): on each fold the grid
point that did best on the other four folds is scored on the held-out fold.
The locked set (tests/questions_locked.yaml) is never used to choose anything.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Params:
    # Grids are in benchmarks/tune.py; "CV" = the best grid point on the whole tuning set, whose
    # nested held-out figures the README reports.
    # -- fusion: reciprocal rank fusion of the recall lists (fuse.py) --------------------------
    # CV over {0.5, 1, 2, 5, 20}: a small k lets a first place count clearly more than a fifth.
    rrf_k: float = 1.0
    # BM25 over every field: the reference list, weight
    # 1 by definition. More say for BM25 was measured
    # (tuning set in sample, the other weights as chosen;
    # docs/measurements.md): w_bm25 {1, 1.25, 1.5, 2, 3} x
    # w_questions {0.5, 0.25} gave top-3 0.951/0.951/0.951/0.947/0.942
    # and MRR 0.917/0.912/0.907/0.896/0.894
    # at w_questions 0.5 (0.25 no better): more BM25 only lowers MRR, so it stays 1.
    # BM25's rank as the tie-breaker of equal fused scores (instead of the id) was measured the same
    # way: top-3 0.951, MRR 0.916 against 0.917, not adopted.
    w_bm25: float = 1.0
    w_names: float = 1.0  # CV over {0.5, 1, 2}: a title or alias found whole in the question
    w_authors: float = 0.5  # CV over {0.25, 0.5, 1}: byline words found in the question
    # CV over {0.25, 0.5, 1, 2}: BM25 over the curated example questions. The curated questions
    # are also a column of the BM25 list, so half weight on their own list is enough.
    w_questions: float = 0.5
    # BM25 over entries where two neighbouring words of the question stand near each other
    # (recall.py). CV over {0, 0.25, 0.5, 1}, chosen after the other fusion weights, by the
    # ranking's own objective (mean of top-3 and MRR): held out over four dealings of the folds
    # 0.920 without, 0.924 with (top-3 0.952 -> 0.949, MRR 0.889 -> 0.899; docs/measurements.md).
    w_near: float = 0.25
    # How many words may stand between the two ("tripled the compute": one). judgement: a noun
    # and what qualifies it sit within three words in English ("a model that is bigger").
    near_gap: int = 3
    # The curated-questions list: "column" = BM25 over an entry's questions run together,
    # "each" = the entry's single nearest curated question (one FTS row per question). With the
    # catalog's everyday questions in, every fold of four dealings chose "each" (20 of 20), but it
    # lowered MRR on all four untuned sets (plain words 0.939 -> 0.914), which
    # tests/test_search_quality.py refuses: "column" stays (docs/measurements.md).
    question_list: str = "column"
    # bm25() column weights: names, authors, keywords, summary, body, questions. CV over six
    # profiles (flat, names and keywords first at 8/4/4/2/1/2 and at half that, keywords and
    # questions up, body down, questions up): body at half weight won once the curated
    # questions and keywords carried the researchers' phrasings.
    columns: tuple[float, ...] = (2.0, 1.0, 1.0, 1.0, 0.5, 1.0)
    # -- names and bylines (recall.py) ----------------------------------------------------------
    # A one-word name this common in English ("Rapid" 4.4, "Forge") is a name only when it is the
    # whole question; CV over {3.5, 4.0, 4.5, 9 (= never)}: 4.5 on 321 questions, 9 on 396 (with the
    # helper's 75 of round 5). At 9 every one-word name counts wherever it stands.
    name_zipf: float = 9.0
    # A byline word this common ("Team" 5.67, "Brain", "Pan") counts only in an authorship
    # question ("papers by Pan"); CV over {3.0, 3.5, 4.0, 9}: 9 (every byline word counts) won
    # once the gate, not recall, keeps everyday words from deciding.
    author_zipf: float = 9.0
    # -- off-topic evidence (offtopic.py) ---------------------------------------------------------
    # How words count was chosen by the wide grid (`dev.py bench --cv-wide`) on the first 321
    # tuning questions and is fixed since; the nested CV chooses only the floor. The wide grid
    # overfits (its choice agreed with 2 folds of 5 on 396 questions, and held out it did worse):
    # tune.py.
    # The question is read as a mixture: with weight `mix` the catalog's own word use, with
    # 1 - mix general English. CV over {0.8, 0.9}; 0.5, 0.6 and 0.7 (forgiving a user's everyday
    # words more) were measured on 396 questions and did worse held out (docs/measurements.md).
    mix: float = 0.8
    # Catalog counts are discounted by this many uses before they count as evidence. CV over
    # {0, 1, 3}. The evidence an answer needs is search_floor in knowledge/catalog.yaml.
    discount: float = 3.0
    # Next to a foreign word, catalog words at least this common in English (Zipf) count with
    # everyday_weight of their evidence: "batch" (4.0) and "size" next to "cookies" say little.
    # CV over off, {3.5, 4.0, 4.5} x 0, {3.5, 4.0} x 0.25, 4.0 x 0.5.
    everyday_zipf: float = 3.5
    everyday_weight: float = 0.25
    # The off-topic side's share of words drawn from the catalog: off-topic questions sent to this
    # bot borrow its words, so no single word proves more than log10(mix / borrow) = 1.9.
    # CV over {0, 0.003, 0.01, 0.03}.
    borrow: float = 0.01
    # An uncorrectable word wordfreq lists at least this commonly (Zipf) is foreign: "sourdough"
    # (2.78), "brioche" (2.57) are English words the map never uses, not typos. CV over {2.5
    # (the search_english table's floor), 9 (= never)}.
    unknown_foreign_zipf: float = 2.5
    # Foreign words at least this common (Zipf) count this share of a foreign word's evidence:
    # "ago", "anymore", "wrote" belong to how any question is asked. CV over off, (4.5, 0.5) and
    # (5.0, 0), with or without catalog words of negative evidence (common_known: CV chose with,
    # "made", "way", "right" are how a question is put, not what it is about).
    common_foreign_zipf: float = 4.5
    common_foreign_weight: float = 0.5
    common_known: bool = True
    # In an authorship question, the words that ask for an author count for nothing. CV: no.
    form_neutral: bool = False
    # Bylines and one-word names rarer than Zipf 4 in English (offtopic._entity: "Hafner") are
    # not discounted: a name is an identity, not a sample of the catalog's language. CV: yes.
    entity_undiscounted: bool = True
    # A catalog word used no more than `discount` times counts nothing (False: as a foreign
    # word). CV: yes, so "copy", "descent" and "review" no longer count against a question.
    rare_zero: bool = True
    # Evidence added when a title or alias of two words or more is found whole in the question
    # ("Locked at the Entrance, Open Inside"). CV over {0, 1}.
    name_evidence: float = 1.0
    # Next to a foreign word, everyday words in a phrase the catalog uses keep their evidence.
    phrase_keep: bool = False
    # Evidence per phrase of the catalog found in the question (two at most): "chain of thought",
    # "gradient descent" say the everyday words are meant in the map's sense. CV over {0, 0.5}
    # with and without phrase_keep (everyday words in a phrase keep their evidence next to a
    # foreign word; not chosen).
    phrase_evidence: float = 0.5
    # A byline's full name found whole, or "<byline word> et al", counts as one token of the catalog
    # (offtopic._name_tokens): "Jimmy Ba", "Andy Jones", "Google Brain" are names, though each word
    # is everyday. On 418 tuning questions held out, the same balanced accuracy with and without
    # (0.933); adopted because abstaining on a question about the map is the worst answer
    # (docs/measurements.md).
    name_tokens: bool = True
    # Quantities spelled out ("a fifth", "a dozen", "twenty percent": text.NUMBER_WORDS) count for
    # nothing, as digits do. Held out, on 426 and 436 tuning questions: top-3 +0.7 and +0.3 points,
    # rejection the same or better (docs/measurements.md).
    number_words_neutral: bool = True
    # Measured by the first round and not adopted: a logistic regression over ten gate features
    # (0.927-0.936 against 0.964 for this rule), a list of the catalog's own two-word phrases
    # found in the question (unlike w_near's list, which pairs the question's neighbouring words)
    # and shared ranks for equally long names.
    # -- the guess tier (engine.py) ---------------------------------------------------------------
    # Below the floor (or on one borrowed word), a question still gets its nearest entries, marked
    # as a guess, when a word of it speaks for the map: its evidence (the log10 likelihood ratio
    # above, as counted for the gate, everyday words next to a foreign one already scaled down) is
    # at least this, or a title or alias of two words or more is found whole in it. Otherwise the
    # answer is "nothing in the map". 0.2 = the word makes the question at least 1.6 times
    # (10**0.2) as likely to be about the map. Chosen on the tuning set (benchmarks/tune.py,
    # stage 3) over {0.05, 0.1, 0.15, 0.2, 0.25, 0.3}: the
    # highest value that shows a right entry in the top 3 to
    # as many covered questions as any (showing the map's entries to a question about the map comes
    # first, "nothing" to a question that is not comes second); on 478 questions with the catalog's
    # everyday curated questions, the whole set and four folds of five chose 0.2 (one 0.25). Below
    # 0.05 everyday words count ("best" 0.01 and "near" 0.02 in "best pizza near the office"). The
    # one-borrowed-word rule (engine.coherence) counts the same words as speaking for the map.
    guess_word_evidence: float = 0.2
    # One everyday word is not enough: when the question's only word of positive evidence is a
    # common English word read beside a word the map never uses (its evidence scaled by
    # everyday_weight: "reset" in "how do i reset my vpn password", "recipe" beside "sourdough"),
    # the question is about the other thing and gets nothing. Two such words still make a guess
    # ("batch size for cookies"), as does any word that speaks for the map in its own right.
    # Chosen on the tuning set with guess_word_evidence (benchmarks/tune.py, stage 3, grid: the
    # six thresholds x on/off): on 497 questions the whole set and four folds of five chose 0.2
    # with it on (one 0.25 with it on); in sample it shows as many covered questions a right
    # entry and gives 30 more off-topic questions nothing. Costs one covered answer of the locked
    # set (docs/measurements.md, "Bylines as names, one everyday word, generic words").
    lone_everyday: bool = True
    # -- one borrowed word (engine.py) -------------------------------------------------------------
    # A question of at least this many content words (numbers aside) is answered with confidence
    # only when two of its words that speak for the map meet in one of the nearest entries. One
    # such word alone in a longer question may be borrowed ("which dota 2 items are best for a
    # support player", "how to optimize my tax return") or may be a lookup padded with chat ("is
    # GRPO still worth using these days"): the map cannot read the rest of the question, so its
    # nearest entries are shown as a guess, neither vouched for nor withheld. Shorter questions
    # are lookups ("the PPO paper") and a question naming two entries is a comparison: both keep
    # the plain floor. 3 = the shortest question with a word beside the lookup and its padding;
    # measured against 'never' on every set (docs/measurements.md).
    lone_word_words: int = 3
    # The words of one byline name of two words or more count once in that rule (as the question's
    # words and as words meeting in an entry), outside a question that asks who wrote something,
    # and beside such a name the entry's title words count as meeting: "Andy Jones plumbing
    # services near me" rests on one name and is a guess; "stuff from UT Austin" (two words) and
    # "Andy Jones board games" (the title's words) keep the plain floor. On 478 tuning questions:
    # off-topic answered confidently 9 -> 6 of 137, held out and in sample, no other figure of any
    # set moved (docs/measurements.md).
    name_once: bool = True
    # -- a setting's value (engine.py) -------------------------------------------------------------
    # A question asking for a value the catalog holds for no setting in SETTINGS ("what learning
    # rate for RLHF on a 7B model?", "how many GPUs do I need for ...": query.asks_setting) is a
    # guess at most, its nearest entries shown as such: every word of it is the map's, and an
    # entry that mentions the setting ("learning rate" is a keyword of the signals that say to
    # check it when training breaks) does not say what value to use. A question asking what a
    # named entry did ("what KL coefficient did DeepSeek-R1 use") keeps the plain floor. Measured
    # on every set against off (docs/measurements.md, "A setting's value"): tuning set, off-topic
    # answered confidently 0.118 -> 0.029 held out, top-3 and MRR the same; of every locked set and
    # the outsider set only two generic questions of the seventh moved (to a guess).
    setting_guess: bool = True
    # -- what is shown (engine.py) ----------------------------------------------------------------
    # After the first three, a hit below this share of the top hit's fused score is padding. CV
    # on the F1 of shown hits against the expected ids over {0.2, 0.3, 0.4, 0.5, 0.6}.
    keep_share: float = 0.6

    def with_(self, **changes) -> Params:
        return replace(self, **changes)


DEFAULT = Params()


def floor_to_evidence(floor: float) -> float:
    """catalog.yaml's search_floor (0-1) as evidence: the inverse of evidence / (evidence + 1)."""
    floor = min(max(floor, 0.0), 0.999)
    return floor / (1.0 - floor)


def evidence_to_score(evidence: float) -> float:
    return evidence / (evidence + 1.0) if evidence > 0 else 0.0


# -- thresholds the cross-validation does not tune
#  ----------------------------------------------------
# Each is fixed by a measurement named beside it, or by judgement and why; none is a grid point.

# Reading the question (query.py).
# A word with a wordfreq Zipf frequency at or above this is English and never "corrected":
# wordfreq lists common misspellings below it ("teh" 3.04, "thier" 2.99, "recieve" 2.75), and
# the everyday words seen rewritten are far above it (stuck 4.68, desert 4.40, startup 3.83,
# wrote 5.04).
ENGLISH_ZIPF = 3.1
# Damerau-style similarity (a swap of two letters is one edit) a correction needs: at 0.7 a
# 4-6 letter word may differ by one edit, a 7-10 letter word by two or three.
CORRECTION_SIMILARITY = 0.7
MIN_CORRECTABLE = 4  # three-letter words have too many one-edit neighbours to guess from
# A question is in another language when half its letters are not Latin, or when at least this
# many of its words (and this share) are other languages' commonest words (lexicon.search_markers).
OTHER_SCRIPT_SHARE = 0.5
MIN_MARKERS = 2
MARKER_SHARE = 0.25

# The word tables built at kb build (lexicon.py).
# wordfreq's common misspellings sit at or below Zipf 3.04 ("teh" 3.04, "thier" 2.99,
# "definately" 2.87, "recieve" 2.75; measured with wordfreq 3.1.1): the table keeps words from
# 2.5 so the English-word threshold (ENGLISH_ZIPF) can be revisited without a rebuild.
ENGLISH_TABLE_MIN = 2.5
# Other languages' commonest words (wordfreq's top MARKER_TOP of each) mark a question as not
# English, unless English uses the word as much (Zipf 4: "die", "la", "son" are English words;
# "por", "que", "las" are not).
MARKER_TOP = 200
MARKER_MAX_ENGLISH_ZIPF = 4.0

# Recall (recall.py).
RECALL = 40  # entries taken from each list; the answer shows at most a handful
# A word in more than this share of entries (and more than COMMON_MIN_DOCS of them) is left out of
# the BM25 query when rarer words remain: very common words only slow recall down at scale and
# rank nothing. judgement: 5% of the catalog, and never fewer than 50 entries.
COMMON_DOC_SHARE = 0.05
COMMON_MIN_DOCS = 50
MIN_CORRECTED_NAME = (
    5  # a corrected word of 4 letters ("GSPO" -> "grpo") is too weak to claim a name
)

# Off-topic evidence (offtopic.py).
# wordfreq's large English list ends near Zipf 1: a word it does not list is at most that common.
EN_FLOOR_ZIPF = 1.0
# A name rarer than this in English is a name, not a word
# ("Hafner" 2.1, "Espeholt"; "Brain" 4.9 is a word).
ENTITY_ZIPF = 4.0

# A question asking for a setting's value (query.asks_setting; Params.setting_guess). Words are read
# as typed, folded: a plural's "s" dropped, British "-iser" as "-izer" (stems would not do:
# "tokenizer" stems to "token", "optimizer" to "optim", the stem of "optimization").
# What asks for a value or a recommendation: "what", "which", "how many", "how much", and the
# adjectives of a recommendation ("best batch size", "good dropout value").
SETTING_ASKERS = (
    "what",
    "which",
    "how many",
    "how much",
    "best",
    "good",
    "recommended",
    "ideal",
    "optimal",
    "typical",
)
# Between the asker and the setting, at most SETTING_GAP of these words ("what's a good KL
# coefficient", "ideal sampling temperature", "what kind of tokenizer"); judgement: an article and
# up to two qualifiers, and any other word ("what happens to the learning rate") is another
# question.
SETTING_GAP = 3
SETTING_FILLERS = frozenset(
    """a an the my our your good best right ideal optimal sensible reasonable typical recommended
    sampling decoding peak initial total max maximum kind sort type of would be is""".split()
)
# The settings a trainer picks whose value no entry of the catalog gives (checked with grep
# over knowledge/): the learning rate and its warmup, weight decay, dropout, the tokenizer,
# the sampling temperature, the hardware (GPUs, their memory), a LoRA rank, the KL coefficient.
# Three papers state the KL coefficient or learning rate they used (deepseek-r1, tulu-3,
# pipelinerl): asked of them by name and in the past, that question keeps the floor
# (SETTING_PAST). Left out because an entry is about choosing them: the batch size
# (large-batch-training, critical-batch-size-grpo), samples per prompt (group_size,
# isocompute-playbook), DPO's beta (dpo), evaluation seeds (eval_num_seeds), epochs over the
# prompts (task_repeat_epochs), the maximum length (truncation_rate), the optimizer (an alias of
# the optimization stage: the RL algorithm, in the catalog's sense); tests/test_search_settings.py
# checks that no setting here is an entry's title or alias.
SETTINGS = (
    "learning rate",
    "lr",
    "warmup",
    "weight decay",
    "dropout",
    "tokenizer",
    "temperature",
    "gpu",
    "vram",
    "a100",
    "h100",
    "lora rank",
    "kl coefficient",
)
# Words that ask what was done, which only an entry can report: with an entry named ("how many GPUs
# did OpenAI Five train on"), a setting's value is the entry's.
SETTING_PAST = frozenset({"did", "was", "were", "used"})

# What is shown (engine.py).
# The first MIN_SHOWN hits always show: an answer is judged by its first three (the quality
# gates score top-3).
MIN_SHOWN = 3
# Top two scores closer than this: the answer says it cannot pick one. judgement: scores are
# shown to two decimals, and 0.03 is a difference a reader would not trust either.
CLOSE_CALL = 0.03
NAMED_KEEP = 5  # entries the question names explicitly stay within this many results (comparisons)

# Explanations (explain.py).
EXPLAIN_WORDS = (
    4  # words quoted in one reason: judgement, more reads as a list rather than a reason
)
# A hit ranked this high by the curated-questions list says which curated question it matched:
# judgement, the first three are what an answer shows for sure (MIN_SHOWN).
EXPLAIN_QUESTION_RANK = 3

# Diagnosis readings beside an answer (readings.py).
# Rules that can name a stage beside an answer: "moderate" and up on the catalog's scale
# (knowledge/catalog.yaml: 2 moderate, 3.5 strong, 5 decisive); weaker ones only corroborate.
MODERATE = 2.0
# With no word of the question in any of them, a reading is shown only if strong enough to settle a
# verdict alone (3.5): a guess at which reading was meant should at least be a weighty one.
STRONG = 3.5
