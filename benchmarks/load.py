#!/usr/bin/env python3
"""Load benchmark: signed events at a fixed rate over loopback to one and to two replicas.

    python3 dev.py bench-load [--rate 20] [--seconds 10] [--pg URL]

For each set-up it starts real `rlmap-bot serve --http` processes against the
project's Web API stand-in (tests/slack_standin.py), sends DM events at a fixed
rate (round robin across replicas, and one in ten sent again to the other
replica as a Slack retry), and prints p50/p99 from sending the event to the
reply reaching the stand-in, events lost (no reply) and duplicated (more than
one reply). Lost and duplicated must both be 0.  The state store is the
PostgreSQL at --pg (or $RLMAP_TEST_PG_URL); without one, the replicas share a
SQLite file on this machine, which is said in the output.
Traffic goes to 127.0.0.1 only, in a bounded number of requests.
"""

from __future__ import annotations

import argparse
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

from slack_standin import BOT_TOKEN, SIGNING_SECRET, Slack, StandIn  # noqa: E402

EXE = str(Path(sys.executable).with_name("rlmap-bot"))
PATTERN = r"serving Slack over HTTP at (http://[\d.]+:\d+)/slack/events"


def start_replica(env: dict, log: Path) -> tuple[subprocess.Popen, str]:
    handle = open(log, "w")
    proc = subprocess.Popen([EXE, "serve", "--http", "--port", "0"], env=env, stdout=handle, stderr=subprocess.STDOUT)
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


def run(replicas: int, rate: float, seconds: float, state_url: str, tmp: Path) -> dict:
    standin = StandIn().start()
    env = dict(os.environ, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET,
               SLACK_API_URL=standin.base_url, RLMAP_STATE_URL=state_url, RLMAP_HOME=str(tmp / "home"))
    env.pop("SLACK_APP_TOKEN", None)
    procs, slacks = [], []
    try:
        for i in range(replicas):
            proc, url = start_replica(dict(env, RLMAP_DB=str(tmp / f"kb-{replicas}-{i}.db")), tmp / f"r{replicas}-{i}.log")
            procs.append(proc)
            slacks.append(Slack(url, standin))
        for r, slack in enumerate(slacks):  # warm each replica (imports, pools, caches) before timing
            for w in range(5):
                slack.event({"type": "message", "channel_type": "im", "user": "U1", "channel": f"DWARM{r}{w}",
                             "ts": f"1.{w}", "text": "what is DAPO?"})
        standin.wait_for("chat.postMessage", count=5 * replicas, timeout=30)
        standin.settle(quiet=0.5)
        total = int(rate * seconds)
        sent_at: dict[str, float] = {}
        lock = threading.Lock()

        def send(i: int) -> None:
            channel = f"DLOAD{i:06d}"
            event = {"type": "message", "channel_type": "im", "user": "U1", "channel": channel,
                     "ts": f"{1000 + i}.1", "text": "what is DAPO?"}
            event_id = f"EvLoad{uuid.uuid4().hex[:12]}"
            with lock:
                sent_at[channel] = time.time()
            slacks[i % replicas].event(event, event_id=event_id)
            if i % 10 == 0:  # a Slack retry of the same event, to the other replica
                slacks[(i + 1) % replicas].event(event, event_id=event_id, headers={"X-Slack-Retry-Num": "1"})

        start = time.time()
        with ThreadPoolExecutor(max_workers=16) as pool:
            for i in range(total):
                delay = start + i / rate - time.time()
                if delay > 0:
                    time.sleep(delay)
                pool.submit(send, i)
        deadline = time.time() + 30
        while time.time() < deadline:
            if len({c.args["channel"] for c in standin.of("chat.postMessage")}) >= total + 5 * replicas:
                break
            time.sleep(0.2)
        standin.settle(quiet=1.0)
        replies: dict[str, list[float]] = {}
        for call in standin.of("chat.postMessage"):
            if call.args["channel"].startswith("DWARM"):
                continue
            replies.setdefault(call.args["channel"], []).append(call.at)
        latencies = sorted((min(at) - sent_at[ch]) * 1000 for ch, at in replies.items() if ch in sent_at)
        return {
            "replicas": replicas, "sent": total, "answered": len(latencies),
            "p50": statistics.median(latencies) if latencies else float("nan"),
            "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else float("nan"),
            "lost": total - len(latencies),
            "duplicated": sum(1 for at in replies.values() if len(at) > 1),
        }
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        standin.stop()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=20.0, help="events per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to send")
    parser.add_argument("--pg", default=os.environ.get("RLMAP_TEST_PG_URL", ""), help="PostgreSQL admin URL")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        backend = "PostgreSQL" if args.pg else "SQLite file shared on this host (no --pg given)"
        print(f"Load: {args.rate:g} DM events/s for {args.seconds:g} s over loopback; 1 in 10 retried to the other "
              f"replica; state store: {backend}")
        print(f"   {'replicas':>8} {'sent':>6} {'answered':>9} {'p50 ms':>8} {'p99 ms':>8} {'lost':>5} {'duplicated':>11}")
        rows = []
        for replicas in (1, 2):
            url = fresh_pg(args.pg) if args.pg else str(tmp / f"state-{replicas}.db")
            row = run(replicas, args.rate, args.seconds, url, tmp)
            rows.append(row)
            print(f"   {row['replicas']:>8} {row['sent']:>6} {row['answered']:>9} {row['p50']:>8.1f} {row['p99']:>8.1f} "
                  f"{row['lost']:>5} {row['duplicated']:>11}")
        if rows[0]["p50"] == rows[0]["p50"]:
            print(f"   two replicas / one: p50 {rows[1]['p50'] / rows[0]['p50']:.2f}x, p99 {rows[1]['p99'] / rows[0]['p99']:.2f}x")
        return 0 if all(r["lost"] == 0 and r["duplicated"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
