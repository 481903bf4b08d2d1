"""A simulated guided diagnosis (`diagnose --simulate`): the verdict and the questions it took."""

from __future__ import annotations

from pydantic import Field

from rlmap_bot.diagnosis.engine import Verdict


class Simulation(Verdict):
    """A simulated guided diagnosis: the verdict, and which questions it took to reach it."""

    asked: list[str] = Field(description="Signal questions put to the simulated team, in order.")
    complaint_asked: bool = Field(description="Whether the opening complaint question was offered.")
