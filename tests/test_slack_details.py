"""Issue 38: a verdict card opens with three lines and keeps the rest behind its Details button.
The real Bolt app over signed HTTP against the Slack stand-in: the card a person gets, the click on
Details, and the modal it opens with everything the card left out."""

from __future__ import annotations

import json
import re

import pytest

from support import blockkit
from support import runlogs as rl
from support.bot import start_bot
from support.slackio import blocks_of, slash
from support.standin import TEAM

HACKING = rl.named(rl.phased([("healthy", 150), ("reward_hacking", 150)]), "verl")
NAN = rl.named(rl.phased([("healthy", 150), ("nan", 10), ("healthy", 40)]), "verl")


@pytest.fixture
def hbot(standin, built_db, tmp_path):
    roots = tmp_path / "runs"
    rl.write_verl_console(roots / "exp" / "train.log", HACKING)
    rl.write_verl_console(roots / "bad" / "train.log", NAN)
    bot = start_bot(standin, built_db, tmp_path / "state.db", http=True, rlmap_run_roots=str(roots))
    yield bot
    bot.stop()


def _button(blocks: list[dict], action_id: str) -> dict:
    return next(
        e
        for b in blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == action_id
    )


def _opened(bot, standin, value: str, team: str = TEAM) -> dict:
    before = len(standin.of("views.open"))
    status, _ = bot.slack.click("details_show", value, team=team)
    assert status == 200
    view = standin.wait_for("views.open", count=before + 1, timeout=30)[-1].args["view"]
    return json.loads(view) if isinstance(view, str) else view


def test_a_diagnosis_card_opens_with_three_lines_and_its_details_open_in_a_modal(hbot, standin):
    reply = slash(hbot, standin, "diagnose --run exp/train.log")
    blocks = reply["blocks"]
    header, said = blocks[0], blocks[1]["text"]["text"]
    assert header["type"] == "header" and header["text"]["text"] == "Verdict: Reward quality binds"
    second, third = said.split("\n")
    assert re.fullmatch(r"\d+% sure, on \d readings?", second), second
    assert third.startswith("*Do this next:* Stop early, or bound KL"), third
    readings = blocks[2]["text"]["text"].split("\n")
    assert 1 <= len(readings) <= 3 and all(r.startswith("• ") for r in readings)
    assert blockkit.visible_chars(blocks) <= 1500
    text = blockkit.visible_text(blocks)
    assert "From the logs" not in text and "Stages by score" not in text
    assert text.count("Read 301 steps") == 1, "where it was read from, once"

    view = _opened(hbot, standin, _button(blocks, "details_show")["value"])
    assert view["type"] == "modal" and view["title"]["text"] == "Details"
    shown = blockkit.visible_text(view["blocks"])
    for words in ("From the logs", "heldout_score_trend", "Stages by score", "Check next"):
        assert words in shown, words
    assert not blockkit.problems({"view": view})


def test_a_fault_comes_first_with_its_metric_and_step_and_its_own_lever(hbot, standin):
    blocks = slash(hbot, standin, "diagnose --run bad/train.log")["blocks"]
    header = blocks[0]["text"]["text"]
    assert header.startswith(":rotating_light: Fault: NaN/inf logged ("), header
    assert "from step 151" in header
    said = blocks[1]["text"]["text"]
    assert said.startswith("Then: ") and "*Do this next:* Stabilise the update" in said


def test_details_are_for_their_workspace_only(hbot, standin):
    blocks = slash(hbot, standin, "diagnose --run exp/train.log")["blocks"]
    value = _button(blocks, "details_show")["value"]
    view = _opened(hbot, standin, value, team="T0OTHER")
    assert "no longer kept" in blockkit.visible_text(view["blocks"])
    assert "From the logs" not in blockkit.visible_text(view["blocks"])


def test_a_watch_alert_reads_fault_first_and_opens_its_details(standin, built_db, tmp_path):
    """Issue 38: an alert named the stage before the fault, gave :rotating_light: to a plain change
    of stage, printed its provenance three times and ran to 3.5k characters."""
    from support.watching import Clock, launch, tick, watch_posts

    roots, clock = tmp_path / "runs", Clock()
    records = rl.named(
        rl.phased([("healthy", 300), ("reward_hacking", 200), ("nan", 10), ("healthy", 100)]),
        "verl",
    )
    log = roots / "q" / "run.log"
    rl.write_verl_console(log, [r for r in records if r[0] <= 300])

    def grow(upto: int, after: int) -> None:
        with open(log, "a", encoding="utf-8") as f:
            f.writelines(rl.verl_console_lines([r for r in records if after < r[0] <= upto]))

    bot = launch(standin, built_db, tmp_path / "state.db", roots, clock, http=True)
    try:
        slash(bot, standin, "watch q/run.log every 30m")
        grow(500, 300)  # reward quality starts to bind: a change of stage, no alarm
        tick(bot, clock, 30)
        grow(510, 500)  # NaN loss and inf gradient norm: a fault
        tick(bot, clock, 30)
        (stage, _), (fault, _) = watch_posts(standin)[:2]
        stage_blocks, fault_blocks = (blocks_of(c) for c in (stage, fault))
        assert ":rotating_light:" not in json.dumps(stage_blocks)
        header = fault_blocks[0]["text"]["text"]
        assert header.startswith(":rotating_light: NaN/inf in "), header
        assert "from step 501" in header and "actor/pg_loss" in header
        said = fault_blocks[1]["text"]["text"]
        assert said.startswith("Then: ") and "*Do this next:* Stabilise the update" in said
        for blocks in (stage_blocks, fault_blocks):
            assert blockkit.visible_chars(blocks) <= 1500
            assert blockkit.visible_text(blocks).count("run.log") == 1, "provenance once"
            assert not blockkit.problems({"blocks": blocks})
        view = _opened(bot, standin, _button(fault_blocks, "details_show")["value"])
        shown = blockkit.visible_text(view["blocks"])
        assert "Evidence, from the logs" in shown and "loss_divergence" in shown
        assert "What changed" in shown and "every logged step, as it arrived" in shown
    finally:
        bot.stop()
