"""The guided diagnosis after a log reading: what
the logs told, and the questions they left open.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from rlmap_bot.results.diagnosis import Step
from rlmap_bot.results.runs import RunDiagnosis


class GuidedRun(BaseModel):
    """`diagnose --run PATH` at a prompt: the readings, then a guided session started with the
    values the logs gave as answers already, so it asks only what they could not tell."""

    readings: RunDiagnosis = Field(
        description="What was read from the logs and how (its verdict comes later)."
    )
    step: Step = Field(
        description="The session's first step: its first open question, or its verdict."
    )
