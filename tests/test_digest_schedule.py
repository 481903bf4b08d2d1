"""Digest schedules with a controlled clock (APScheduler's
real triggers), and a real scheduler firing.
"""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from rlmap_bot.digest.schedule import DigestJobs, last_due, missed_run, next_run, slot_key
from rlmap_bot.digest.subscribe import SubscribeError, parse_subscription
from rlmap_bot.jobs import Scheduler
from rlmap_bot.state.models import Subscription

UTC = dt.UTC


def at(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


def sub(**kw) -> Subscription:
    values = dict(team="T", channel="C", timezone="Europe/London", created_at=at(2026, 1, 1))
    values.update(kw)
    return Subscription(**values)


def test_weekly_fires_at_local_time_across_dst_changes():
    s = sub()  # weekly, Monday 09:00, Europe/London
    assert next_run(s, at(2026, 3, 16, 12)) == at(2026, 3, 23, 9)  # GMT: 09:00 local = 09:00 UTC
    assert next_run(s, at(2026, 3, 23, 12)) == at(2026, 3, 30, 8)  # BST since 29 March: 08:00 UTC
    assert next_run(s, at(2026, 10, 19, 12)) == at(2026, 10, 26, 9)  # GMT again after 25 October
    ny = sub(timezone="America/New_York", day="fri", time="17:30")
    assert next_run(ny, at(2026, 3, 2)) == at(2026, 3, 6, 22, 30)  # EST
    assert next_run(ny, at(2026, 3, 7)) == at(2026, 3, 13, 21, 30)  # EDT from 8 March


def test_daily_schedule():
    s = sub(frequency="daily", time="07:15", timezone="Asia/Tokyo")
    assert next_run(s, at(2026, 12, 1, 23)) == at(2026, 12, 2, 22, 15)


def test_a_missed_run_is_caught_up_once_within_grace():
    s = sub(last_run_at=at(2026, 11, 23, 9))  # then the bot was down over two Mondays
    now = at(2026, 12, 7, 10)
    assert last_due(s, now) == at(2026, 12, 7, 9)
    assert missed_run(s, now) == at(2026, 12, 7, 9)  # one run, not two
    assert missed_run(s, at(2026, 12, 8, 10)) is None  # 25 hours late is past the 12-hour grace
    assert missed_run(s.model_copy(update={"last_run_at": at(2026, 12, 7, 9, 0, 5)}), now) is None


def test_scheduler_catches_up_at_start_and_fires_jobs():
    fired: list[tuple[str, dt.datetime]] = []
    event = threading.Event()

    def fire(sub_id, due):
        fired.append((sub_id, due))
        event.set()

    late = sub(channel="C1", last_run_at=at(2026, 11, 30, 9))
    fresh = sub(channel="C2", last_run_at=at(2026, 12, 7, 9, 1))
    scheduler = Scheduler()
    try:
        caught = scheduler.register(
            DigestJobs(fire, load=lambda: [late, fresh]), now=at(2026, 12, 7, 11)
        )
        assert caught == [late.id]
        assert event.wait(10), (
            "the catch-up never ran"
        )  # in the scheduler's threads, not holding up the start
        assert fired == [(late.id, at(2026, 12, 7, 9))]
        assert scheduler.next_run_time("digest", fresh.id) > dt.datetime.now(UTC)
        # Bring one job forward: the real APScheduler runs it on its own thread.
        event.clear()
        scheduler.run_soon(
            "digest", fresh.id, dt.datetime.now(UTC) + dt.timedelta(milliseconds=300)
        )
        assert event.wait(10), "the scheduler never fired"
        assert fired[-1][0] == fresh.id
    finally:
        scheduler.shutdown()


def test_slot_keys_are_stable():
    assert slot_key(at(2026, 12, 7, 9)) == "at:2026-12-07T09:00+00:00"


@pytest.mark.parametrize(
    "words, message",
    [
        (["fortnightly"], "'fortnightly' is not a frequency"),
        (["25:00"], "not a time of day"),
        (["Mars/Olympus"], "unknown timezone"),
        (["stage:rewrd"], "unknown stage 'rewrd'; did you mean stage:reward?"),
        (["daily", "friday"], "a daily digest takes no day"),
    ],
)
def test_bad_subscribe_words(core, words, message):
    with pytest.raises(SubscribeError, match=message):
        parse_subscription(words, "T", "C", "U", "UTC", core.store.catalog)


def test_subscribe_words(core):
    s = parse_subscription(
        ["daily", "8:05", "America/Chicago", "topic:data-scaling", "note-empty"],
        "T",
        "C",
        "U",
        "UTC",
        core.store.catalog,
    )
    assert (s.frequency, s.time, s.timezone, s.filters, s.on_empty) == (
        "daily",
        "08:05",
        "America/Chicago",
        ["topic:data-scaling"],
        "note",
    )
    d = parse_subscription([], "T", "C", "U", "Asia/Kolkata", core.store.catalog)
    assert (d.frequency, d.day, d.time, d.timezone, d.on_empty) == (
        "weekly",
        "mon",
        "09:00",
        "Asia/Kolkata",
        "skip",
    )
