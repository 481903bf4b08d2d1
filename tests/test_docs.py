"""The README and docs/ agree with the code: command tables, settings tables, the architecture tree,
the scopes, the counts the measurements state, and every link between them.

Like sqlite-utils' documentation tests: a command, option or setting added in code without a line in
the docs (or a docs line for something the code no longer has) fails here.  The README stays one
screen and points at every page of docs/.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml

from rlmap_bot.cli.main import cli
from rlmap_bot.commands import REGISTRY
from rlmap_bot.settings import DEFAULT_SCOPES, env_names
from support import KNOWLEDGE, ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
TEST_ONLY = {"RLMAP_TEST_PG_URL"}
#: One screen: a newcomer reads the README without scrolling far (judgement: a tall terminal).
README_MAX_LINES = 90


def doc(name: str) -> str:
    return (ROOT / name).read_text()


def section(text: str, title: str) -> str:
    """``text`` from the heading ``title`` to the next heading of the same or a higher level."""
    match = re.search(rf"^(#+) {re.escape(title)}\s*$", text, flags=re.M)
    assert match, f"no section {title!r}"
    level = len(match.group(1))
    end = re.search(rf"^#{{1,{level}}} ", text[match.end() :], flags=re.M)
    return text[match.end() : match.end() + end.start() if end else len(text)]


def table_cells(text: str) -> list[str]:
    """The first cell of every table row (header and rule rows left out)."""
    cells = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|\s*-", line):
            cells.append(line.split("|")[1].strip())
    return cells[1:] if cells else cells


def click_commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if isinstance(command, click.Group):
            out.update(click_commands(command, path + " "))
        else:
            out[path] = command
    return out


def test_the_command_table_lists_every_terminal_command_and_option():
    commands = click_commands(cli)
    documented: dict[str, set[str]] = {}
    for cell in table_cells(section(doc("docs/user-guide.md"), "Commands")):
        for usage in re.findall(r"`rlmap-bot([^`]*)`", cell):
            words = re.findall(
                r"(?:^|\s)([a-z][a-z-]*)(?=\s|$)", usage.split(" [")[0].split(" --")[0]
            )
            name = " ".join(w for w in words if w.islower() and w.upper() != w)
            while name and name not in commands and " " in name:
                name = name.rsplit(" ", 1)[0]
            documented.setdefault(name, set()).update(re.findall(r"--[a-z][a-z-]*", usage))
    documented.pop("", None)  # the bare command
    assert set(documented) == set(commands), "the user guide's command table and the CLI disagree"
    for name, options in documented.items():
        known = {o for p in commands[name].params for o in getattr(p, "opts", [])}
        assert options <= known, (
            f"the user guide names options `rlmap-bot {name}` does not have: {options - known}"
        )


def test_the_shell_row_names_the_shell_commands():
    rows = section(doc("docs/user-guide.md"), "Commands").splitlines()
    row = next(line for line in rows if line.startswith("| `rlmap-bot shell`"))
    listed = set(re.findall(r"`([a-z][a-z ]*)`", row.split("; any other line")[0])) - {
        "rlmap-bot",
        "rlmap-bot shell",
    }
    assert listed == {c.name for c in REGISTRY.all("shell")} | {"quit"}


def test_the_docs_name_every_slack_command():
    slack = {c.name for c in REGISTRY.all("slack")}
    text = "\n".join(p.read_text() for p in sorted(DOCS.glob("*.md")))
    documented = set()
    for match in re.findall(r"`/rlmap ([a-z][a-z ]*?)(?: [A-Z\[]|`)", text):
        name = match.strip()
        while name and name not in slack and " " in name:
            name = name.rsplit(" ", 1)[0]
        if name in slack:
            documented.add(name)
    assert documented == slack, f"missing from docs/: {sorted(slack - documented)}"


def test_the_settings_tables_list_every_setting():
    in_tables = set()
    for cell in table_cells(section(doc("docs/operations.md"), "Settings")):
        in_tables.update(re.findall(r"`((?:RLMAP|SLACK)_[A-Z_]+)`", cell))
    assert in_tables - TEST_ONLY == set(env_names()), (
        f"undocumented: {sorted(set(env_names()) - in_tables)}; no such setting: "
        f"{sorted(in_tables - set(env_names()))}"
    )


def test_the_architecture_tree_matches_the_source_tree():
    block = re.search(
        r"```\n(src/rlmap_bot/.*?)```",
        section(doc("docs/architecture.md"), "The package tree"),
        flags=re.S,
    )
    assert block, "docs/architecture.md has a tree of src/rlmap_bot/"
    listed = set(re.findall(r"^  ([a-z_]+(?:/|\.py))", block.group(1), flags=re.M))
    package = ROOT / "src" / "rlmap_bot"
    actual = {
        p.name + "/" for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()
    }
    actual |= {p.name for p in package.glob("*.py") if p.name not in {"__init__.py", "__main__.py"}}
    assert listed == actual, (
        f"not in the docs: {sorted(actual - listed)}; not in the code: {sorted(listed - actual)}"
    )


def test_the_scopes_table_matches_the_manifest_and_the_oauth_default():
    documented = set(table_cells(section(doc("docs/slack.md"), "Scopes")))
    documented = {cell.strip("`") for cell in documented}
    manifest = yaml.safe_load(doc("deploy/manifest.yaml"))["oauth_config"]["scopes"]["bot"]
    assert documented == set(manifest), "docs/slack.md's scopes and deploy/manifest.yaml disagree"
    assert documented == {s.strip() for s in DEFAULT_SCOPES.split(",")}, (
        "SLACK_SCOPES' default differs"
    )


# -- figures the docs state that can be counted without running a benchmark ----------------------


def _questions(name: str) -> list[dict]:
    return yaml.safe_load((ROOT / "tests" / name).read_text())


def test_the_question_set_counts_in_the_measurements_are_the_files():
    text = doc("docs/measurements.md")
    off = lambda items: sum(1 for i in items if not i["expect"])  # noqa: E731
    both = lambda items: sum(1 for i in items if i.get("both"))  # noqa: E731
    for name in ("questions_locked.yaml", "questions_echo.yaml"):
        items = _questions(name)
        counts = f"{len(items)} questions, {off(items)} off-topic, {both(items)} comparisons"
        assert re.search(
            rf"`tests/{re.escape(name)}`\s*\(\s*{re.escape(counts)}", " ".join(text.split())
        ), f"docs/measurements.md should give tests/{name} as ({counts}"
    tuning = _questions("questions.yaml")
    assert f"{len(tuning)} questions, {off(tuning)} off-topic" in text


def test_the_scenario_bank_sizes_in_the_measurements_are_the_files():
    rows = {
        row.split("|")[1].strip().split(" ")[0]: row.split("|")[2].strip()
        for row in section(doc("docs/measurements.md"), "Diagnosis").splitlines()
        if row.startswith("| ")
    }
    for bank in ("locked", "heldout", "tuning"):
        profiles = len(yaml.safe_load((ROOT / "tests" / f"scenarios_{bank}.yaml").read_text()))
        label = "held-out" if bank == "heldout" else bank
        assert rows[label] == str(profiles), (
            f"docs/measurements.md says {rows[label]} {bank} profiles, the file has {profiles}"
        )


def test_the_signal_count_in_the_catalog_page_is_the_folder():
    count = len(list((KNOWLEDGE / "signals").glob("*.yaml")))
    assert re.search(rf"\bThe {count} signals\b", doc("docs/catalog.md")), (
        f"docs/catalog.md should say 'The {count} signals'"
    )


# -- the README: one screen, linking every page, with CI's test command --------------------------


def test_the_readme_fits_one_screen():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


def test_the_readme_links_every_docs_page():
    linked = {Path(target).name for target in re.findall(r"\]\((docs/[^)#]+)", README.read_text())}
    pages = {p.name for p in DOCS.glob("*.md")}
    assert pages <= linked, f"docs pages the README does not link: {sorted(pages - linked)}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {_slug(m) for m in re.findall(r"^#+ (.+)$", text, flags=re.M)}


@pytest.mark.parametrize(
    "page",
    [README, *sorted(DOCS.glob("*.md")), ROOT / "examples" / "README.md"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_relative_link_resolves(page: Path):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # a URL
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)} links to what is not there: {broken}"


def test_ci_runs_the_readmes_test_command():
    block = re.search(r"```sh\n(.*?)```", section(README.read_text(), "Two commands"), flags=re.S)
    assert block, "the README's 'Two commands' section has a sh block"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    test_command = next(c for c in commands if shlex.split(c)[:3] == ["python3", "dev.py", "test"])
    # A line of .ci/run that runs it, its exit status kept (`python3 dev.py test || status=$?`).
    ci = [
        line.split("||")[0].strip()
        for line in doc(".ci/run").splitlines()
        if not line.lstrip().startswith("#")
    ]
    assert test_command in ci, f".ci/run does not run the README's test command {test_command!r}"


# -- the command reference: generated from --help by
#  cog, checked here ------------------------------
COG = [sys.executable, "-m", "cogapp"]
COGGED = ["docs/commands.md"]  # as dev.py docs regenerates them


def test_the_command_reference_is_what_help_prints_now():
    check = subprocess.run(
        [*COG, "--check", *COGGED], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert check.returncode == 0, f"stale: run `python3 dev.py docs`\n{check.stdout}{check.stderr}"


def test_the_command_reference_check_fails_on_a_stale_page(tmp_path):
    page = tmp_path / "commands.md"
    text = (ROOT / "docs" / "commands.md").read_text()
    stale = text.replace("Search the map", "Search the atlas", 1)
    assert stale != text, "the reference shows ask's --help"
    page.write_text(stale)
    check = subprocess.run(
        [*COG, "--check", str(page)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert check.returncode != 0 and "changed" in check.stdout + check.stderr
