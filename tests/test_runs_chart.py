"""The chart is a real PNG of the curves behind the verdict."""

from __future__ import annotations

import struct

import pytest

from rlmap_bot.runs.chart import render_chart
from rlmap_bot.runs.signals import derive_signals
from rlmap_bot.runs.sources import read_source
from support import runlogs as rl


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_chart_with_windows_marks_and_scores(tmp_path, aliases):
    run = read_source(
        rl.write_verl_console(tmp_path / "x.log", rl.named(rl.curves("grad_spikes"), "verl")),
        aliases=aliases,
    )
    d = derive_signals(run, aliases)
    out = render_chart(
        run,
        d,
        {
            "environments": 0.5,
            "rollouts": 3.0,
            "reward": 1.0,
            "optimization": 2.0,
            "evaluation": 0.0,
        },
        tmp_path / "charts" / "run.png",
    )
    width, height = _png_size(out)
    assert width > 1000 and height > 1000 and out.stat().st_size > 50_000
    plain = render_chart(run, d, path=tmp_path / "plain.png")
    assert _png_size(plain)[0] == width and plain.read_bytes() != out.read_bytes()


def test_chart_needs_a_curve(tmp_path, aliases):
    path = tmp_path / "kl.csv"
    path.write_text("step,actor/kl_coef\n1,0.001\n2,0.001\n")
    run = read_source(path, aliases=aliases)
    with pytest.raises(ValueError, match="nothing to draw"):
        render_chart(run, derive_signals(run, aliases), path=tmp_path / "x.png")


def _pixels_near(path, rgb, tol=0.06):
    import matplotlib.image as image
    import numpy as np

    img = image.imread(path)[..., :3]
    return int(np.sum(np.all(np.abs(img - np.asarray(rgb) / 255) < tol, axis=-1)))


def test_chart_marks_the_first_level_and_the_collapse_line(tmp_path, aliases):
    """A collapsed entropy gets the orange quarter-of-the-start
    line; a healthy run's panels do not.
    """
    orange = (255, 165, 86)  # #ff7f0e at alpha 0.7 over white
    counts = {}
    for pattern in ("entropy_collapse", "healthy"):
        run = read_source(
            rl.write_verl_console(
                tmp_path / f"{pattern}.log", rl.named(rl.curves(pattern), "verl")
            ),
            aliases=aliases,
        )
        d = derive_signals(run, aliases)
        assert d.signal_sources["entropy_trend"].first_level is not None
        counts[pattern] = _pixels_near(
            render_chart(run, d, path=tmp_path / f"{pattern}.png"), orange
        )
    assert counts["entropy_collapse"] > 200 and counts["healthy"] == 0, counts
