"""The one lease primitive (state/leases.py) on SQLite and PostgreSQL, over tables that use it."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import threading

import pytest

from rlmap_bot.state import leases
from rlmap_bot.state.db import iso
from rlmap_bot.state.leases import OWNER, GaveUp, Leases, owner_gone
from rlmap_bot.state.store import StateStore
from rlmap_bot.state.tables import digest_runs, scout_runs, suggestions

LEASE = dt.timedelta(seconds=30)
EXPIRED = dt.timedelta(seconds=-1)


def test_an_expired_lease_is_taken_over_by_exactly_one_of_many_replicas(state_url):
    store = StateStore(state_url)
    assert store.digests.claim("d1", "T1", "C1", "at:1", [], lease=EXPIRED, owner="dead:1:gone")
    wins: list[str] = []
    barrier = threading.Barrier(6)

    def contend(i: int) -> None:
        other = StateStore(state_url)  # its own engine, as another replica would have
        repo = Leases(other.engine, digest_runs, held="claimed")
        barrier.wait()
        if repo.take_over(digest_runs.c.digest_id == "d1", "d1", f"replica-{i}", LEASE) is not None:
            wins.append(f"replica-{i}")
        other.close()

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    assert store.digests.leases.holder(digest_runs.c.digest_id == "d1") == wins[0]
    assert (
        store.digests.leases.take_over(digest_runs.c.digest_id == "d1", "d1", "late", LEASE) is None
    ), "the winner's lease is live"
    store.close()


def test_renew_and_release_belong_to_the_owner_and_give_up_to_expiry_or_a_gone_owner(state_url):
    store = StateStore(state_url)
    repo = store.digests.leases
    for digest_id, channel, lease, owner in [
        ("live", "C1", LEASE, "alive:2:x"),
        ("old", "C2", EXPIRED, "alive:2:x"),
        ("orphan", "C3", LEASE, "dead:3:x"),
    ]:
        assert store.digests.claim(digest_id, "T1", channel, "at:1", [], lease=lease, owner=owner)
    assert not store.digests.claim("again", "T1", "C1", "at:2", []), "one claimed run per channel"
    assert repo.renew(digest_runs.c.digest_id == "live", "someone-else", LEASE) == 0
    assert repo.renew(digest_runs.c.digest_id == "live", "alive:2:x", LEASE) == 1
    closed = repo.give_up(
        digest_runs.c.team == "T1", "abandoned", gone=lambda owner: owner.startswith("dead:")
    )
    assert closed == 2
    runs = {r["digest_id"]: r["status"] for c in ("C1", "C2", "C3") for r in _runs(store, c)}
    assert runs == {"live": "claimed", "old": "abandoned", "orphan": "abandoned"}
    assert repo.release(digest_runs.c.digest_id == "live", "posted", owner="someone-else") == 0
    assert repo.release(digest_runs.c.digest_id == "live", "posted", owner="alive:2:x") == 1
    assert store.digests.give_up("live") is False, "a released run is not given up"
    store.close()


def test_a_kept_suggestions_try_is_taken_by_one_replica_until_its_lease_runs_out(state_url):
    store = StateStore(state_url)
    now = dt.datetime.now(dt.UTC)
    kept = store.curation.suggest(
        "T1", "2401.00001", "U1", "C1", "waiting", next_try_at=now - dt.timedelta(seconds=1)
    )
    assert store.curation.take(kept.id, LEASE, now, owner="replica-a") is True
    assert store.curation.take(kept.id, LEASE, now, owner="replica-b") is False, (
        "the try's lease is live"
    )
    taken = store.curation.get(kept.id)
    assert taken.attempts == 1 and taken.next_try_at == iso(now + LEASE)
    later = now + LEASE + dt.timedelta(seconds=1)  # replica-a died with the try: its lease ran out
    assert store.curation.take(kept.id, LEASE, later, owner="replica-b") is True
    assert store.curation.get(kept.id).attempts == 2
    assert store.curation.retries.holder(suggestions.c.id == kept.id) == "replica-b"
    store.close()


def test_every_claim_is_owned_by_this_process_owner_id(state_url):
    store = StateStore(state_url)
    store.digests.claim("d1", "T1", "C1", "at:1", [])
    store.curation.claim_scan("scout:1")
    assert store.digests.leases.holder(digest_runs.c.digest_id == "d1") == OWNER
    assert store.curation.scans.holder(scout_runs.c.slot == "scout:1") == OWNER
    assert not store.curation.claim_scan("scout:1"), "a slot is scanned once"
    store.close()


def test_a_claim_taken_over_too_often_is_marked_failed(state_url):
    store = StateStore(state_url)
    store.events.claim("event:E1", "event", "T1", None, "A", EXPIRED)
    with pytest.raises(GaveUp):
        store.events.leases.take_over(
            store.events.leases.c.key == "event:E1", "event:E1", "B", LEASE, max_attempts=1
        )
    assert store.events.get("event:E1")["status"] == "failed"
    store.close()


def test_an_owner_id_says_whether_its_process_is_gone():
    host, pid, token = OWNER.rsplit(":", 2)
    assert host == leases.HOST and int(pid) == os.getpid() and len(token) == 12
    gone = subprocess.Popen(["true"])
    gone.wait()  # exited and reaped: its pid names no process
    assert owner_gone(f"{host}:{gone.pid}:x") is True
    assert owner_gone(f"{host}:{os.getpid()}:earlier") is True, (
        "this pid, another token: an earlier process"
    )
    assert owner_gone(OWNER) is False and owner_gone(leases.owner_id()) is True
    assert owner_gone(f"another-host:{gone.pid}:x") is False, (
        "other hosts cannot be known: the lease decides"
    )


def _runs(store: StateStore, channel: str) -> list[dict]:
    import sqlalchemy as sa

    with store.engine.connect() as conn:
        return [
            dict(r)
            for r in conn.execute(
                sa.select(digest_runs).where(digest_runs.c.channel == channel)
            ).mappings()
        ]
