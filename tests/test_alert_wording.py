"""A watch post carries typed changes; one wording says them, the same in Slack and the terminal."""

from __future__ import annotations

import json

from rlmap_bot.cli.render import as_json
from rlmap_bot.cli.render_posts import alert_text
from rlmap_bot.results.watch import (
    Alert,
    Change,
    FaultOpened,
    FaultOver,
    Readable,
    StageChanged,
    StageStarted,
    WatchPaused,
)
from rlmap_bot.runs.growing.scan import CLEAR_FINITE, NanFault
from rlmap_bot.slack.blocks.watch import alert_blocks
from rlmap_bot.wording.posts import alert_changes, alert_title


def _alert(kind: str, *changes: Change) -> Alert:
    return Alert(
        watch_id="w" * 32,
        kind=kind,  # type: ignore[arg-type]
        conditions=["binds:reward"],
        changes=list(changes),
        path="exp/train.log",
    )


def _slack_text(alert: Alert) -> str:
    return json.dumps([b.to_dict() for b in alert_blocks(alert)], ensure_ascii=False)


def test_a_stage_change_and_a_fault_read_as_one_title_and_a_sentence_each():
    nan = NanFault(first_step=40, last_bad_step=60, metrics=["loss"], bad_steps=5).finding()
    alert = _alert(
        "alert",
        StageChanged(
            kind="change", stage="Reward quality", previous="Optimization", confidence=0.8
        ),
        FaultOpened(fault=nan, transient=True),
    )
    # issue 38: the fault first, whatever order the check found them in
    assert alert_title(alert) == (
        "Fault: NaN/inf in loss · Binding stage changed: Optimization → Reward quality"
    )
    assert alert_changes(alert) == [
        "Optimization no longer binds; Reward quality does now (the verdict is 80% sure).",
        "NaN/inf in loss from step 40 (last at step 60, 5 steps) (already over).",
    ]


def test_slack_and_the_terminal_show_the_same_title_and_sentences():
    alert = _alert(
        "alert", StageStarted(kind="start", stage="Reward quality", step=500, confidence=0.91)
    )
    said = alert_changes(alert)
    assert said == [
        "Reward quality binds now, on the run up to step 500 (the verdict is 91% sure)."
    ]
    terminal, slack = alert_text(alert), _slack_text(alert)
    assert alert_title(alert) == "Reward quality started to bind"
    assert all(s in terminal and s in slack for s in [alert_title(alert), *said])


def test_a_resolved_fault_says_when_it_cleared():
    fault = NanFault(first_step=40, last_bad_step=40, metrics=["loss"], active=False)
    fault.cleared_step = 90
    note = _alert("resolved", FaultOver(fault=fault.finding()))
    assert alert_title(note) == "Resolved: NaN/inf over"
    assert alert_changes(note) == [
        f"NaN/inf in loss from step 40; finite again for {CLEAR_FINITE} steps by step 90."
    ]


def test_notices_word_the_reason_they_carry():
    paused = _alert("paused", WatchPaused(reason="gone", message="the log was deleted"))
    assert alert_title(paused) == "Watch paused: the log is gone"
    assert alert_changes(paused) == ["the log was deleted.", "I stopped checking it."]
    again = _alert("resolved", Readable())
    assert alert_title(again) == "Reading the run again"


def test_json_output_carries_typed_changes_and_the_posts_sentences():
    alert = _alert(
        "alert", StageStarted(kind="tie", stage="Reward quality and Data", step=7, confidence=0.6)
    )
    plain = alert.model_dump(mode="json")
    assert plain["changes"][0]["kind"] == "tie" and "title" not in plain
    shown = json.loads(as_json(alert))
    assert shown["title"] == "Reward quality and Data both have strong evidence"
    assert shown["said"] == alert_changes(alert) and shown["changes"] == plain["changes"]
