"""Renderers: every result type a command declares has a renderer on every surface that offers the
command; results render as terminal text and as Block
Kit within Slack's limits, user text escaped."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from rlmap_bot.cli import render
from rlmap_bot.cli.terminal import Terminal
from rlmap_bot.commands import REGISTRY, Command
from rlmap_bot.commands.context import Invocation
from rlmap_bot.runs.sources.access import local_access, workspace_access
from rlmap_bot.slack.blocks.common import to_dicts
from rlmap_bot.slack.render import Message, Place
from rlmap_bot.slack.render import render as slack_render
from support.standin import StandIn

EVIL = "<!channel> <@U123> <https://evil.example|click> & co"


def _specific(dispatcher, kind: type) -> bool:
    """Whether a singledispatch function has a registration
    for ``kind`` (or a base) other than its default.
    """
    return dispatcher.dispatch(kind) is not dispatcher.dispatch(object)


def renders(surface: str, kind: type) -> bool:
    """Whether ``surface`` renders a ``kind`` result by
    its type: "text" (the terminal, the CLI and the
    shell alike), "json" (the CLI's --json) or "slack"."""
    render.load_features()  # as the first result they take loads them at run time
    presenter = Terminal.__dict__["show"].dispatcher
    if surface == "text":
        return _specific(render.text, kind) or _specific(presenter, kind)
    if surface == "json":  # pydantic writes any model; a stream is written answer by answer
        return issubclass(kind, BaseModel) or _specific(presenter, kind)
    return _specific(slack_render, kind)


def shown(result, place: Place = Place()) -> tuple[list, str]:
    """The one message a result is in Slack: its blocks and notification text."""
    [out] = slack_render(result, place)
    assert isinstance(out, Message), type(out)
    return out.blocks, out.text


def missing_renderers(commands: list[Command]) -> list[str]:
    """Every (command, result type, surface) where the
    command is offered and the type has no renderer.
    """
    missing = []
    for command in commands:
        surfaces = {"cli": "text", "shell": "text", "slack": "slack"}
        wanted = {surfaces[s] for s in command.surfaces} | (
            {"json"} if command.json and "cli" in command.surfaces else set()
        )
        for kind in command.returns:
            missing += [
                f"{command.name} -> {kind.__name__} on {s}"
                for s in sorted(wanted)
                if not renders(s, kind)
            ]
    return missing


def test_every_command_declares_its_result_types():
    vague = [
        c.name
        for c in REGISTRY.all()
        if not c.returns or any(not isinstance(k, type) for k in c.returns)
    ]
    assert vague == []


def test_every_declared_result_type_has_a_renderer_on_every_surface_that_offers_its_command():
    assert missing_renderers(REGISTRY.all()) == []


def test_a_result_type_without_a_renderer_is_found_missing():
    class Unrendered(BaseModel):
        pass

    def handler(ctx) -> Unrendered:
        raise AssertionError("never run")

    handler.__globals__["Unrendered"] = (
        Unrendered  # the annotation is resolved as the handler's module would
    )
    try:
        command = Command(name="nothing", summary="", handler=handler, json=True)
        assert missing_renderers([command]) == [
            "nothing -> Unrendered on slack",
            "nothing -> Unrendered on text",
        ]
    finally:
        del handler.__globals__["Unrendered"]


@pytest.mark.parametrize("surface", ["text", "slack"])
def test_a_renderer_is_found_by_the_type_not_its_name(surface):
    """A class named like a rendered result, but another
    type, has no renderer (it would print as JSON).
    """
    renamed = type("Answer", (BaseModel,), {})
    assert not renders(surface, renamed)


def results(core):
    """One result of every kind a command returns."""
    ctx = Invocation.of(core, "shell", run_access=local_access)
    run = lambda line: REGISTRY.parse(line, "shell", core).command.handler(
        ctx, **REGISTRY.parse(line, "shell", core).args
    )
    return [
        core.ask("reward hacking"),
        core.ask(EVIL),
        run("show ppo"),
        run("stages"),
        run("papers by Schulman"),
        run("papers by nobody-at-all"),
        run("help"),
        run("kb stats"),
        core.diagnose({"proxy_reward_trend": "rising", "heldout_score_trend": "falling"}),
        core.diagnose({}),
    ]


def test_every_result_renders_in_the_terminal(core):
    for result in results(core):
        text = render.text(result)
        assert text.strip() and "Traceback" not in text and not text.lstrip().startswith("{"), type(
            result
        )


def test_every_result_renders_as_valid_block_kit(core):
    for result in results(core):
        blocks, fallback = shown(result)
        dicts = to_dicts(blocks)
        assert StandIn.block_problem(dicts) is None, type(result)
        assert fallback and len(fallback) <= 3000


def test_user_text_is_escaped_once(core):
    answer = core.ask(EVIL)
    blocks, fallback = shown(answer)
    raw = json.dumps(to_dicts(blocks)) + fallback
    for bad in ("<!channel>", "<@U123>", "<https://evil.example"):
        assert bad not in raw
    assert "&lt;!channel&gt;" in raw and "&amp;amp;" not in raw


def test_notices_are_plain_text_that_slack_escapes_and_names_the_actor():
    """Commands write no Slack markup: a path with <!channel>
    in it reaches Slack escaped, the actor as a mention.
    """
    from rlmap_bot.results.general import Notice

    notice = Notice(text=f"stopped watching `runs/{EVIL}.log` here.", public=True, actor="U42")
    blocks, fallback = shown(notice)
    raw = json.dumps(to_dicts(blocks)) + fallback
    for bad in ("<!channel>", "<@U123>", "<https://evil.example"):
        assert bad not in raw
    assert fallback.startswith("<@U42> stopped watching `runs/&lt;!channel&gt;")
    assert render.text(notice).startswith("stopped watching `runs/<!channel>"), (
        "the terminal shows it as typed"
    )


def test_verdict_headline_is_the_same_everywhere(core):
    verdict = core.diagnose({"proxy_reward_trend": "rising", "heldout_score_trend": "falling"})
    blocks, _ = shown(verdict)
    head = to_dicts(blocks)[0]["text"]["text"]
    assert head.startswith("Verdict: Reward quality binds") and head in render.text(verdict)


def test_a_verdict_on_one_measurement_says_so_everywhere(core):
    verdict = core.diagnose({"rollout_wait_fraction": 0.8})
    assert verdict.one_measurement
    blocks, fallback = shown(verdict)
    dicts = to_dicts(blocks)
    slack = json.dumps(dicts)
    terminal = render.text(verdict)
    assert dicts[0]["text"]["text"] == "Verdict: Rollout generation binds"
    confirm = verdict.next_checks[0]
    assert verdict.next_step is not None and verdict.next_step.kind == "check"
    assert verdict.next_step.text == confirm.question, "the next step confirms it first"
    for said in (" ".join(slack.split()), " ".join(terminal.split())):  # the terminal wraps lines
        assert "39% sure, on one measurement: a second reading would confirm it" in said
        assert f"Check next: {confirm.question}" in said.replace("*", ""), "what would confirm it"
    flat = " ".join(terminal.split())
    assert "rests on one measurement" in flat and "generation_utilization" in flat
    firm = core.diagnose({"rollout_wait_fraction": 0.8, "generation_utilization": 0.9})
    assert not firm.one_measurement and "one measurement" not in render.text(firm)


def test_check_next_starts_with_what_would_confirm_a_verdict_on_one_measurement(core):
    """The summary said "to confirm it, check: env_time_fraction, ..." while "Check next" listed
    loss_divergence and contamination_suspected (newcomer pass)."""
    verdict = core.diagnose({"rollout_wait_fraction": 0.7})
    named = verdict.summary.split("to confirm it, check: ")[1].rstrip(".").split(", ")
    assert [c.signal for c in verdict.next_checks][: len(named)] == named


def test_help_for_one_command_sets_options_and_examples_apart():
    from rlmap_bot.commands.admin import help_for

    blocks, _ = shown(help_for(REGISTRY, "slack", "papers"))
    text = json.dumps(to_dicts(blocks), ensure_ascii=False)
    assert (
        "• `/rlmap papers" in text
        and "◦ `[by AUTHOR]`" in text
        and "e.g. `/rlmap papers by Schulman`" in text
    )
    assert "`  " not in text, "no indentation inside code spans"
    lines = render.text(help_for(REGISTRY, "shell", "papers")).splitlines()
    assert lines[0].startswith("  papers [by AUTHOR]")
    assert any(line.startswith("    [by AUTHOR]") for line in lines)
    assert (
        "    e.g. papers by Schulman" in lines and max(len(line) for line in lines) <= render.WIDTH
    )


def test_a_line_of_parts_is_plain_in_the_terminal_and_escaped_markup_in_slack():
    from rlmap_bot.parts import channel, code, emoji, line, plain, title, user
    from rlmap_bot.slack.markup import mrkdwn

    said = line(
        emoji("no_entry_sign"),
        " ",
        title("<!channel> *Free*"),
        " by ",
        user("U0CUR"),
        " in ",
        channel("C0CUR"),
        ": ",
        code("kb-id"),
        " <@U999> & more",
        user("not-an-id"),
        channel("#general"),
    )
    assert (
        plain(said)
        == "<!channel> *Free* by @U0CUR in #C0CUR: kb-id <@U999> & more@not-an-id##general"
    )
    slack = mrkdwn(said)
    # the title's own stars are fenced (zero-width spaces): only the bold around it is markup
    assert slack.startswith(":no_entry_sign: *&lt;!channel&gt; \u200b*\u200bFree\u200b*\u200b*")
    assert " by <@U0CUR> in <#C0CUR>: `kb-id` &lt;@U999&gt; &amp; more" in slack
    assert slack.endswith("someone#general"), "only real ids become mentions and channel links"


def test_slack_replies_render_only_through_the_one_dispatch():
    """A Slack reply is a transport (a response_url, a thread, a modal): what a result becomes is
    registered once per result type in slack/render.py, never overridden by a reply."""
    import rlmap_bot.slack.clicks  # noqa: F401 - the replies to clicks and forms
    import rlmap_bot.slack.listeners.credentials  # noqa: F401 - the credentials form's reply
    from rlmap_bot.slack.dispatch import Reply

    def below(cls: type) -> list[type]:
        return [c for sub in cls.__subclasses__() for c in (sub, *below(sub))]

    replies = below(Reply)
    assert {"SlashReply", "ThreadReply", "ButtonReply", "ShareReply", "CardReply"} <= {
        r.__name__ for r in replies
    }
    assert [r.__name__ for r in replies if "result" in vars(r)] == []


def test_an_answer_offers_share_only_where_it_is_private_and_names_who_shared_it(core):
    from rlmap_bot.slack.render import SHARED

    answer = core.ask("reward hacking")

    def share_buttons(blocks: list) -> list[dict]:
        return [
            e
            for b in to_dicts(blocks)
            if b["type"] == "actions"
            for e in b["elements"]
            if e["action_id"] == "answer_share"
        ]

    assert share_buttons(shown(answer, Place(private=True))[0]), (
        "`/rlmap ask`: only the asker sees it"
    )
    assert share_buttons(shown(answer, Place(private=False))[0]) == [], "a thread: all see it"
    [shared] = slack_render(answer, Place(user="U7", view=SHARED))
    assert isinstance(shared, Message) and shared.public
    assert "<@U7> asked" in json.dumps(to_dicts(shared.blocks)) and not share_buttons(shared.blocks)


def test_every_follow_up_button_runs_a_slack_command_and_its_view_shows_something_else(core):
    """A follow-up (``clicks.FOLLOW_UPS``: a Details button would be one) names a command Slack
    offers, and a view of its result that the rendering tells from the brief one."""
    from rlmap_bot.slack.clicks import FOLLOW_UPS
    from rlmap_bot.slack.render import BRIEF

    # No follow-up reads a run; a Slack invocation still carries a workspace's access.
    ctx = Invocation.of(
        core,
        "slack",
        team="T1",
        workspace="T1",
        run_access=lambda: workspace_access(core.settings, core.state, "T1"),
    )
    verdict = core.diagnose({"proxy_reward_trend": "rising", "heldout_score_trend": "falling"})
    # A stage's card: its brief view cuts a long section short, so its whole view differs; a
    # verdict's details are what its card leaves out.
    samples = {
        "show": "environments",
        "details": core.state.details.keep("T1", "Verdict", verdict.model_dump_json()),
    }
    for action, follow_up in FOLLOW_UPS.items():
        command = REGISTRY.get(follow_up.command)
        assert command is not None and "slack" in command.surfaces, action
        if follow_up.view == BRIEF:
            continue
        result = command.handler(ctx, **follow_up.args(samples[follow_up.command]))
        brief, view = shown(result, Place()), shown(result, Place(view=follow_up.view))
        assert json.dumps(to_dicts(view[0])) != json.dumps(to_dicts(brief[0])), action
