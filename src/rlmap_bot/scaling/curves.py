"""The curve shapes a run's metric is fitted with, and their least-squares fits.

The main shape is ScaleRL's saturating sigmoid in compute (Khatri et al. 2025, catalog entry
``scalerl``): ``R(C) = R0 + (A - R0) / (1 + (C_mid / C) ** B)``, where ``A`` is the ceiling, ``B``
the efficiency (how steeply the gain comes) and ``C_mid`` the compute at which half of the gain
``A - R0`` is reached. A power law and a straight line are fitted beside it only as baselines of the
backtest (``benchmarks/forecast.py``).

Everything here takes plain numpy arrays (``x`` ascending and positive: steps, samples, tokens or
GPU-hours) and knows nothing of logs or front-ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Bounds on the sigmoid's exponent B. ScaleRL's fitted exponents are of order one; 0.2 is a curve
#: so flat in log-compute that it is no sigmoid at all, and past 8 it is a step. Judgement: wide
#: enough for every curve in the real-log bank, narrow enough that a fit on noise cannot run off.
B_BOUNDS = (0.2, 8.0)
#: The fitted ceiling may lie at most this many seen ranges beyond the values seen (either way).
#: Judgement: an extrapolation further than that from a partial curve is the fit chasing noise;
#: the bound keeps the least-squares problem bounded, the forecast's own rules decide more.
A_REACH = 3.0


@dataclass(frozen=True)
class Sigmoid:
    """ScaleRL's curve: ``r0 + (a - r0) / (1 + (c_mid / x) ** b)``."""

    r0: float
    a: float
    b: float
    c_mid: float

    def __call__(self, x: np.ndarray | float) -> np.ndarray:
        x = np.maximum(np.asarray(x, dtype=float), 1e-12)
        z = np.clip(self.b * (np.log(self.c_mid) - np.log(x)), -60.0, 60.0)
        return self.r0 + (self.a - self.r0) / (1.0 + np.exp(z))

    def reach(self, share: float) -> float:
        """The x at which ``share`` (0-1) of the gain ``a - r0`` is reached."""
        share = min(max(share, 1e-9), 1 - 1e-9)
        return float(self.c_mid * (share / (1 - share)) ** (1 / self.b))


@dataclass(frozen=True)
class Fit:
    """A fitted curve and how well it fits: the residual spread and the points it saw."""

    curve: Sigmoid
    rmse: float
    points: int


def _sigmoid_residuals(params: np.ndarray, lx: np.ndarray, y: np.ndarray) -> np.ndarray:
    r0, a, b, lc = params
    z = np.clip(b * (lc - lx), -60.0, 60.0)
    return r0 + (a - r0) / (1.0 + np.exp(z)) - y


def _sigmoid_jacobian(params: np.ndarray, lx: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The residuals' derivatives in (r0, a, b, log c_mid), written out: the solver then needs no
    finite differences (four extra evaluations an iteration), the same optimum several times
    sooner."""
    r0, a, b, lc = params
    z = np.clip(b * (lc - lx), -60.0, 60.0)
    s = 1.0 / (1.0 + np.exp(z))
    slope = -(a - r0) * s * (1.0 - s)  # d residual / dz
    return np.column_stack([1.0 - s, s, slope * (lc - lx), slope * b])


#: The multi-start's pruning: every start takes ``PROBE`` solver evaluations, and only the
#: ``FINISH`` lowest-cost of them are run on to convergence. Measured on the 35 wider-tier curves
#: the bank had then, at five cuts (175 forecasts, docs/measurements.md "Forecast backtest"): the
#: same median errors and coverage at every cut and part as running all twelve starts to
#: convergence, about 3 times less CPU, and no forecast moved by more than 0.0012 of its curve's
#: range. (15 and 2: a forecast moved by up to 0.016; 20 and 3: 0.0012, at 2 times less CPU.)
PROBE = 10
FINISH = 2


def fit_sigmoid(
    x: np.ndarray, y: np.ndarray, r0: float | None = None, start: Sigmoid | None = None
) -> Fit | None:
    """The least-squares sigmoid through ``(x, y)``, from a few starting points (the problem has
    local minima; the starts are pruned after a few evaluations, ``PROBE``), or from ``start``
    alone; ``r0`` fixes the start level when given. None when the solver fails from every start."""
    from scipy.optimize import least_squares

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 4:
        return None
    lx = np.log(np.maximum(x, 1e-12))
    lo_y, hi_y = float(np.min(y)), float(np.max(y))
    span = max(hi_y - lo_y, 1e-9)
    head = float(np.mean(y[: max(2, y.size // 10)]))
    tail = float(np.mean(y[-max(2, y.size // 10) :]))
    lc_lo, lc_hi = float(lx[0]) - math.log(100.0), float(lx[-1]) + math.log(1000.0)
    lower = [lo_y - A_REACH * span, lo_y - A_REACH * span, B_BOUNDS[0], lc_lo]
    upper = [hi_y + A_REACH * span, hi_y + A_REACH * span, B_BOUNDS[1], lc_hi]
    if r0 is not None:
        lower[0], upper[0] = r0 - 1e-9 * span, r0 + 1e-9 * span
    starts = [
        (head if r0 is None else r0, a0, b0, lc0)
        for b0 in (0.7, 1.5, 3.0)
        for lc0 in (float(np.median(lx)), float(lx[-1]))
        for a0 in (tail, tail + (tail - head))
    ]
    if start is not None:
        starts = [(start.r0, start.a, start.b, math.log(start.c_mid))]

    def solve(first, evaluations: int):
        start_p = np.clip(first, np.array(lower) + 1e-12, np.array(upper) - 1e-12)
        try:
            return least_squares(
                _sigmoid_residuals,
                start_p,
                jac=_sigmoid_jacobian,
                bounds=(lower, upper),
                args=(lx, y),
                loss="soft_l1",
                f_scale=max(span / 10, 1e-9),
                max_nfev=evaluations,
            )
        except (ValueError, np.linalg.LinAlgError):
            return None

    def cost(res) -> float:
        return float(np.sum(res.fun**2))

    if len(starts) > 1:
        probes = [r for r in (solve(first, PROBE) for first in starts) if r is not None]
        probes.sort(key=cost)
        # A probe that stopped short of its evaluations converged already (status 0: the cap).
        # A run-on that fails keeps the probe it started from.
        finished = [r if r.status != 0 else solve(r.x, 400) or r for r in probes[:FINISH]]
    else:
        finished = [solve(starts[0], 400)]
    found = [r for r in finished if r is not None]
    if not found:
        return None
    best = min(found, key=cost)
    r0_f, a, b, lc = (float(v) for v in best.x)
    curve = Sigmoid(r0=r0_f, a=a, b=b, c_mid=math.exp(lc))
    rmse = math.sqrt(cost(best) / y.size)
    return Fit(curve=curve, rmse=rmse, points=int(y.size))


def fit_power(x: np.ndarray, y: np.ndarray):
    """``y = a + b * x ** c`` by least squares (a baseline); a callable, or None."""
    from scipy.optimize import least_squares

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 4:
        return None
    span = max(float(np.ptp(y)), 1e-9)

    def resid(p):
        return p[0] + p[1] * np.power(x, p[2]) - y

    def jac(p):  # written out, as the sigmoid's: no finite differences
        xc = np.power(x, p[2])
        return np.column_stack([np.ones_like(x), xc, p[1] * xc * np.log(x)])

    best = None
    for c0 in (-0.5, 0.3, 1.0):
        try:
            res = least_squares(
                resid,
                [float(y[-1]), -span if c0 < 0 else span / max(x[-1] ** c0, 1e-9), c0],
                jac=jac,
                bounds=([-np.inf, -np.inf, -3.0], [np.inf, np.inf, 2.0]),
                max_nfev=400,
            )
        except (ValueError, np.linalg.LinAlgError):
            continue
        cost = float(np.sum(res.fun**2))
        if best is None or cost < best[0]:
            best = (cost, res.x)
    if best is None:
        return None
    a, b, c = best[1]
    return lambda t: a + b * np.power(np.asarray(t, dtype=float), c)


def smoothed(y: np.ndarray) -> np.ndarray:
    """A centred running mean over a twentieth of the points (at least 3): crossings of a noisy
    curve are read on it, so one lucky step does not count as reaching a level."""
    k = max(3, y.size // 20)
    kernel = np.ones(k) / k
    padded = np.concatenate([np.full(k // 2, y[0]), y, np.full(k - 1 - k // 2, y[-1])])
    return np.convolve(padded, kernel, mode="valid")


def below_best(y: np.ndarray, level: float, noise: float, z: float) -> float | None:
    """The curve's best smoothed level when ``level`` lies below it by more than ``z`` times the
    noise of a smoothed level (``noise`` over the root of the smoothing window), else None: a
    curve that has turned down from its best, not one whose last points dipped."""
    best = float(np.max(smoothed(y)))
    window = max(3, np.asarray(y).size // 20)  # the window smoothed averages over
    return best if best - level > z * noise / math.sqrt(window) else None


def noise_sd(y: np.ndarray) -> float:
    """Step-to-step noise: the MAD of first differences, scaled to a standard deviation of one
    point (a difference of two independent points has sqrt(2) times the spread)."""
    y = np.asarray(y, dtype=float)
    if y.size < 3:
        return 0.0
    d = np.diff(y)
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2))
