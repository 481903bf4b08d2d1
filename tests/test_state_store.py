"""The state store's interface, on SQLite and on PostgreSQL alike."""

from __future__ import annotations

import datetime as dt
import threading

from rlmap_bot.results.diagnosis import Session
from rlmap_bot.state.models import Subscription
from rlmap_bot.state.store import ConflictError, StateStore

UTC = dt.UTC


LEASE = dt.timedelta(seconds=30)


def test_events_are_claimed_once_even_under_concurrency(state_url):
    store = StateStore(state_url)
    wins: list[str] = []
    barrier = threading.Barrier(8)

    def claim(i: int):
        other = StateStore(state_url)  # its own engine, as another replica would have
        barrier.wait()
        wins.append(
            other.events.claim("event:EvRace", "event", "T1", None, f"replica-{i}", LEASE)[0]
        )
        other.close()

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == ["busy"] * 7 + ["new"]
    assert store.events.claim("event:EvRace", "event", "T1", None, "late", LEASE)[0] == "busy"
    store.close()


def test_sessions_round_trip_and_optimistic_versions(state_url):
    store = StateStore(state_url)
    session = store.sessions.create(
        Session(user="U1", team="T1", channel="C1", thread_ts="1.1", answers={"x": 0.5})
    )
    saved = store.sessions.save(session.model_copy(update={"current": "y"}))
    assert saved.version == 1 and store.sessions.get(session.id).current == "y"
    try:
        store.sessions.save(session)  # an old copy
        raise AssertionError("a stale save went through")
    except ConflictError:
        pass
    assert store.sessions.find("T1", "C1", "1.1").id == session.id
    assert store.sessions.find("T2", "C1", "1.1") is None, "another workspace's thread"
    store.close()


def test_subscriptions_ledger_and_runs(state_url):
    store = StateStore(state_url)
    sub = store.subscriptions.save(Subscription(team="T1", channel="C1", timezone="Europe/Paris"))
    store.subscriptions.save(Subscription(team="T2", channel="C1"))
    assert [s.id for s in store.subscriptions.list(team="T1")] == [sub.id]
    replaced = store.subscriptions.save(Subscription(team="T1", channel="C1", frequency="daily"))
    assert (
        store.subscriptions.get("T1", "C1").id == replaced.id
        and len(store.subscriptions.list()) == 2
    )
    assert (
        store.digests.claim("d1", "T1", "C1", "at:2026-12-07T08:00", [("ppo", "v1", "new")]) is True
    )
    assert (
        store.digests.claim("d2", "T1", "C1", "at:2026-12-07T08:00", [("ppo", "v1", "new")])
        is False
    )
    assert store.digests.claim("d3", "T2", "C1", "at:2026-12-07T08:00", []) is True, (
        "slots are per workspace"
    )
    assert [r["digest_id"] for r in store.digests.pending("T1", "C1")] == ["d1"]
    store.digests.record("d1", "123.456")
    store.digests.record("d1", "123.456")  # recording twice is harmless
    assert store.digests.delivered("T1", "C1") == {("ppo", "v1")}
    assert store.digests.delivered("T2", "C1") == set()
    assert store.digests.pending("T1", "C1") == []
    store.subscriptions.mark_run(replaced, dt.datetime(2026, 12, 7, 8, tzinfo=UTC))
    assert store.subscriptions.get("T1", "C1").last_run_at == dt.datetime(
        2026, 12, 7, 8, tzinfo=UTC
    )
    removed = store.forget_team("T1")
    assert removed["subscriptions"] == 1 and removed["digest_ledger"] == 1
    assert (
        store.subscriptions.get("T1", "C1") is None
        and store.subscriptions.get("T2", "C1") is not None
    )
    store.close()


def test_card_details_are_kept_per_workspace_and_forgotten_after_a_while(state_url):
    store = StateStore(state_url)
    kept = store.details.keep("T1", "RunDiagnosis", '{"binding_stage": "reward"}')
    assert store.details.get("T1", kept) == ("RunDiagnosis", '{"binding_stage": "reward"}')
    assert store.details.get("T2", kept) is None, "another workspace never reads them"
    assert store.details.get("T1", "nope") is None
    assert store.details.forget(dt.datetime.now(dt.UTC) - dt.timedelta(days=1)) == 0
    assert store.details.forget(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)) == 1
    assert store.details.get("T1", kept) is None
    assert store.forget_team("T1").get("card_details", 0) == 0
    store.close()
