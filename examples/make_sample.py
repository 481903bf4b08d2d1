"""Write the sample training log the README and docs use: ``python3 examples/make_sample.py``.

The log is synthetic. It comes from the test suite's generator (``tests/support/runlogs.py``):
the ``reward_hacking`` pattern, 200 steps of GRPO-style training in verl's metric names, printed
the way verl's console logger prints them (Ray's ``(TaskRunner pid=...)`` prefix, numpy 2's
``np.float64(...)``), without the ANSI colours so the file reads well in a pager.
``tests/test_examples.py`` checks that this script still writes exactly the file that is committed.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from support.runlogs import curves, named, write_verl_console  # noqa: E402

SAMPLE = HERE / "grpo-run.log"


def write(path: Path = SAMPLE) -> Path:
    """The sample log at ``path``: seed 0, steps 0-200, a validation score every 10 steps."""
    return write_verl_console(
        path, named(curves("reward_hacking", steps=200, seed=0), "verl"), ansi=False
    )


if __name__ == "__main__":
    print(f"wrote {write()}")
