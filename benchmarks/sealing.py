#!/usr/bin/env python3
"""What sealing a claim's request body costs, beside what writing it as JSON already cost.

    .venv/bin/python benchmarks/sealing.py [--repeat 2000]

Every request Slack sends is claimed with its body sealed (slack/claims.py); a takeover opens it.
Two bodies as Slack sends them: a slash command, and a click whose message holds three full
section blocks (about 9 KB). For each: json.dumps alone (what a claim did before), json.dumps
and seal (what it does now), open and json.loads (a takeover), and the stored size.
"""

from __future__ import annotations

import argparse
import json
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from rlmap_bot.crypto import Secret, TokenCipher, new_key  # noqa: E402

COMMAND = {
    "team_id": "T0001",
    "team_domain": "test",
    "channel_id": "C1",
    "channel_name": "general",
    "user_id": "U1",
    "user_name": "someone",
    "command": "/rlmap",
    "text": "credentials set wandb " + "0" * 40,
    "api_app_id": "A1",
    "response_url": "https://hooks.slack.com/commands/T0001/1/abc",
    "trigger_id": "1.2.3",
}
CLICK = dict(
    COMMAND,
    type="block_actions",
    message={"blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 2900}}] * 3},
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    n = parser.parse_args().repeat
    cipher = TokenCipher.from_setting(new_key())
    kept = Secret("kept request", "T0001")
    print(f"{'body':<14}{'bytes':>7}{'dumps us':>10}{'dumps+seal us':>15}{'open+loads us':>15}")
    for name, body in (("slash command", COMMAND), ("click, 9 KB", CLICK)):
        text = json.dumps(body)
        sealed = cipher.seal(text) or ""
        dumps = timeit.timeit(lambda b=body: json.dumps(b), number=n) / n * 1e6
        seal = timeit.timeit(lambda b=body: cipher.seal(json.dumps(b)), number=n) / n * 1e6
        back = timeit.timeit(lambda s=sealed: json.loads(cipher.open(s, kept) or ""), number=n)
        print(
            f"{name:<14}{len(text):>7}{dumps:>10.1f}{seal:>15.1f}{back / n * 1e6:>15.1f}   stored "
            f"{len(sealed)} bytes"
        )


if __name__ == "__main__":
    main()
