"""`python3 dev.py`, the README's two commands' entry
point, answers a mistake plainly (newcomer pass).
"""

import subprocess
import sys
from pathlib import Path

DEV = Path(__file__).resolve().parent.parent / "dev.py"


def dev(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(DEV), *args], capture_output=True, text=True, timeout=60
    )


def test_a_misspelt_command_is_named_with_a_suggestion_and_exits_2():
    out = dev("runn")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("dev.py: unknown command 'runn'; did you mean 'run'?")


def test_help_is_not_an_error():
    out = dev("--help")
    assert out.returncode == 0 and "python3 dev.py run" in out.stdout


def test_lint_help_does_not_install_or_lint():
    out = dev("lint", "--help")
    assert out.returncode == 0 and "takes no arguments" in out.stderr
