"""The command registry as plain text in, command out: one declaration serves every front-end."""

from __future__ import annotations

import pytest

from rlmap_bot.cli import render
from rlmap_bot.commands import REGISTRY
from rlmap_bot.commands.admin import help_for
from rlmap_bot.commands.parser import examples_for
from rlmap_bot.errors import UsageError


def parsed(text: str, surface: str = "shell", core=None):
    found = REGISTRY.parse(text, surface, core)
    return None if found is None else (found.command.name, found.args)


def test_commands_and_their_arguments(core):
    assert parsed("stages") == ("stages", {})
    assert parsed("Show: R1", core=core) == ("show", {"entry": "R1"})
    assert parsed('show "reward hacking"', core=core) == ("show", {"entry": "reward hacking"})
    assert parsed("papers by Schulman") == ("papers", {"by": "Schulman"})
    assert parsed("papers --stage reward by Gao") == ("papers", {"stage": "reward", "by": "Gao"})
    assert parsed("diagnose --resume 1a2b") == ("diagnose", {"resume": "1a2b"})
    assert parsed("digest subscribe daily 07:30 UTC", "slack") == (
        "digest subscribe",
        {"schedule": "daily 07:30 UTC"},
    )
    assert parsed("help diagnose", "slack") == ("help", {"command": "diagnose"})


@pytest.mark.parametrize(
    "text",
    [
        "show me papers on entropy collapse",  # arguments that do not name an entry: a question
        "help me with reward hacking",
        "stages of rollout generation?",
        "why is my reward going up?",
        "papers about entropy",
    ],
)
def test_lines_whose_arguments_do_not_fit_are_questions(text, core):
    assert parsed(text, core=core) is None


@pytest.mark.parametrize(
    "text, surface, expect",
    [
        ("show", "shell", "`show` needs ID"),
        ("ask", "slack", "`/rlmap ask` needs QUESTION"),
        ("stagse", "shell", "did you mean `stages`?"),
        ("diagnoze", "slack", "did you mean `/rlmap diagnose`?"),
        ("digest", "slack", "`/rlmap digest` needs one of subscribe"),
        ("diagnose --frobnicate", "shell", "unknown option --frobnicate"),
        (
            "ask --json ppo",
            "shell",
            "--json is not an option here; it works from the command line (`rlmap-bot ask --json`)",
        ),
        (
            "ask --question x",
            "shell",
            "unknown option --question",
        ),  # a positional parameter is no option anywhere
        ("papers --json=yes", "shell", "--json is not an option here"),
        (
            "diagnose --signals x.json",
            "slack",
            "--signals is not an option here; it works from the command line",
        ),
        ("papers by", "shell", "by needs a value"),
    ],
)
def test_malformed_commands_are_usage_errors(text, surface, expect, core):
    with pytest.raises(UsageError) as info:
        REGISTRY.parse(text, surface, core)
    assert expect in str(info.value)


def test_surfaces_keep_terminal_options_and_channel_commands_apart():
    assert (
        REGISTRY.parse("digest subscribe now", "shell") is None
    )  # not a shell command: a question
    assert "digest subscribe" not in {c.name for c in REGISTRY.all("shell")}
    assert "kb build" not in {c.name for c in REGISTRY.all("slack")}
    assert "json" not in {p.name for p in REGISTRY.get("ask").params_for("slack")}
    with pytest.raises(UsageError):
        REGISTRY.parse("diagnose --signals x.json", "slack")  # a terminal-only option


def test_help_is_generated_for_each_surface():
    slack = help_for(REGISTRY, "slack")
    shell = help_for(REGISTRY, "shell")
    assert any(e.usage.startswith("/rlmap diagnose") for e in slack.commands)
    assert any(e.usage.startswith("/rlmap digest subscribe") for e in slack.commands)
    assert not any("digest" in e.usage for e in shell.commands)
    assert {e.usage.split()[0] for e in shell.commands} >= {
        "ask",
        "show",
        "stages",
        "papers",
        "diagnose",
        "help",
    }
    # The shell's own word is the shell's: its renderer lists it, the command's result does not.
    assert "quit" not in {e.usage for e in shell.commands}
    assert any(line.split()[:1] == ["quit"] for line in render.text(shell).splitlines())
    one = help_for(REGISTRY, "shell", "papers")
    assert one.commands[0].usage.startswith("papers") and any(
        "AUTHOR" in e.usage for e in one.commands
    )


def test_help_shows_only_the_examples_that_work_where_it_is_read():
    for surface in ("slack", "shell", "cli"):
        entries = help_for(REGISTRY, surface, "diagnose").commands
        examples = [e.usage for e in entries if e.kind == "example"]
        assert examples, surface
        for example in examples:  # each one is accepted by the parser of that surface
            words = example.removeprefix("/rlmap ").split()
            if surface != "cli":
                assert REGISTRY.parse(" ".join(words), surface) is not None, (surface, example)
    slack = [
        e.usage for e in help_for(REGISTRY, "slack", "diagnose").commands if e.kind == "example"
    ]
    assert slack == [
        "/rlmap diagnose",
        "/rlmap diagnose --run runs/exp42/train.log",
        "/rlmap diagnose --run wandb:my-team/grpo/abc123",
    ], "--signals is a terminal option"
    cli = examples_for(REGISTRY.get("diagnose"), "cli")
    assert (
        "diagnose --signals run.json --json" in cli and "diagnose --run runs/exp42/train.log" in cli
    )
    assert {e.kind for e in help_for(REGISTRY, "shell", "diagnose").commands} == {
        "command",
        "option",
        "example",
    }


@pytest.mark.parametrize(
    "line, surface, where",
    [
        (
            "watch",
            "shell",
            "in Slack (`/rlmap watch`) and from the command line (`rlmap-bot watch`)",
        ),
        ("digest subscribe", "shell", "in Slack (`/rlmap digest subscribe`)"),
        ("kb build", "shell", "from the command line (`rlmap-bot kb build`)"),
        ("kb build", "slack", "from the command line (`rlmap-bot kb build`)"),
    ],
)
def test_a_command_from_another_surface_says_where_it_works(line, surface, where):
    with pytest.raises(UsageError) as caught:
        REGISTRY.parse(line, surface)
    assert str(caught.value).endswith(where)
    with pytest.raises(UsageError) as caught:
        help_for(REGISTRY, surface, line)
    assert where in str(caught.value)
    if line.split()[0] not in REGISTRY.names(
        surface
    ):  # (`kb` is a group in the shell: its usage applies)
        # A longer line that only starts with the word is a question, as before.
        assert REGISTRY.parse(f"{line} for reward hacking in long runs", surface) is None


def test_every_command_is_declared_once_with_a_summary():
    names = [c.name for c in REGISTRY.all()]
    assert len(names) == len(set(names))
    for command in REGISTRY.all():
        assert command.summary and command.surfaces, command.name


def test_commands_only_buttons_run_are_never_read_from_a_typed_line_nor_listed_in_help(core):
    hidden = [c for c in REGISTRY.all(hidden=True) if c.hidden]
    assert {c.name for c in hidden} >= {
        "diagnose move",
        "curate approve",
        "curate edit",
        "curate reject",
    }
    for command in hidden:
        assert REGISTRY.get(command.name) is command  # a button finds its command by name
        try:  # a typed line naming it is another command, a question, or a usage slip
            typed = REGISTRY.read(f"{command.name} 3fa9c2e1 reward skip", "slack", core).command
        except UsageError:
            typed = None
        assert typed is not command, command.name
        listed = {e.usage for e in help_for(REGISTRY, "slack").commands}
        assert not any(u.startswith(f"/rlmap {command.name}") for u in listed), command.name
    assert [e.usage for e in help_for(REGISTRY, "slack", "curate").commands][0] == (
        "/rlmap curate here"
    )


def test_help_in_slack_names_no_terminal_flag_nor_the_terminal():
    """Issue 38: Slack's help said "(in the terminal: --once)" and "here: shows the candidate". What
    each surface lists is in its own words: in Slack, every flag named is one Slack takes."""
    import re

    listing = help_for(REGISTRY, "slack")
    entries = list(listing.commands)
    for command in REGISTRY.all("slack"):
        entries += help_for(REGISTRY, "slack", command.name).commands
    slack_flags = {p.flag_name for c in REGISTRY.all("slack") for p in c.params_for("slack")}
    for entry in entries:
        said = entry.summary
        assert not re.search(r"\bterminal\b|\bhere:|stdin|Ctrl-C|\bin Slack\b", said), said
        named = set(re.findall(r"--[a-z][a-z-]*", said))
        assert named <= slack_flags, (entry.usage, said)
    # The terminal keeps what only it has.
    assert "--once" in help_for(REGISTRY, "cli", "watch").commands[0].summary
