"""Search is cheap to import and to warm up: no wordfreq on the ask path."""

import subprocess
import sys


def _cli_in_a_fresh_process(args: list[str], report: str, imports: str = "") -> tuple[str, str]:
    """(stdout, stderr) of the command line run in a new interpreter; ``report`` prints, to
    stderr, what the start-up loaded or built, after the command has run or failed."""
    code = (
        f"import sys\nfrom rlmap_bot.cli.main import cli\n{imports}try:\n    cli({args!r}, "
        f"standalone_mode=False)\nfinally:\n"
        + "".join(f"    {line}\n" for line in report.splitlines())
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout, done.stderr


def test_ask_never_loads_wordfreq(built_db):
    code = (
        "import sys\n"
        "from rlmap_bot.knowledge.store import KnowledgeStore\n"
        "from rlmap_bot.search.engine import Searcher\n"
        f"s = Searcher(KnowledgeStore({str(built_db)!r}))\n"
        "a = s.ask('rewrad hacking, is the verifier stuck?')\n"
        "assert a.corrections == {'rewrad': 'reward'}, a.corrections\n"
        "print('wordfreq' in sys.modules, 'torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]


def test_a_plain_ask_on_the_command_line_loads_no_settings_model(built_db, tmp_path):
    """`rlmap-bot ask` reads its paths alone (rlmap_bot.paths): pydantic-settings, SQLAlchemy, the
    diagnosis engine and the Slack layer stay out of its start-up (the cold-start budget); so do
    PyYAML (a built store holds no YAML), the card models (only `show` builds a card) and the
    result models of the diagnosis and of watching (their renderers load when one comes)."""
    modules = (
        "pydantic_settings sqlalchemy rlmap_bot.diagnosis.engine slack_sdk rlmap_bot.settings yaml "
        "rlmap_bot.knowledge.cards rlmap_bot.results.diagnosis rlmap_bot.results.watch"
    ).split()
    out, err = _cli_in_a_fresh_process(
        ["--db", str(built_db), "ask", "rewrad hacking"],
        f"print(*(m in sys.modules for m in {modules!r}), file=sys.stderr)",
    )
    assert "Reward" in out, out
    assert err.split() == ["False"] * 9, err


def test_help_loads_no_pydantic():
    """`rlmap-bot --help` lists the declared commands without loading any model: pydantic alone is
    about 90 ms of a 0.06 s start (benchmarks/coldstart.py), and once slipped in through the plain
    sentences of rlmap_bot.wording."""
    out, err = _cli_in_a_fresh_process(
        ["--help"], "print('pydantic' in sys.modules, file=sys.stderr)"
    )
    assert "Usage" in out and err.split() == ["False"], err


QUESTION = "why is my reward going up but evals down?"  # answered by a signal and two stages


def test_a_plain_ask_validates_only_the_kinds_of_entry_it_shows(built_db):
    """The knowledge models are built when first used (pydantic's defer_build) and the store reads
    an entry back the first time it is asked for, with its kind's model alone: an answer that shows
    a signal and stages builds no paper or topic validator (nor the empty line's Unanswered of
    `ask -`), and the rule language, the catalog's cross-entry checks and logging, which only a
    build or a failure needs, are never imported."""
    out, err = _cli_in_a_fresh_process(
        ["--db", str(built_db), "ask", QUESTION],
        "built = [m.__pydantic_complete__ for m in (Signal, Stage, Paper, Topic, "
        "Unanswered)]\nloaded = [m in sys.modules for m in ('rlmap_bot.knowledge.expr',\n          "
        "'rlmap_bot.knowledge.checks', 'logging')]\nprint(*built, ENTRY.pydantic_complete, "
        "*loaded, file=sys.stderr)",
        imports="from rlmap_bot.knowledge.loader import ENTRY\nfrom rlmap_bot.knowledge.schema "
        "import Paper, Signal, Stage, Topic\nfrom rlmap_bot.results.ask import Unanswered\n",
    )
    assert "[signal] Held-out score trend" in out, out
    assert err.split() == ["True", "True"] + ["False"] * 7, err
