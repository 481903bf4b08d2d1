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
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
