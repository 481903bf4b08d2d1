"""The examples the README and docs/ show work as written, through the installed ``rlmap-bot``.

The README's first session is typed into the real shell, and each of its lines is run again as a
one-shot command; every ``console`` block in the README and docs/ is run in a shell.  What the page
shows as output must appear in what the command prints, in order (``...`` marks what the page leaves
out; whitespace and line breaks may differ).  The sample log is what ``examples/make_sample.py``
writes, so the pages, the sample and its generator cannot drift apart.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rlmap_bot.commands import REGISTRY
from support import ROOT

BIN = Path(sys.executable).parent
RLMAP_BOT = BIN / "rlmap-bot"
PROMPT = "rlmap> "
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def first_session() -> list[tuple[str, list[str]]]:
    """The README's first session: (the typed line, the output lines shown under it)."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"^## A first session\n.*?```text\n(.*?)```", readme, flags=re.S | re.M)
    assert block, "the README has a first session in a text block"
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith(PROMPT):
            steps.append((line[len(PROMPT) :], []))
        else:
            assert steps, "the first session starts with a typed line"
            steps[-1][1].append(line)
    return steps


def console_examples() -> list[tuple[str, str, list[str]]]:
    """Every ``$ command`` in a console block of the
    README or docs/: (page, command, output lines).
    """
    found: list[tuple[str, str, list[str]]] = []
    for page in PAGES:
        for block in re.findall(r"```console\n(.*?)```", page.read_text(), flags=re.S):
            command: list[str] = []
            for line in block.splitlines():
                if line.startswith("$ ") or (command and command[-1].endswith("\\")):
                    command.append(line.removeprefix("$ "))
                    if not line.endswith("\\"):
                        found.append((page.name, "\n".join(command), []))
                        command = []
                else:
                    assert found, f"{page.name}: a console block starts with `$ command`"
                    found[-1][2].append(line)
    return found


def squash(text: str) -> str:
    """Without whitespace: the terminal wraps long lines
    (inside words, after a hyphen) to its width.
    """
    return "".join(text.split())


def assert_shows(output: str, expected: list[str], what: str) -> None:
    """Each shown line (its pieces between ``...``) appears in ``output``, in order."""
    text, at = squash(output), 0
    for line in expected:
        for piece in (squash(p) for p in line.split("...")):
            if not piece:
                continue
            found = text.find(piece, at)
            assert found >= 0, (
                f"{what}: the docs show {piece!r}, which is not in the output (in order):\n{output}"
            )
            at = found + len(piece)


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("examples-home")
    return {**os.environ, "RLMAP_HOME": str(home), "COLUMNS": "100"}


def test_the_first_session_works_in_the_shell(env):
    steps = first_session()
    typed = "".join(line + "\n" for line, _ in steps)
    done = subprocess.run(
        [str(RLMAP_BOT), "shell"],
        input=typed,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    answers = done.stdout.split(PROMPT)[1:]
    assert len(answers) == len(steps), f"expected {len(steps)} prompts:\n{done.stdout}"
    for (line, shown), answer in zip(steps, answers, strict=True):
        assert_shows(answer, shown, f"rlmap> {line}")


SHELL_WORDS = {c.name.split()[0] for c in REGISTRY.all("shell")}


@pytest.mark.parametrize(
    "line,shown", [s for s in first_session() if s[0] != "quit"], ids=lambda v: str(v)[:30]
)
def test_each_first_session_line_works_as_a_command(env, line, shown):
    words = shlex.split(line)
    argv = words if words[0] in SHELL_WORDS else ["ask", line]
    done = subprocess.run(
        [str(RLMAP_BOT), *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert done.returncode == 0, f"rlmap-bot {line}: exit {done.returncode}\n{done.stderr}"
    assert_shows(done.stdout, shown, f"rlmap-bot {line}")


def test_the_docs_have_console_examples():
    commands = [command for _, command, _ in console_examples()]
    assert any("--run examples/grpo-run.log" in c for c in commands)
    assert any("--signals examples/signals.json" in c for c in commands)


@pytest.mark.parametrize("page,command,shown", console_examples(), ids=lambda v: str(v)[:40])
def test_every_console_example_works(env, tmp_path, page, command, shown):
    (tmp_path / "examples").symlink_to(
        ROOT / "examples"
    )  # the page's paths, and files it writes land here
    done = subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, "PATH": f"{BIN}{os.pathsep}{env['PATH']}"},
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert done.returncode == 0, f"{page}: `{command}` exit {done.returncode}\n{done.stderr}"
    assert_shows(done.stdout, shown, f"{page}: {command}")


def test_the_sample_log_is_what_make_sample_writes(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "make_sample", ROOT / "examples" / "make_sample.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = module.write(tmp_path / "grpo-run.log")
    # Numbers are compared to 12 significant figures: numpy's releases differ in the last bit of
    # some float sums (numpy 2.4 wrote 0.4952334713701999 where 2.3 wrote ...19985), which is no
    # change to the sample; any other byte still has to match.
    assert _to_12_figures(written.read_text()) == _to_12_figures(
        (ROOT / "examples" / "grpo-run.log").read_text()
    ), "examples/grpo-run.log is not what examples/make_sample.py writes; run it and check the docs"


def _to_12_figures(text: str) -> str:
    return re.sub(r"-?\d+\.\d+(?:e[-+]?\d+)?", lambda m: f"{float(m.group()):.12g}", text)
