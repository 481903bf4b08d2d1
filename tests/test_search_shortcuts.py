"""What ask works out once (per searcher, per word, per question) reads the same as working it out
in full every time: each shortcut is checked against the plain reading over the bundled catalog.
"""

from __future__ import annotations

import unicodedata

import pytest

from rlmap_bot.knowledge.schema import Signal
from rlmap_bot.knowledge.store import KnowledgeStore
from rlmap_bot.search.lexicon import Lexicon
from rlmap_bot.search.query import _MARKUP, parse, plain
from rlmap_bot.search.readings import choice_phrases, said_choices
from rlmap_bot.text import fold, normalize, words

TEXTS = [
    "my reward keeps going up but eval accuracy is dropping",
    "Zürich's roll-outs aren't stable, e.g. arxiv.org/abs/2402.03300v2 at 2.77 tok/s",
    "ＰＰＯ vs GRPO: réward hacking?",
    "see <https://example.org|the DAPO paper> :tada: `clip_fraction` in #general",
    "www.example.org says the KL keeps rising",
    "alice@example.org and c++ and a+b",
    "",
]


@pytest.fixture(scope="module")
def store(built_db):
    opened = KnowledgeStore(built_db)
    yield opened
    opened.close()


@pytest.mark.parametrize("text", TEXTS)
def test_folding_ascii_text_leaves_it_as_the_full_unicode_fold_would(text):
    full = "".join(
        ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)
    )
    assert fold(text) == full


@pytest.mark.parametrize("text", TEXTS)
def test_a_question_is_read_as_normalize_reads_it_with_or_without_markup(store, text):
    query = parse(text, Lexicon(store.conn))
    assert query.normalized == normalize(query.text)


@pytest.mark.parametrize("text", TEXTS)
def test_markup_is_removed_as_every_pattern_in_turn_would(text):
    full = text
    for pattern, replacement in _MARKUP:
        full = pattern.sub(replacement, full)
    assert plain(text) == full


def test_plain_dotted_and_joined_words_are_split_as_before():
    text = (
        "Zürich's roll-outs aren't stable, e.g. arxiv.org/abs/2402.03300v2 at 2.77 tok/s; "
        "alice@example.org, c++ and a+b, optimisation"
    )
    assert (
        words(text)
        == (
            "zurich roll outs are not stable e g arxiv org abs 2402 03300v2 at 2.77 tok s alice "
            "example org c and a b optimization"
        ).split()
    )


def test_a_byline_words_index_gives_the_zipf_a_scan_of_its_rows_gives(store):
    lexicon = Lexicon(store.conn)
    checked = 0
    for stem_, rows in lexicon.authors.items():
        for entry_id, label, _person, _zipf in rows:
            scanned = [r[3] for r in rows if r[:2] == (entry_id, label)][-1]
            assert lexicon.byline_zipf(stem_, entry_id, label) == scanned
            checked += 1
    assert checked > 100
    assert lexicon.byline_zipf("no-such-stem", "ppo", "Schulman") is None


@pytest.mark.parametrize(
    "question",
    [
        "my reward keeps going up but eval accuracy is dropping",
        "the KL has been flat while the entropy is falling",
        "nothing about any trend here",
    ],
)
def test_each_choice_is_stated_as_when_every_phrase_is_looked_for_per_signal(store, question):
    signals = [e for e in store.all("signal") if isinstance(e, Signal)]
    settings = store.settings.diagnosis
    said = f" {normalize(question)} "
    per_signal = {
        s.id: {c for c in s.choices if any(f" {w} " in said for w in settings.said_as(c))}
        for s in signals
        if s.type == "choice"
    }
    assert said_choices(choice_phrases(signals, settings), normalize(question)) == per_signal
