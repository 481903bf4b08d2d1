"""Statistics that hold up on training curves: windows, effect-size trends, robust spikes.

Training curves are autocorrelated (a smoothed metric has lag-1 autocorrelation
near 1), so a plain significance test calls nearly anything a trend.  A trend
here is an effect size: the median of the recent window against the median of
the window before it, called flat inside a band set by the level and by the
step-to-step noise, and only called at all when Sen's slope agrees in sign.
Every constant says where it comes from; "judgement" means reasoning, not a source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Warm-up steps are unrepresentative (lengths and entropy jump in the first 5-10 steps,
#: per the team notes on training logs): skip at least 5 points, or 2% of a long run.
WARMUP_MIN, WARMUP_SHARE = 5, 0.02
#: The recent window: the last quarter of the run.  Judgement: long enough to outlast the
#: noise, recent enough to describe the run as it is now; "the last tenth" of the signal
#: notes is too few points on a 200-step run.  At least 20 points: the median of n noisy
#: points varies by about 1.25 sigma / sqrt(n), 0.28 sigma at n = 20.
RECENT_SHARE, RECENT_MIN = 0.25, 20
#: The early level (entropy and length baselines): the first 5% after warm-up, at least 5
#: points, as the signals' own how_to_measure says "the first few steps".
EARLY_SHARE, EARLY_MIN = 0.05, 5
#: Fewest points (after warm-up) to call a trend on a dense series.  Judgement: 5 against 5 medians.
MIN_TREND_POINTS = 10
# : Fewest points in either window of a trend.  Judgement:
# a median of 3 is the least that is not one point.
MIN_WINDOW_POINTS = 3
#: Flat band: a change smaller than 5% of the series' scale (judgement: the smallest change a
#: researcher reads off a chart as a trend) or than one step-to-step noise sigma (the
#: proxy_reward_trend signal: "flat when the change is within the step-to-step noise").
FLAT_REL, FLAT_NOISE = 0.05, 1.0
#: Sen's slope on at most this many evenly spaced points (it is O(n^2) in pairs).
SEN_POINTS = 400
#: Spikes: robust z against the median of the previous 25 points (judgement: a few dozen
#: updates, as RLDK's running median), z >= 6 (judgement: far outside noise even for
#: heavy-tailed gradient norms) and at least 4x the rolling median (RLDK's KL spike rule:
#: 4x the running median).
SPIKE_WINDOW, SPIKE_Z, SPIKE_RATIO = 25, 6.0, 4.0
#: And at least SPIKE_OVER_HIGH times the third-highest of those 25 points (all but two): a spike
#: is an update well above the largest the run has been making, not a level it keeps returning
#: to.  A median and MAD collapse onto one level when a metric alternates between two (GRPO steps
#: where every group has zero reward spread log a gradient norm of ~1e-4 between normal steps of
#: ~0.2: the bank's trl-tb-countdown had a 0.16 step called a spike "588x the rolling median").
#: Two points are left out so that a second or third true spike within 25 steps of the first is
#: still found; twice is a judgement: clear of the top of a normal level's spread, and well
#: under the 4x a spike already needs over the median (on one level the two rules agree).
SPIKE_SEEN, SPIKE_OVER_HIGH = 2, 2.0
#: The spike rule in words, as a reading's method says it (diagnose and a watch alike).
SPIKE_RULE = (
    f"a spike is >= {SPIKE_RATIO:g}x the median of the previous {SPIKE_WINDOW} steps, "
    f">= {SPIKE_Z:g} robust sigmas (MAD) above it and >= {SPIKE_OVER_HIGH:g}x the third-highest "
    "of them"
)
#: A sustained jump: the spike rule holding for 3 consecutive updates (RLDK: "for 3 updates";
#: the loss_divergence signal: a jump "that does not recover within a few steps").
JUMP_RUN = 3
MAD_TO_SIGMA = 1.4826  # the MAD of a normal distribution times this is its sigma


#: Runs with fewer logged points skip no warm-up, so their windows still see the start: on a
#: 49-point run, 5 skipped points are a tenth of it and can hold the run's largest change.
#: Judgement: below 100 points a skipped point is at least 1% of the run.
SHORT_RUN = 100
#: Levels.  The first level is the median of the run's first 3 logged points (warm-up
#: included: a warm-up may skip noise but never the run's largest change, and a median of 3
#: shrugs off one odd point while a fast early fall has not yet moved it far).  The last level
#: is the median of the last tenth of the points (at least 3, as the start; the signals' notes
#: read "the last tenth"), or of the recent window when the caller chose one.
FIRST_POINTS, LAST_SHARE, LAST_MIN = 3, 0.10, 3
#: A quantity now at or below this share of its first level is *collapsed*, whatever its recent
#: trend.  Cui et al. 2025 report entropy falling about 73% within 200 steps,
#: by which point about 76% of the eventual gain was in: a level under a quarter of the start is
#: past the point where most of what exploration buys has been bought.
COLLAPSED_SHARE = 0.25


def warmup(n: int) -> int:
    """Points to skip at the start; none on a short run, never more than a fifth of a series."""
    if n < SHORT_RUN:
        return 0
    return min(max(WARMUP_MIN, math.ceil(WARMUP_SHARE * n)), n // 5)


@dataclass
class Level:
    """The run's first level against its last: where it started, where it is, and the ratio."""

    first: float
    last: float
    first_slice: slice
    last_slice: slice
    start: float = math.nan  # the first logged value itself
    first_tenth: float = math.nan  # the median of the first tenth of the points

    @property
    def ratio(self) -> float | None:
        """last / first when both are on one side of zero and the first is not zero; else None."""
        if self.first == 0 or (self.first > 0) != (self.last >= 0):
            return None
        return self.last / self.first

    def collapsed(self) -> bool:
        """At or below COLLAPSED_SHARE of a positive first
        level, or of the first logged value itself
        (no signal may read steady when its level fell
        below a quarter of its first logged value)."""
        top = max([x for x in (self.first, self.start, self.first_tenth) if math.isfinite(x)])
        return top > 0 and 0 <= self.last <= COLLAPSED_SHARE * top

    def describe(self, steps: np.ndarray) -> str:
        ratio = self.ratio
        a, b = int(steps[self.first_slice][0]), int(steps[self.first_slice][-1])
        return f"first level {self.first:.3g} (steps {a}-{b}), now {self.last:.3g}{_share(ratio)}"


def _share(ratio: float | None) -> str:
    """Where a level is against its first, as a reader takes it in: a share up to twice, then
    times ("70 times it", not "7000% of it", for a reward that started near zero)."""
    if ratio is None:
        return ""
    if ratio < 2:
        return f" ({ratio:.0%} of it)"
    return f" ({ratio:.1f} times it)" if ratio < 10 else f" ({ratio:,.0f} times it)"


def level(values: np.ndarray, recent: slice | None = None) -> Level | None:
    """First and last levels of a series of finite points; None with fewer than 2 points."""
    n = values.size
    if n < 2:
        return None
    k = min(FIRST_POINTS, max(1, n // 3))
    first = slice(0, k)
    if recent is not None and recent.stop - recent.start >= 1:
        last = recent
    else:
        m = min(max(LAST_MIN, math.ceil(LAST_SHARE * n)), max(1, n // 2))
        last = slice(n - m, n)
    tenth = float(np.median(values[: max(1, math.ceil(LAST_SHARE * n))]))
    return Level(
        float(np.median(values[first])),
        float(np.median(values[last])),
        first,
        last,
        float(values[0]),
        tenth,
    )


def robust_sigma(values: np.ndarray) -> float:
    if values.size == 0:
        return 0.0
    return float(MAD_TO_SIGMA * np.median(np.abs(values - np.median(values))))


#: Step-to-step differences a whole run's noise is estimated on (evenly spaced): the MAD of 20,000
#: differences is as good an estimate as of 100,000, at a fifth of the cost on a long run.
NOISE_DIFFS = 20_000


def step_noise(values: np.ndarray, most: int | None = None) -> float:
    """Step-to-step noise sigma: the robust spread of first differences over sqrt(2); with
    ``most``, estimated on at most about that many evenly spaced differences."""
    if values.size < 3:
        return 0.0
    diffs = np.diff(values)
    if most is not None and diffs.size > most:
        diffs = diffs[:: math.ceil(diffs.size / most)]
    return robust_sigma(diffs) / math.sqrt(2)


def sen_slope(steps: np.ndarray, values: np.ndarray) -> float:
    """Sen's (Theil-Sen) slope per step; robust to outliers, no normality assumed."""
    if steps.size < 3:
        return 0.0
    if steps.size > SEN_POINTS:
        pick = np.linspace(0, steps.size - 1, SEN_POINTS).astype(int)
        steps, values = steps[pick], values[pick]
    from scipy.stats import theilslopes

    return float(theilslopes(values, steps.astype(float))[0])


@dataclass
class Windows:
    """Index ranges into a series' finite points: warm-up end, early, previous, recent."""

    start: int
    early: slice
    previous: slice
    recent: slice


def windows(steps: np.ndarray, window: int | float | None) -> Windows | None:
    """The judged windows; None when the series is too short to hold them."""
    n = steps.size
    w = warmup(n)
    usable = n - w
    if usable < 2:
        return None
    if window is None:
        k = max(math.ceil(RECENT_SHARE * usable), RECENT_MIN)
    elif isinstance(window, float) and 0 < window <= 1:
        span = steps[-1] - steps[w]
        k = int(np.sum(steps > steps[-1] - window * span))
    else:
        k = int(np.sum(steps > steps[-1] - int(window)))
    # The default keeps room for an equal window before it (trends need one); a window the
    # caller chose is honoured up to everything after warm-up but a baseline's few points.
    if window is None and usable >= 4:
        cap = usable // 2
    else:
        cap = usable - MIN_WINDOW_POINTS if usable > 2 * MIN_WINDOW_POINTS else usable // 2
    k = max(1, min(k, cap))
    recent = slice(n - k, n)
    previous = slice(max(w, n - 2 * k), n - k)
    e = max(EARLY_MIN, math.ceil(EARLY_SHARE * usable))
    early = slice(w, min(w + e, n - k))
    return Windows(w, early, previous, recent)


#: How far past its flat band a change is, in words (the margin: |change| / band).  Judgement:
#: within a quarter of a band beyond it, one more noisy point could undo the call ("just past
#: it"); at three bands a noise-only change is far-fetched (with the band at about one noise
#: sigma, three sigma is the usual bar), so the reading is strong ("far past it").
MARGIN_JUST, MARGIN_FAR = 1.25, 3.0


def margin_words(margin: float) -> str:
    """The margin of a change against its band, as a reader says it."""
    if margin < 1:
        return "inside it"
    if margin < MARGIN_JUST:
        return "just past it"
    return "far past it" if margin >= MARGIN_FAR else "past it"


@dataclass
class Trend:
    direction: str  # rising / flat / falling
    before: float
    after: float
    band: float
    slope: float

    @property
    def change(self) -> float:
        return self.after - self.before

    @property
    def margin(self) -> float:
        """The change in flat bands: past 1 a direction is called, the further the stronger."""
        return abs(self.change) / self.band if self.band > 0 else math.inf

    def describe(self, fmt: str = "{:.3g}") -> str:
        margin = self.margin
        times = f", {margin:.1f} bands" if math.isfinite(margin) and margin >= MARGIN_JUST else ""
        return (
            f"{fmt.format(self.before)} -> {fmt.format(self.after)}, {self.change:+.3g} against a "
            f"flat band of \u00b1{self.band:.3g}: {margin_words(margin)}{times}; Sen's slope "
            f"{self.slope:+.3g}/step"
        )


def judge_trend(
    steps_before: np.ndarray,
    before: np.ndarray,
    steps_after: np.ndarray,
    after: np.ndarray,
    scale_values: np.ndarray,
    noise: float | None = None,
) -> Trend:
    """Rising, flat or falling: medians of two windows, a flat band, and Sen's slope agreeing.

    ``noise``: the band's noise term when the caller knows it better than the windows' own
    step-to-step noise (a held-out score's, from its evaluation set's size)."""
    m0, m1 = float(np.median(before)), float(np.median(after))
    both_steps = np.concatenate([steps_before, steps_after])
    both = np.concatenate([before, after])
    lo, hi = np.percentile(scale_values, [5, 95]) if scale_values.size else (0.0, 0.0)
    scale = max(abs(m0), float(hi - lo))
    band = max(FLAT_REL * scale, FLAT_NOISE * step_noise(both) if noise is None else noise)
    slope = sen_slope(both_steps, both)
    change = m1 - m0
    direction = "flat"
    if abs(change) > band and np.sign(slope) == np.sign(change):
        direction = "rising" if change > 0 else "falling"
    return Trend(direction, m0, m1, band, slope)


@dataclass
class Spike:
    step: int
    value: float
    ratio: float


def _rolling_reference(values: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Median and robust sigma of the ``window`` points
    before each point (NaN for the first ones).
    """
    n = values.size
    med = np.full(n, np.nan)
    sig = np.full(n, np.nan)
    if n <= window:
        return med, sig
    from numpy.lib.stride_tricks import sliding_window_view

    view = sliding_window_view(values, window)[
        :-1
    ]  # view[i] covers points i .. i+window-1, before point i+window
    m = np.median(view, axis=1)
    s = MAD_TO_SIGMA * np.median(np.abs(view - m[:, None]), axis=1)
    med[window:] = m
    sig[window:] = s
    return med, sig


def spikes(steps: np.ndarray, values: np.ndarray, start: int = 0) -> list[Spike]:
    """Points far above the median of the points before them (both the z and the ratio rule)."""
    med, sig = _rolling_reference(values, SPIKE_WINDOW)
    floor = np.maximum(sig, 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (values - med) / floor
        ratio = values / np.abs(med)
    hit = (z >= SPIKE_Z) & (ratio >= SPIKE_RATIO) & np.isfinite(z)
    hit &= values >= SPIKE_OVER_HIGH * _rolling_high(values, SPIKE_WINDOW, SPIKE_SEEN)
    hit[:start] = False
    return [Spike(int(steps[i]), float(values[i]), float(ratio[i])) for i in np.flatnonzero(hit)]


def _rolling_high(values: np.ndarray, window: int, above: int) -> np.ndarray:
    """Per point: the (``above`` + 1)-th highest of the ``window`` points before it (-inf for the
    first ones, where the spike rule has no reference anyway)."""
    high = np.full(values.size, -np.inf)
    if values.size <= window:
        return high
    from numpy.lib.stride_tricks import sliding_window_view

    view = sliding_window_view(values, window)[:-1]
    high[window:] = np.sort(view, axis=1)[:, window - 1 - above]
    return high


def sustained_jump(steps: np.ndarray, values: np.ndarray, start: int = 0) -> int | None:
    """The first step where |value - rolling median|
    breaks the spike rule for JUMP_RUN points in a row.

    Two-sided and on the deviation, since a policy loss sits near zero and can jump either way;
    the ratio rule is on the deviation's size against the median's size plus one noise sigma.
    """
    n = values.size
    if n <= SPIKE_WINDOW + JUMP_RUN:
        return None
    hit = jump_hits(values, start)
    run = 0
    for i in range(n):
        run = run + 1 if hit[i] else 0
        if run >= JUMP_RUN:
            return int(steps[i - JUMP_RUN + 1])
    return None


def breaks_band(
    value: np.ndarray | float, median: np.ndarray | float, sigma: np.ndarray | float
) -> np.ndarray:
    """Whether ``value`` is beyond the jump rule's band around a reference median and sigma."""
    floor = np.maximum(sigma, 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = np.abs(np.asarray(value, dtype=float) - median)
        return (
            (dev / floor >= SPIKE_Z)
            & (dev >= (SPIKE_RATIO - 1) * (np.abs(median) + sigma))
            & np.isfinite(dev)
        )


def jump_hits(values: np.ndarray, start: int = 0) -> np.ndarray:
    """Per point: does it break the jump rule against the rolling median of the points before it?"""
    med, sig = _rolling_reference(values, SPIKE_WINDOW)
    hit = breaks_band(values, med, sig)
    hit[: max(start, SPIKE_WINDOW)] = False
    return hit


def rolling_reference(
    values: np.ndarray, window: int = SPIKE_WINDOW
) -> tuple[np.ndarray, np.ndarray]:
    """Median and robust sigma of the ``window`` points
    before each point (NaN for the first ones).
    """
    return _rolling_reference(values, window)
