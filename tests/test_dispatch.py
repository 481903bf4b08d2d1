"""One parser, one run, refusals instead of guesses:
the same line means the same thing on every surface.
"""

from __future__ import annotations

import time

import pytest

from rlmap_bot.commands import REGISTRY
from rlmap_bot.errors import UsageError
from support.cli import invoke, shell
from support.terminal import RealTerminal


@pytest.mark.parametrize(
    "line, args",
    [
        ("papers by Schulman", {"by": "Schulman"}),
        ("papers BY Schulman stage reward", {"by": "Schulman", "stage": "reward"}),
        ("papers --by stage", {"by": "stage"}),  # an option's value is never read as a chat word
        ("papers --stage=reward by Gao", {"stage": "reward", "by": "Gao"}),
        ("diagnose --run x.log --map a=b --map c=d", {"run": "x.log", "map": ["a=b", "c=d"]}),
    ],
)
def test_chat_words_and_options_are_read_by_one_parser(line, args, env):
    assert REGISTRY.parse(line, "shell").args == args
    # The terminal reads the same words the same way
    # (its output is the same as the options' output).
    words = line.split()
    if words[0] == "papers":
        chat, flags = invoke(words, env), invoke(["papers", *_as_flags(args)], env)
        assert chat.returncode == flags.returncode == 0, chat.stderr
        assert chat.stdout == flags.stdout


def _as_flags(args: dict) -> list[str]:
    return [part for name, value in args.items() for part in (f"--{name}", str(value))]


@pytest.mark.parametrize(
    "words, expect",
    [
        (
            ["papers", "--by", "Schulman", "by", "Hafner"],
            "--by is given twice (Schulman, Hafner); give it once",
        ),
        (
            ["papers", "by", "X", "stage", "reward", "--stage", "rollouts"],
            "--stage is given twice (reward, rollouts)",
        ),
        (
            ["diagnose", "--list", "--resume", "1a2b"],
            "--list and --resume exclude each other; give one",
        ),
        (
            ["diagnose", "--signals", "-", "--run", "x.log"],
            "--signals and --run exclude each other",
        ),
    ],
)
def test_conflicts_are_refused_in_the_terminal_and_in_chat(words, expect, env, core):
    out = invoke(words, env, stdin="{}")
    assert out.returncode == 2 and expect in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == "", "nothing was listed or started"
    if "--signals" not in words:  # a terminal-only option
        with pytest.raises(UsageError) as refused:
            REGISTRY.parse(" ".join(words), "shell", core)
        assert expect in str(refused.value)
        said = shell(core, " ".join(words))
        assert f"error: {expect}" in said


@pytest.mark.parametrize(
    "words, expect",
    [
        (["papers", "--stage", "rewrd"], "unknown stage 'rewrd'; did you mean reward?"),
        (["papers", "stage", "rolouts"], "unknown stage 'rolouts'; did you mean rollouts?"),
        (["papers", "--topic", "nosuchtopic"], "unknown subtopic 'nosuchtopic'"),
    ],
)
def test_unknown_stage_or_topic_is_one_line_with_did_you_mean(words, expect, env):
    out = invoke(words, env)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], out.stderr


def test_shell_answers_commands_it_does_not_run_and_unknown_help_topics(core):
    said = shell(
        core, "watch runs/x.log --once", "help nosuch", "help stagse", "help me with reward hacking"
    )
    assert (
        "error: `watch` is not a command here; it works in Slack (`/rlmap watch`) and from the "
        "command line (`rlmap-bot watch`)"
    ) in said
    assert "error: no command 'nosuch'; `help` lists them" in said
    assert "error: no command 'stagse'; did you mean `stages`?" in said
    # A question that starts with "help" is still a question: the one line is followed by answers.
    assert "(reward-overoptimization, score" in said.split("did you mean `stages`?")[-1]


def test_shell_lines_that_are_plainly_commands_are_not_searched(core):
    """A newcomer's shell: "shwo reward" was answered with a paper on verifiers, and "watch
    examples/grpo-run.log", "suggest 2401.00001" and "serve" were searched as questions."""
    said = shell(
        core,
        "shwo reward",
        "watch examples/grpo-run.log",
        "suggest 2401.00001",
        "serve",
        "papres by Gao",
        "aks what is ppo",
    )
    assert "unknown command `shwo`; did you mean `show`?" in said
    assert "error: `watch` is not a command here; it works in Slack (`/rlmap watch`)" in said
    assert "error: `suggest` is not a command here" in said
    assert (
        "error: `serve` is not a command here; it works from the command line (`rlmap-bot serve`)"
        in said
    )
    assert "unknown command `papres`; did you mean `papers`?" in said
    assert "unknown command `aks`; did you mean `ask`?" in said  # a swap is one edit
    assert "Nothing in the map is relevant" not in said and "score 0." not in said


@pytest.mark.parametrize(
    "line",
    [
        "watch out for reward hacking in long runs",  # a command's word, then English: a question
        "suggest a paper on reward hacking",
        "show me papers on entropy collapse",
        "shall we clip the ratio higher",  # an English word near a command name ("shell")
        "rewrad hacking",  # a typo nearer the map's "reward" than the command "reload"
        # rarer English words near "stages", "reload"
        "outages on rollout workers slow everything down",
        "reloaded the checkpoint and the loss jumped",
        "key metric actor/entropy keeps falling, is that bad?",  # a metric name's slash is no path
        "suggest a fix for kl/entropy blowup",
        "watch the grad norm for spikes",
    ],
)
def test_questions_that_start_like_commands_are_still_questions(core, line):
    assert REGISTRY.parse(line, "shell", core) is None


def test_the_terminal_only_commands_are_the_clicks_not_declared():
    from rlmap_bot.cli.main import cli
    from rlmap_bot.commands import TERMINAL_ONLY

    declared = {c.words[0] for c in REGISTRY.all()}
    assert set(cli.commands) - declared == TERMINAL_ONLY


def test_ctrl_c_in_the_guided_diagnosis_prints_how_to_resume_and_exits_130(env):
    with RealTerminal(["diagnose"], env) as terminal:
        terminal.read_until(b"Q1.")
        terminal.read_until(b"> ")
        terminal.type(b"1\n")  # answer the first question, so there is something to resume
        terminal.read_until(b"Q2.")
        terminal.read_until(b"\n> ")
        time.sleep(0.3)  # a person's pause: input() is waiting for the next key
        terminal.type(b"\x03")  # Ctrl-C
        # Under load a Ctrl-C that lands while readline
        # is still busy is only acted on at the next key:
        # press it again while nothing happens, as a person would.
        terminal.read_until(b"resume with `rlmap-bot diagnose --resume ", nudge=b"\x03")
        assert terminal.exit_code() == 130
        assert b"Aborted" not in terminal.seen and b"Traceback" not in terminal.seen
