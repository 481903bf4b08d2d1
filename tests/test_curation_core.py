"""Curation's core over real parts: references, the
arxiv client against a stand-in serving arXiv's own
recorded answers, proposed tags, dedupe, and approved additions merged into the knowledge store."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil

import pytest
import yaml

from rlmap_bot.core import Core
from rlmap_bot.curation.ids import parse_reference
from rlmap_bot.digest.content import select_items
from rlmap_bot.errors import UsageError
from support import KNOWLEDGE
from support.cli import invoke

# "REST: Stress Testing Large Reasoning Models ...", an entry of the recorded search feed
REST = "2507.10541"


@pytest.fixture
def cli_env(env, arxiv):
    env.update(
        RLMAP_ARXIV_URL=arxiv.url, RLMAP_ARXIV_DELAY_SECONDS="0", RLMAP_ARXIV_TIMEOUT_SECONDS="2"
    )
    return env


@pytest.mark.parametrize(
    "text",
    [
        "2305.18290",
        "2305.18290v3",
        "arXiv:2305.18290",
        "https://arxiv.org/abs/2305.18290",
        "http://export.arxiv.org/abs/2305.18290v1",
        "https://arxiv.org/pdf/2305.18290.pdf",
        "https://arxiv.org/pdf/2305.18290v2",
        "10.48550/arXiv.2305.18290",
        "https://doi.org/10.48550/arXiv.2305.18290",
        "doi:10.48550/ARXIV.2305.18290",
        "<https://arxiv.org/abs/2305.18290|arxiv.org/abs/2305.18290>",
        "arxiv.org/abs/2305.18290",
        "www.arxiv.org/pdf/2305.18290v1",
        "doi.org/10.48550/arXiv.2305.18290",
    ],
)
def test_every_way_of_naming_a_paper_gives_its_id(text):
    assert parse_reference(text) == "2305.18290"


@pytest.mark.parametrize(
    "text, says",
    [
        ("", "needs an arXiv id"),
        ("abc", "is not an arXiv id"),
        ("10.1038/nature14236", "not a DOI arXiv registered"),
        ("https://example.com/abs/2305.18290", "not on arxiv.org"),
        ("https://arxiv.org/list/cs.LG", "not a paper's abs"),
        ("hep-th/9901001", "before April 2007"),
        ("2305.182", "is not an arXiv id"),
        ("x" * 5000, "…"),
    ],
)
def test_a_bad_reference_is_one_line_saying_what_works(text, says):
    with pytest.raises(UsageError) as caught:
        parse_reference(text)
    message = str(caught.value)
    assert says in message and "\n" not in message and len(message) < 400


def test_suggest_in_the_terminal_prints_the_candidate_with_scored_tags_and_stores_nothing(
    cli_env, arxiv, tmp_path
):
    ran = invoke(["suggest", f"https://arxiv.org/abs/{REST}v1", "--json"], cli_env)
    assert ran.returncode == 0, ran.stderr
    found = json.loads(ran.stdout)
    assert found["record"]["arxiv_id"] == REST and found["record"]["year"] == 2025
    assert found["record"]["title"].startswith("REST: Stress Testing Large Reasoning Models")
    assert "evaluation" in [t["id"] for t in found["stages"]]
    assert all(0 < t["score"] <= 1 for t in found["stages"]) and found["existing"] is None
    assert not (tmp_path / "home" / "state.db").exists(), "the terminal's suggest stores nothing"
    text = invoke(["suggest", REST], cli_env)
    assert "Proposed stages: " in text.stdout and "evaluation 0." in text.stdout


def test_a_paper_already_in_the_catalog_is_said_at_once_by_id_or_by_title(cli_env, arxiv):
    arxiv.variant(REST, "1707.06347")  # arXiv's id of PPO, which the catalog has
    by_id = json.loads(invoke(["suggest", "1707.06347", "--json"], cli_env).stdout)
    assert by_id["existing"] == {
        **by_id["existing"],
        "status": "in_catalog",
        "entry_id": "ppo",
        "how": "arxiv id",
    }
    arxiv.variant(REST, "2512.90001", title="Proximal policy optimization algorithms!")
    by_title = json.loads(invoke(["suggest", "2512.90001", "--json"], cli_env).stdout)
    assert by_title["existing"]["entry_id"] == "ppo" and by_title["existing"]["how"].startswith(
        "title"
    )


def test_unknown_malformed_and_unreachable_are_one_line_each(cli_env, arxiv):
    unknown = invoke(["suggest", "2101.99999"], cli_env)
    assert (
        unknown.returncode == 2 and unknown.stderr.strip() == "error: no paper 2101.99999 on arXiv"
    )
    bad = invoke(["suggest", "10.1234/abc"], cli_env)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    arxiv.down = True
    down = invoke(["suggest", REST], cli_env)
    assert (
        down.returncode == 3
        and "arXiv is not answering" in down.stderr
        and "Traceback" not in down.stderr
    )


def test_a_slow_arxiv_counts_as_down_within_the_time_out(cli_env, arxiv):
    arxiv.slow = 5
    cli_env["RLMAP_ARXIV_TIMEOUT_SECONDS"] = "0.5"
    slow = invoke(["suggest", REST], cli_env)
    assert slow.returncode == 3 and "arXiv is not answering" in slow.stderr


def test_a_huge_abstract_and_markup_in_a_title_are_capped(cli_env, arxiv):
    arxiv.variant(
        REST,
        "2512.90002",
        title="<!channel> *Free* <https://evil.example|click> " + "T" * 400,
        abstract="reward hacking " * 350_000,
    )  # about 5 MB
    found = json.loads(invoke(["suggest", "2512.90002", "--json"], cli_env).stdout)
    assert len(found["record"]["title"]) <= 300 and len(found["record"]["abstract"]) <= 5000


# -- additions merged into the knowledge store
#  ------------------------------------------------------
def _paper(entry_id: str, arxiv_id: str, **changes) -> str:
    data = {
        "id": entry_id,
        "kind": "paper",
        "title": "Stress testing reasoning models with many problems at once",
        "authors": ["Pan"],
        "et_al": True,
        "arxiv": arxiv_id,
        "year": 2025,
        "verification": "unverified",
        "verification_note": "approved from Slack",
        "summary": "A benchmark that asks several problems at once.",
        "stages": ["evaluation"],
        "added": dt.date.today().isoformat(),
    }
    data.update(changes)
    return json.dumps(data)


@pytest.fixture
def kcore(knowledge_copy, tmp_path):
    core = Core(knowledge_copy, tmp_path / "knowledge.db", state_url=tmp_path / "state.db")
    yield core
    core.state.close()


def test_an_addition_is_found_after_the_sync_and_a_bad_one_never_breaks_the_store(kcore):
    repo = kcore.state.curation
    assert kcore.sync_additions() is False  # nothing changed
    repo.add(
        "rest-stress-testing",
        "2507.10541",
        "s1",
        _paper("rest-stress-testing", "2507.10541"),
        "U1",
        "UCUR",
    )
    repo.add(
        "broken-addition",
        "2999.00009",
        "s2",
        _paper("broken-addition", "2999.00009", stages=["nowhere"]),
        "U1",
        "UCUR",
    )
    assert kcore.sync_additions() is True
    assert (
        kcore.ask("stress testing reasoning models many problems at once").results[0].id
        == "rest-stress-testing"
    )
    assert kcore.get("broken-addition") is None and kcore.get("ppo") is not None
    assert kcore.store.stored("rest-stress-testing").source == "slack:U1:UCUR"
    assert repo.set_status(["rest-stress-testing"], "removed") == 1
    assert kcore.sync_additions() is True and kcore.get("rest-stress-testing") is None


def test_kb_check_names_a_bad_addition(env, kcore, knowledge_copy, tmp_path):
    kcore.state.curation.add(
        "broken-addition",
        "2999.00009",
        "s2",
        _paper("broken-addition", "2999.00009", stages=["nowhere"]),
        "U1",
        "UCUR",
    )
    env.update(RLMAP_STATE_DB=str(tmp_path / "state.db"))
    ran = invoke(["--knowledge", str(knowledge_copy), "kb", "check"], env)
    assert (
        ran.returncode == 1 and "additions/broken-addition" in ran.stderr and "stages" in ran.stderr
    )


def test_export_writes_knowledge_files_and_a_landed_file_retires_the_addition(
    env, kcore, knowledge_copy, tmp_path
):
    repo = kcore.state.curation
    repo.add(
        "rest-stress-testing",
        "2507.10541",
        "s1",
        _paper("rest-stress-testing", "2507.10541"),
        "U1",
        "UCUR",
    )
    kcore.sync_additions()
    since = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
    first = [
        i for i in select_items(kcore.store, set(), since=since) if i.id == "rest-stress-testing"
    ]
    assert [(i.suggested_by, i.approved_by) for i in first] == [("U1", "UCUR")]
    delivered = {(i.id, i.version) for i in first}
    env.update(RLMAP_STATE_DB=str(tmp_path / "state.db"))
    listed = invoke(["--knowledge", str(knowledge_copy), "kb", "additions", "list"], env)
    assert "rest-stress-testing" in listed.stdout and "approved by UCUR" in listed.stdout
    out = tmp_path / "export"
    ran = invoke(["--knowledge", str(knowledge_copy), "kb", "additions", "export", str(out)], env)
    assert ran.returncode == 0, ran.stderr
    written = out / "rest-stress-testing.yaml"
    assert yaml.safe_load(written.read_text())["arxiv"] == "2507.10541"
    shutil.copy(written, knowledge_copy / "papers" / written.name)
    kcore.reload()
    assert [a.entry_id for a in repo.additions("retired")] == ["rest-stress-testing"]
    assert (
        kcore.store.stored("rest-stress-testing").source
        == "knowledge/papers/rest-stress-testing.yaml"
    )
    check = invoke(["--knowledge", str(knowledge_copy), "kb", "check"], env)
    assert check.returncode == 0, check.stderr
    again = [i.id for i in select_items(kcore.store, delivered, since=since)]
    assert "rest-stress-testing" not in again, (
        "the retired addition's file is announced a second time"
    )


def _tree_digest(root) -> dict[str, str]:
    """Every file under ``root`` (hidden ones and caches
    included) by its path, with its bytes' SHA-256.
    """
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_approving_syncing_and_exporting_leave_the_bundled_catalog_byte_for_byte_unchanged(
    env, tmp_path
):
    before = _tree_digest(KNOWLEDGE)
    core = Core(KNOWLEDGE, tmp_path / "knowledge.db", state_url=tmp_path / "state.db")
    try:
        core.state.curation.add(
            "rest-stress-testing",
            "2507.10541",
            "s1",
            _paper("rest-stress-testing", "2507.10541"),
            "U1",
            "UCUR",
        )
        assert core.sync_additions() is True and core.get("rest-stress-testing") is not None
        core.reload()
    finally:
        core.state.close()
    env.update(RLMAP_STATE_DB=str(tmp_path / "state.db"))
    ran = invoke(
        [
            "--knowledge",
            str(KNOWLEDGE),
            "--db",
            str(tmp_path / "knowledge.db"),
            "kb",
            "additions",
            "export",
            str(tmp_path / "export"),
        ],
        env,
    )
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "export" / "rest-stress-testing.yaml").exists()
    assert _tree_digest(KNOWLEDGE) == before


def test_a_paper_the_catalog_has_is_said_from_the_catalog_without_arxiv(cli_env, arxiv):
    # Issue 38: `suggest 2402.03300` (DeepSeekMath, in the catalog) went to arXiv first and, with
    # arXiv down, failed with a connection error. The catalog is asked first, by id and by name.
    arxiv.down = True
    by_id = invoke(["suggest", "2402.03300"], cli_env)
    assert by_id.returncode == 0, by_id.stderr
    assert "Already in the catalog as DeepSeekMath" in by_id.stdout
    assert "(deepseekmath-grpo), on Optimization" in by_id.stdout
    assert "`show deepseekmath-grpo`" in by_id.stdout and "Proposed stages" not in by_id.stdout
    found = json.loads(invoke(["suggest", "--json", "arXiv:2402.03300v2"], cli_env).stdout)
    assert found["existing"]["entry_id"] == "deepseekmath-grpo"
    assert found["existing"]["where"] == ["Optimization"]
    for name in ("DeepSeekMath", "proximal policy optimization algorithms"):
        ran = invoke(["suggest", *name.split()], cli_env)
        assert ran.returncode == 0 and "Already in the catalog as" in ran.stdout, ran.stderr


@pytest.mark.parametrize(
    "text, says",
    [
        ("2402.0330", "ids from 2015 on have 5 digits"),  # was accepted
        ("1412.69801", "ids before 2015 have 4 digits"),
        ("2413.00001", "year and month"),
        ("0612.1234", "year and month"),  # new-style ids start in April 2007
    ],
)
def test_an_id_of_the_wrong_shape_is_refused_before_arxiv(text, says):
    with pytest.raises(UsageError) as caught:
        parse_reference(text)
    assert says in str(caught.value)


def test_json_errors_are_json(cli_env, arxiv):
    ran = invoke(["suggest", "--json", "2402.0330"], cli_env)
    assert ran.returncode == 2 and "error: " in ran.stderr
    said = json.loads(ran.stdout)
    assert said["exit_code"] == 2 and "5 digits" in said["error"]
    arxiv.down = True
    down = invoke(["suggest", "--json", REST], cli_env)
    assert down.returncode == 3 and "arXiv is not answering" in json.loads(down.stdout)["error"]
