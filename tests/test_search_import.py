"""Search is cheap to import and to warm up: no wordfreq on the ask path."""

import subprocess
import sys


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
    code = (
        "import sys\n"
        "from rlmap_bot.cli.main import cli\n"
        "try:\n"
        f"    cli(['--db', {str(built_db)!r}, 'ask', 'rewrad hacking'], standalone_mode=False)\n"
        "finally:\n"
        "    print(*(m in sys.modules for m in ('pydantic_settings', 'sqlalchemy', "
        "'rlmap_bot.diagnosis.engine',\n"
        "                                          'slack_sdk', 'rlmap_bot.settings', 'yaml', "
        "'rlmap_bot.knowledge.cards', 'rlmap_bot.results.diagnosis', 'rlmap_bot.results.watch')),\n"
        "          file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Reward" in done.stdout, done.stdout
    assert done.stderr.split() == ["False"] * 9, done.stderr


def test_help_loads_no_pydantic():
    """`rlmap-bot --help` lists the declared commands without loading any model: pydantic alone is
    about 90 ms of a 0.06 s start (benchmarks/coldstart.py), and once slipped in through the plain
    sentences of rlmap_bot.wording."""
    code = (
        "import sys\n"
        "from rlmap_bot.cli.main import cli\n"
        "try:\n"
        "    cli(['--help'], standalone_mode=False)\n"
        "finally:\n"
        "    print('pydantic' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage" in done.stdout and done.stderr.split() == ["False"], done.stderr


QUESTION = "why is my reward going up but evals down?"  # answered by a signal and two stages


def test_a_plain_ask_validates_only_the_kinds_of_entry_it_shows(built_db):
    """The knowledge models are built when first used (pydantic's defer_build) and the store reads
    an entry back the first time it is asked for, with its kind's model alone: an answer that shows
    a signal and stages builds no paper or topic validator (nor the empty line's Unanswered of
    `ask -`), and the rule language, the catalog's cross-entry checks and logging, which only a
    build or a failure needs, are never imported."""
    code = (
        "import sys\n"
        "from rlmap_bot.cli.main import cli\n"
        "from rlmap_bot.knowledge.loader import ENTRY\n"
        "from rlmap_bot.knowledge.schema import Paper, Signal, Stage, Topic\n"
        "from rlmap_bot.results.ask import Unanswered\n"
        "try:\n"
        f"    cli(['--db', {str(built_db)!r}, 'ask', {QUESTION!r}], standalone_mode=False)\n"
        "finally:\n"
        "    built = [m.__pydantic_complete__ for m in (Signal, Stage, Paper, Topic, Unanswered)]\n"
        "    loaded = [m in sys.modules for m in ('rlmap_bot.knowledge.expr',\n"
        "              'rlmap_bot.knowledge.checks', 'logging')]\n"
        "    print(*built, ENTRY.pydantic_complete, *loaded, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "[signal] Held-out score trend" in done.stdout, done.stdout
    assert done.stderr.split() == ["True", "True"] + ["False"] * 7, done.stderr
