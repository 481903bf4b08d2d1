"""The README agrees with the code: its command tables, its settings tables and its architecture tree.

Like sqlite-utils' documentation tests: a command, option or setting added in code without a line in
the README (or a README line for something the code no longer has) fails here.
"""

from __future__ import annotations

import re

import click

from rlmap_bot.cli.main import cli
from rlmap_bot.commands import REGISTRY
from rlmap_bot.settings import env_names
from support import ROOT

README = (ROOT / "README.md").read_text()
TEST_ONLY = {"RLMAP_TEST_PG_URL"}


def section(title: str) -> str:
    """The README text from the heading ``title`` to the next heading of the same or a higher level."""
    match = re.search(rf"^(#+) {re.escape(title)}\s*$", README, flags=re.M)
    assert match, f"README has no section {title!r}"
    level = len(match.group(1))
    end = re.search(rf"^#{{1,{level}}} ", README[match.end():], flags=re.M)
    return README[match.end(): match.end() + end.start() if end else len(README)]


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
    for cell in table_cells(section("Commands")):
        for usage in re.findall(r"`rlmap-bot([^`]*)`", cell):
            words = re.findall(r"(?:^|\s)([a-z][a-z-]*)(?=\s|$)", usage.split(" [")[0].split(" --")[0])
            name = " ".join(w for w in words if w.islower() and w.upper() != w)
            while name and name not in commands and " " in name:
                name = name.rsplit(" ", 1)[0]
            documented.setdefault(name, set()).update(re.findall(r"--[a-z][a-z-]*", usage))
    documented.pop("", None)  # the bare command
    assert set(documented) == set(commands), "README's command table and the CLI disagree"
    for name, options in documented.items():
        known = {o for p in commands[name].params for o in getattr(p, "opts", [])}
        assert options <= known, f"README names options `rlmap-bot {name}` does not have: {options - known}"


def test_the_shell_row_names_the_shell_commands():
    row = next(line for line in section("Commands").splitlines() if line.startswith("| `rlmap-bot shell`"))
    listed = set(re.findall(r"`([a-z][a-z ]*)`", row.split("; any other line")[0])) - {"rlmap-bot", "rlmap-bot shell"}
    assert listed == {c.name for c in REGISTRY.all("shell")} | {"quit"}


def test_the_slack_tables_list_every_slack_command():
    slack = {c.name for c in REGISTRY.all("slack")}
    documented = set()
    for match in re.findall(r"`/rlmap ([a-z][a-z ]*?)(?: [A-Z\[]|`)", README):
        name = match.strip()
        while name and name not in slack and " " in name:
            name = name.rsplit(" ", 1)[0]
        if name in slack:
            documented.add(name)
    assert documented == slack, f"missing from the README: {sorted(slack - documented)}"


def test_the_settings_tables_list_every_setting():
    in_tables = set()
    for title in ("Configuration", "Settings"):
        for cell in table_cells(section(title)):
            in_tables.update(re.findall(r"`((?:RLMAP|SLACK)_[A-Z_]+)`", cell))
    assert in_tables - TEST_ONLY == set(env_names()), (
        f"undocumented: {sorted(set(env_names()) - in_tables)}; no such setting: {sorted(in_tables - set(env_names()))}")


def test_the_architecture_tree_matches_the_source_tree():
    block = re.search(r"```\n(src/rlmap_bot/.*?)```", section("Architecture"), flags=re.S)
    assert block, "the Architecture section has a tree of src/rlmap_bot/"
    listed = set(re.findall(r"^  ([a-z_]+(?:/|\.py))", block.group(1), flags=re.M))
    package = ROOT / "src" / "rlmap_bot"
    actual = {p.name + "/" for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    actual |= {p.name for p in package.glob("*.py") if p.name not in {"__init__.py", "__main__.py"}}
    assert listed == actual, f"not in the README: {sorted(actual - listed)}; not in the code: {sorted(listed - actual)}"
