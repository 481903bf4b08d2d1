"""Helpers shared by the tests: the Slack stand-in, a running bot, drivers for cards and processes,
and synthetic training logs in real formats."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
KNOWLEDGE = ROOT / "knowledge"
