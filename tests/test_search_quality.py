"""Search quality: the tuning set (tests/questions.yaml)
and the earlier locked set (questions_echo.yaml).

questions_echo.yaml was the locked set until 2026-12-02: its author saw the catalog export with its
aliases, keywords and curated questions, so its questions echo the catalog's words. The new locked
set (questions_locked.yaml, written from titles and summaries only) and the outsider set are gated
at the figures reached, so no change loses ground on them.

The locked set was written by someone who never saw the code; nothing is tuned on it and this
file reports only its aggregate figures, never a question.  Targets (the issue's "done when"): of
the entries shown (confident answers, else guesses) top-3 >= 0.95 and never below BM25 alone, MRR
>= 0.85; off-topic questions answered confidently <= 5%.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).parent
QUESTIONS = yaml.safe_load((HERE / "questions.yaml").read_text())
LOCKED = yaml.safe_load(
    (HERE / "questions_echo.yaml").read_text()
)  # the earlier locked set; see below
NEW_LOCKED = yaml.safe_load((HERE / "questions_locked.yaml").read_text())
TIERS_LOCKED = yaml.safe_load(
    (HERE / "questions_locked_tiers.yaml").read_text()
)  # plainly worded; scored only
SIXTH_LOCKED = yaml.safe_load(
    (HERE / "questions_locked_r6.yaml").read_text()
)  # plainly worded, a third about scaling; scored only
SEVENTH_LOCKED = yaml.safe_load(
    (HERE / "questions_locked_r7.yaml").read_text()
)  # bylines, generic-word and plainly unrelated questions (issue 38); scored only
sys.path.insert(0, str(HERE.parent / "benchmarks"))


def figures(ask, items) -> dict[str, float]:
    """Aggregate top-3, MRR, off-topic questions shown nothing and both-in-top-5; ``ask`` returns
    the ranked ids shown."""
    covered = [i for i in items if i["expect"]]
    offtopic = [i for i in items if not i["expect"]]
    pairs = [i for i in items if i.get("both")]
    top3 = rr = both = rejected = 0.0
    for item in covered:
        ids = ask(item["q"])
        top3 += bool(set(ids[:3]) & set(item["expect"]))
        rank = next((r for r, x in enumerate(ids, 1) if x in item["expect"]), None)
        rr += 1 / rank if rank else 0
        both += bool(item.get("both")) and set(item["both"]) <= set(ids[:5])
    for item in offtopic:
        rejected += not ask(item["q"])
    return {
        "top3": top3 / len(covered),
        "mrr": rr / len(covered),
        "nothing": rejected / len(offtopic),
        "both5": both / max(1, len(pairs)),
    }


def ours(core):
    """What ask shows: its confident results, or else its guesses."""

    def ask(q):
        return [r.id for r in core.ask(q, limit=10).shown]

    return ask


def confident_off_topic(core, items) -> float:
    """The share of the off-topic questions that get a confident answer."""
    offtopic = [i for i in items if not i["expect"]]
    return sum(1 for i in offtopic if core.ask(i["q"]).tier == "confident") / len(offtopic)


def test_tuning_set_is_big_and_varied():
    assert len(QUESTIONS) >= 200
    types = {item["type"] for item in QUESTIONS}
    assert {
        "typo",
        "british",
        "alias",
        "arxiv",
        "author",
        "natural",
        "offtopic",
        "comparison",
        "everyday",
        "conceptual",
        "indirect",
    } <= types
    assert (
        sum(1 for i in QUESTIONS if not i["expect"]) >= 47
    )  # 17 plainly unrelated + 30 that borrow words
    assert all(set(i["both"]) <= set(i["expect"]) for i in QUESTIONS if i.get("both"))


@pytest.mark.parametrize(
    "items",
    [QUESTIONS, LOCKED, NEW_LOCKED, TIERS_LOCKED, SIXTH_LOCKED, SEVENTH_LOCKED],
    ids=["tuning", "echo", "locked", "tiers", "sixth", "seventh"],
)
def test_expected_ids_exist(core, items):
    missing = sorted({e for item in items for e in item["expect"] if core.get(e) is None})
    assert not missing, f"{len(missing)} expected ids are not in the catalog"


def test_tuning_set_figures(core):
    # In-sample figures (the weights were chosen on this set), a little under what was reached:
    # top-3 0.938, MRR 0.891, off-topic answered confidently 0.052, both in top 5 1.000 (guesses
    # count: they are shown). The 75 questions of round 5, a helper's, in everyday words, and the
    # families found after them are the hard ones: on the first 321 questions the figures were
    # 0.950, 0.916 and 0.963; on 449, 0.933, 0.896 and 0.940.
    # The last 18 (2026-12-03: a practitioner's words, and the Scaling Laws topic in everyday words,
    # the second family not yet fixed) took top-3 and
    # MRR down to 0.910 and 0.866; 8 more (a run problem
    # told around a name, half of them not yet fixed) to
    # 0.900 and 0.856, so the floors moved with them.
    f = figures(ours(core), QUESTIONS)
    confident = confident_off_topic(core, QUESTIONS)
    assert f["top3"] >= 0.935 and f["mrr"] >= 0.885 and confident <= 0.053 and f["both5"] >= 0.9, (
        f,
        confident,
    )


@pytest.fixture(scope="module")
def locked_figures(core):
    from run import BM25Only  # benchmarks/run.py: plain FTS5/BM25 over every field, no floor

    f = figures(ours(core), LOCKED)
    f["confident"] = confident_off_topic(core, LOCKED)
    bm25 = BM25Only(core.store)
    base = figures(lambda q: bm25.ask(q, limit=10), LOCKED)
    report = (
        f"locked set: top-3 {f['top3']:.3f}, MRR {f['mrr']:.3f}, off-topic answered confidently "
        f"{f['confident']:.3f}, both in top 5 {f['both5']:.3f}; BM25 alone top-3 {base['top3']:.3f}"
    )
    return f, base, report


def test_locked_set_meets_the_targets(locked_figures):
    """The issue's targets on the earlier locked set, whose author saw the aliases (reached: top-3
    0.986, MRR 0.917, no off-topic question answered confidently, both in top 5 1.000), and ours
    never below BM25 alone."""
    f, base, report = locked_figures
    assert f["top3"] >= 0.95, report
    assert f["mrr"] >= 0.85, report
    assert f["confident"] <= 0.05, report
    assert f["both5"] >= 0.90, report
    assert f["top3"] >= base["top3"], report


def _outsider() -> list[dict] | None:
    """../shared/eval/outsider-questions.json (validation
    only: never tuned on), when it is beside the checkout.
    """
    for base in (HERE.parent.parent, HERE.parent.parent.parent):
        path = base / "shared" / "eval" / "outsider-questions.json"
        if path.is_file():
            return json.loads(path.read_text())
    return None


# What ask reached on the sets nobody tuned for (issue
# 18; printed by `python3 dev.py bench`). The issue's
# targets (top-3 >= 0.95 and never below BM25 alone,
# MRR >= 0.85, off-topic >= 0.95) are not all reached
# yet: these floors are the figures reached, so a change that loses ground on either set fails here.
# Lowered once, on purpose: the locked set's off-topic
# rejection was 0.925 before the eight papers of
# 2026-12-03 (instructgpt, dpo, rloo, tulu-3, minimax-m1,
# pipelinerl, large-language-monkeys, swe-bench).
# Their text gives the catalog words that off-topic questions borrow, so one more of the 40 locked
# off-topic questions clears the floor (0.900); the
# same papers raised locked MRR (0.892 -> 0.898) and
# the outsider figures (0.850/0.768 -> 0.867/0.797). Re-measured on the tuning set, neither more say
# for BM25 (params.py: w_bm25) nor a higher floor (evidence 1.5 rejects one more tuning question and
# loses one on-map answer) is a real gain, so 0.900 is the figure reached, not a target met.
# Lowered a second time, on purpose: the practitioners' words added to the keywords of every signal,
# stage and topic (written without sight of any question set) raised the locked set (0.959/0.898 ->
# 0.964/0.905), moved one outsider answer down the list (MRR 0.797 -> 0.789; top-3 and rejection
# unchanged) and cost the earlier locked set one answer and one rejection: on the sets nobody tuned
# on, a wash. Kept for what it does for the person asking: their own words for a problem
# ("leaderboard", "warmup", "cheating") no longer
# count against their question (docs/measurements.md).
# Raised on 2026-12-03: chat's fillers as stopwords
# ("still ok?") answered one more outsider question,
# and names typed run together ("r1zero") one more.
# Lowered a third time, by the procedure: 75 new
# tuning questions (a helper's, in everyday words) and
# the gate's counting fixed (benchmarks/tune.py) made the cross-validation choose name_zipf 9, weak
# matches from evidence 0.5 and search_floor 0.586.
# Locked MRR moved 0.905 -> 0.902 (one answer a place
# down), top-3 and rejection unchanged; the outsider
# set unchanged. Choosing otherwise because of the
# locked set would be tuning on it.
# Raised on 2026-12-03 (later): everyday curated questions on four entries ("dashboard", "junk",
# "nodes"), written for a family the newcomer pass found,
# moved an outsider answer up (MRR 0.811 -> 0.819).
# Reached: top-3 and MRR of the entries shown (confident answers, else guesses), and off-topic
# questions answered confidently (at most).
# The figures reached (docs/measurements.md). The locked set's top-3 fell 0.995 -> 0.985 when the
# catalog's everyday questions came in and a word must speak for the map (0.2) to get a guess: one
# covered question now gets nothing; the plainly worded and sixth locked sets are guarded too.
# Lowered on purpose (issue 38): a question tied to the map by one everyday word alone gets nothing
# (params.lone_everyday), which the issue asks for; one covered locked question has that shape and
# lost its right guess (top-3 0.985 -> 0.980, MRR 0.941 -> 0.936), while 7 more of its 40 off-topic
# questions get nothing (docs/measurements.md).
REACHED = {
    "locked": {"top3": 0.980, "mrr": 0.936},
    "plain": {"top3": 0.960, "mrr": 0.939},
    "sixth": {"top3": 0.958, "mrr": 0.911},
    # The seventh (issue 38), scored first when it arrived: its MRR is below BM25 alone's (0.765),
    # and 13 of its 69 off-topic questions are answered confidently, most of them questions that
    # share only the field's generic words with an entry (docs/measurements.md, "Generic words").
    "seventh": {"top3": 0.879, "mrr": 0.738},
    "outsider": {"top3": 0.983, "mrr": 0.914},
}
CONFIDENT_OFF_TOPIC = {
    "locked": 0.025,
    "plain": 0.019,
    "sixth": 0.045,
    "seventh": 0.189,
    "outsider": 0.0,
}
# Off-topic questions given nothing, at least: a question tied to the map by one everyday word
# alone gets nothing (issue 38; params.lone_everyday).
NOTHING_OFF_TOPIC = {
    "locked": 0.425,
    "plain": 0.509,
    "sixth": 0.577,
    "seventh": 0.347,
    "outsider": 0.166,
}


@pytest.mark.parametrize("name", ["locked", "plain", "sixth", "seventh", "outsider"])
def test_honest_sets_do_not_lose_ground(core, name):
    items = {
        "locked": NEW_LOCKED,
        "plain": TIERS_LOCKED,
        "sixth": SIXTH_LOCKED,
        "seventh": SEVENTH_LOCKED,
    }.get(name)
    items = items if items is not None else _outsider()
    if items is None:
        pytest.skip(
            "the outside question set (validation data kept outside the repository, at "
            "../shared/eval/outsider-questions.json) is not on this machine"
        )
    f = figures(ours(core), items)
    confident = confident_off_topic(core, items)
    report = f"{name}: " + ", ".join(
        f"{k} {f[k]:.3f} (reached {v:.3f})" for k, v in REACHED[name].items()
    )
    report += (
        f", off-topic answered confidently {confident:.3f} (reached "
        f"{CONFIDENT_OFF_TOPIC[name]:.3f})"
    )
    report += (
        f", off-topic given nothing {f['nothing']:.3f} (reached {NOTHING_OFF_TOPIC[name]:.3f})"
    )
    assert all(f[k] >= v - 0.0005 for k, v in REACHED[name].items()), report
    assert confident <= CONFIDENT_OFF_TOPIC[name] + 0.0005, report
    assert f["nothing"] >= NOTHING_OFF_TOPIC[name] - 0.0005, report


@pytest.mark.parametrize(
    "question, expected",
    [
        (
            "rewrad hacking",
            {
                "reward-model-overoptimization",
                "reward",
                "reward-overoptimization",
                "reward-hacking-definition",
            },
        ),
        ("optimisaton", {"optimization"}),
        ("R1", {"deepseek-r1"}),
        ("the PPO paper", {"ppo"}),
        ("2210.10760", {"reward-model-overoptimization"}),
        ("Hafner's paper", {"dreamerv3"}),
        ("our grader says 90% solved but spot checks disagree, where do I look?", {"reward"}),
    ],
)
def test_examples_from_the_issue(core, question, expected):
    ids = [r.id for r in core.ask(question, limit=3).results]
    assert set(ids) & expected, ids


def test_results_say_why(core):
    hit = core.ask("Hafner's paper").results[0]
    assert any("hafner" in why.lower() for why in hit.why)
    fixed = core.ask("rewrad hacking")
    assert fixed.corrections == {"rewrad": "reward"}
