#!/usr/bin/env python3
"""Load benchmark: signed events at a fixed rate over
loopback to one and to two replicas, and a kill -9.

    python3 dev.py bench-load [--rate 20] [--seconds 10]
    [--pg URL] [--burst 60] [--api-latency 0.2] [--no-kill]

For each set-up it starts real `rlmap-bot serve --http` processes against the
project's Web API stand-in (tests/support/standin.py), sends DM events at a fixed
rate (round robin across replicas, and one in ten sent again to the other
replica as a Slack retry), and prints p50/p99 from sending the event to the
reply reaching the stand-in, events lost (no reply) and duplicated (more than
one reply). Lost and duplicated must both be 0.

The kill scenario sends a burst of --burst mentions (at --burst-rate a second)
to two replicas with the default lease and sweep interval, kills one with
SIGKILL halfway through, and plays Slack: an event the dead replica did not ack
is retried to the other one. Its stand-in takes --api-latency seconds over a
post (half before making it, half before answering; the real Web API takes
about that long), so the replica dies with events queued, posts on their way
and posts made but not yet recorded. It waits until the survivor has finished
every claim, then prints the same counts and how long after the kill the last
event was answered (the target is 90 s).

The outage scenario (PostgreSQL only) starts one replica whose database is reached
through a TCP proxy on loopback, cuts the proxy for --outage-seconds while sending
events, and prints how long each event took to get its answer: HTTP 500 at once, so
that Slack retries it, well inside Slack's 3 s (tests/test_reliability.py checks the
500s; the time is measured here).

The state store is the PostgreSQL at --pg (or $RLMAP_TEST_PG_URL); without one,
the replicas share a SQLite file on this machine, which is said in the output.
Traffic goes to 127.0.0.1 only, in a bounded number of requests.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.standin import BOT_TOKEN, SIGNING_SECRET, Slack, StandIn  # noqa: E402

EXE = str(Path(sys.executable).with_name("rlmap-bot"))
RECOVERY_TARGET_S = 90  # every event answered within 90 s of a kill -9
PATTERN = r"serving Slack over HTTP at (http://[\d.]+:\d+)/slack/events"


def start_replica(env: dict, log: Path) -> tuple[subprocess.Popen, str]:
    handle = open(log, "w")
    proc = subprocess.Popen(
        [EXE, "serve", "--http", "--port", "0"], env=env, stdout=handle, stderr=subprocess.STDOUT
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        found = re.findall(PATTERN, log.read_text())
        if found:
            return proc, found[-1]
        if proc.poll() is not None:
            raise SystemExit(f"replica exited: {log.read_text()}")
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("replica did not start")


def fresh_pg(admin_url: str) -> str:
    import sqlalchemy as sa

    name = f"rlmap_load_{uuid.uuid4().hex[:10]}"
    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'create database "{name}"')
    engine.dispose()
    return sa.engine.make_url(admin_url).set(database=name).render_as_string(hide_password=False)


def unfinished_claims(state_url: str) -> int:
    import sqlalchemy as sa

    engine = sa.create_engine(state_url if "://" in state_url else f"sqlite:///{state_url}")
    try:
        with engine.connect() as conn:
            return conn.exec_driver_sql(
                "select count(*) from event_claims where status = 'working'"
            ).scalar()
    finally:
        engine.dispose()


def run(
    replicas: int,
    rate: float,
    seconds: float,
    state_url: str,
    tmp: Path,
    kill: bool = False,
    api_latency: float = 0.0,
) -> dict:
    standin = StandIn().start()
    env = dict(
        os.environ,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_URL=standin.base_url,
        RLMAP_STATE_URL=state_url,
        RLMAP_HOME=str(tmp / "home"),
    )
    env.pop("SLACK_APP_TOKEN", None)
    procs, slacks = [], []
    try:
        for i in range(replicas):
            proc, url = start_replica(
                dict(env, RLMAP_DB=str(tmp / f"kb-{replicas}-{i}.db")), tmp / f"r{replicas}-{i}.log"
            )
            procs.append(proc)
            slacks.append(Slack(url, standin))
        for r, slack in enumerate(
            slacks
        ):  # warm each replica (imports, pools, caches) before timing
            for w in range(5):
                slack.event(
                    {
                        "type": "message",
                        "channel_type": "im",
                        "user": "U1",
                        "channel": f"DWARM{r}{w}",
                        "ts": f"1.{w}",
                        "text": "what is DAPO?",
                    }
                )
        standin.wait_for("chat.postMessage", count=5 * replicas, timeout=30)
        standin.settle(quiet=0.5)
        # half on the way to Slack, half on the way back: a replica dies on either side of a post
        if api_latency:
            standin.delays["chat.postMessage"] = standin.holds["chat.postMessage"] = api_latency / 2
        total = int(rate * seconds)
        sent_at: dict[str, float] = {}
        lock = threading.Lock()
        dead: set[int] = set()

        def deliver(r: int, event: dict, event_id: str, retry: int = 0) -> bool:
            if r in dead:
                return False
            headers = {"X-Slack-Retry-Num": str(retry)} if retry else None
            try:
                return slacks[r].event(event, event_id=event_id, headers=headers)[0] == 200
            except (OSError, http.client.HTTPException):
                return False  # the replica died before or while answering

        def send(i: int) -> None:
            channel = f"DLOAD{i:06d}"
            event = {
                "type": "message",
                "channel_type": "im",
                "user": "U1",
                "channel": channel,
                "ts": f"{1000 + i}.1",
                "text": "what is DAPO?",
            }
            event_id = f"EvLoad{uuid.uuid4().hex[:12]}"
            with lock:
                sent_at[channel] = time.time()
            first = i % replicas
            acked = deliver(first, event, event_id)
            if i % 10 == 0 or not acked:  # a Slack retry of the same event, to another live replica
                for other in [(first + k) % replicas for k in range(1, replicas + 1)]:
                    if deliver(other, event, event_id, retry=1) or acked:
                        break

        start = time.time()
        killed_at = None
        with ThreadPoolExecutor(max_workers=16) as pool:
            for i in range(total):
                delay = start + i / rate - time.time()
                if delay > 0:
                    time.sleep(delay)
                if kill and i == total // 2:
                    procs[0].send_signal(signal.SIGKILL)  # no warning, nothing flushed
                    dead.add(0)
                    killed_at = time.time()
                pool.submit(send, i)
        standin.holds.pop("chat.postMessage", None)
        standin.delays.pop("chat.postMessage", None)
        deadline = time.time() + (RECOVERY_TARGET_S if kill else 30)
        recovered = None
        while time.time() < deadline:
            answered = (
                len({c.args["channel"] for c in standin.of("chat.postMessage")})
                >= total + 5 * replicas
            )
            if answered and killed_at and recovered is None:
                recovered = time.time() - killed_at
            # After a kill, wait for the survivor to finish
            # every claim the dead one left (a takeover
            # that posted twice would show only then).
            if answered and (not kill or unfinished_claims(state_url) == 0):
                break
            time.sleep(0.2)
        finished = time.time() - killed_at if killed_at else None
        standin.settle(quiet=2.0 if kill else 1.0, timeout=60)
        replies: dict[str, list[float]] = {}
        for call in standin.of("chat.postMessage"):
            if call.args["channel"].startswith("DWARM"):
                continue
            replies.setdefault(call.args["channel"], []).append(call.at)
        latencies = sorted(
            (min(at) - sent_at[ch]) * 1000 for ch, at in replies.items() if ch in sent_at
        )
        survivor = (tmp / f"r{replicas}-{replicas - 1}.log").read_text()
        return {
            "replicas": replicas,
            "scenario": "kill -9 one" if kill else "steady",
            "recovered": recovered,
            "finished": finished,
            "taken_over": survivor.count("taken over"),
            "found": survivor.count("found in the channel by its metadata"),
            "sent": total,
            "answered": len(latencies),
            "p50": statistics.median(latencies) if latencies else float("nan"),
            "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
            if latencies
            else float("nan"),
            "lost": total - len(latencies),
            "duplicated": sum(1 for at in replies.values() if len(at) > 1),
        }
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        standin.stop()


def outage(pg_url: str, seconds: float, tmp: Path) -> dict:
    """Events sent while the replica's database is cut: their statuses and answer times."""
    import sqlalchemy as sa

    from support.tcpproxy import TcpProxy

    url = sa.engine.make_url(pg_url)
    proxy = TcpProxy(url.host or "127.0.0.1", url.port or 5432).start()
    standin = StandIn().start()
    env = dict(
        os.environ,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_URL=standin.base_url,
        RLMAP_HOME=str(tmp / "home-outage"),
        RLMAP_DB=str(tmp / "kb-outage.db"),
        RLMAP_STATE_URL=url.set(port=proxy.port).render_as_string(hide_password=False),
    )
    env.pop("SLACK_APP_TOKEN", None)
    proc, bot_url = start_replica(env, tmp / "outage.log")
    slack = Slack(bot_url, standin)
    took: list[float] = []
    statuses: list[int | None] = []
    try:
        slack.event(
            {
                "type": "message",
                "channel_type": "im",
                "user": "U1",
                "channel": "DWARM",
                "ts": "1.1",
                "text": "what is DAPO?",
            }
        )
        standin.wait_for("chat.postMessage", timeout=30)
        proxy.down()
        down_at, round_ = time.time(), 0
        while time.time() - down_at < seconds:
            for i in range(4):
                event = {
                    "type": "message",
                    "channel_type": "im",
                    "user": "U1",
                    "channel": f"DOUT{i}",
                    "ts": f"{2000 + i}.1",
                    "text": "what is DAPO?",
                }
                started = time.perf_counter()
                try:
                    retry = {"X-Slack-Retry-Num": str(round_)} if round_ else None
                    statuses.append(slack.event(event, event_id=f"EvOut{i}", headers=retry)[0])
                except (OSError, http.client.HTTPException):
                    statuses.append(None)
                took.append((time.perf_counter() - started) * 1000)
            round_ += 1
            time.sleep(0.3)
    finally:
        proxy.stop()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        standin.stop()
    took.sort()
    return {
        "sent": len(took),
        "500": statuses.count(500),
        "p50": statistics.median(took),
        "max": took[-1],
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rate", type=float, default=20.0, help="events per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to send")
    parser.add_argument(
        "--pg", default=os.environ.get("RLMAP_TEST_PG_URL", ""), help="PostgreSQL admin URL"
    )
    parser.add_argument(
        "--api-latency",
        type=float,
        default=0.2,
        help="kill scenario: seconds the stand-in takes to answer a post (work in flight at the "
        "kill)",
    )
    parser.add_argument(
        "--burst", type=int, default=60, help="kill scenario: mentions in the burst"
    )
    parser.add_argument(
        "--burst-rate", type=float, default=100.0, help="kill scenario: events/s in the burst"
    )
    parser.add_argument("--no-kill", action="store_true", help="skip the kill -9 scenario")
    parser.add_argument(
        "--outage-seconds",
        type=float,
        default=3.0,
        help="outage scenario (needs --pg): seconds the database is cut (0: skip)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        backend = "PostgreSQL" if args.pg else "SQLite file shared on this host (no --pg given)"
        print(
            f"Load: {args.rate:g} DM events/s for {args.seconds:g} s over loopback; 1 in 10 "
            f"retried to the other replica; state store: {backend}"
        )
        print(
            f"   {'replicas':>8} {'scenario':>12} {'sent':>6} {'answered':>9} {'p50 ms':>8} "
            f"{'p99 ms':>8} {'lost':>5} {'duplicated':>11} {'last answer after kill':>23}"
        )
        rows = []
        plan = [(1, False), (2, False)] + ([] if args.no_kill else [(2, True)])
        for replicas, kill in plan:
            url = fresh_pg(args.pg) if args.pg else str(tmp / f"state-{replicas}-{kill}.db")
            if kill:
                row = run(
                    replicas,
                    args.burst_rate,
                    args.burst / args.burst_rate,
                    url,
                    tmp,
                    kill=True,
                    api_latency=args.api_latency,
                )
            else:
                row = run(replicas, args.rate, args.seconds, url, tmp)
            rows.append(row)
            after = f"{row['recovered']:.1f} s" if row["recovered"] is not None else "-"
            print(
                f"   {row['replicas']:>8} {row['scenario']:>12} {row['sent']:>6} "
                f"{row['answered']:>9} {row['p50']:>8.1f} {row['p99']:>8.1f} {row['lost']:>5} "
                f"{row['duplicated']:>11} {after:>23}",
                flush=True,
            )
        if rows[0]["p50"] == rows[0]["p50"]:
            print(
                f"   two replicas / one: p50 {rows[1]['p50'] / rows[0]['p50']:.2f}x, p99 "
                f"{rows[1]['p99'] / rows[0]['p99']:.2f}x"
            )
        if not args.no_kill:
            killed = rows[-1]
            print(
                f"   kill scenario: a burst of {args.burst} mentions at {args.burst_rate:g}/s, one "
                f"replica killed halfway; a post takes {args.api_latency:g} s at the stand-in "
                f"(half before it is made, half after); the survivor took over "
                f"{killed['taken_over']} unfinished events ({killed['found']} replies found "
                f"already posted, by their metadata) and every claim was finished "
                f"{killed['finished']:.1f} s after the kill; lease and sweep as configured "
                f"(default 30 s and 5 s)"
            )
        cut_ok = True
        if args.pg and args.outage_seconds > 0:
            cut = outage(args.pg, args.outage_seconds, tmp)
            cut_ok = cut["500"] == cut["sent"]
            print(
                f"   outage: database cut for {args.outage_seconds:g} s; {cut['sent']} events, "
                f"{cut['500']} answered HTTP 500 (Slack retries them); answer time p50 "
                f"{cut['p50']:.1f} ms, max {cut['max']:.1f} ms (Slack gives up after 3000 ms)"
            )
        return 0 if cut_ok and all(r["lost"] == 0 and r["duplicated"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
