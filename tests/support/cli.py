"""Running the installed `rlmap-bot` script exactly as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_cli(args: list[str], env: dict[str, str], stdin: str | bytes | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("rlmap-bot")
    text = not isinstance(stdin, bytes)
    return subprocess.run([str(exe), *args], input=stdin, capture_output=True, text=text, env=env, timeout=timeout)
