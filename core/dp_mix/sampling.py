"""Samplers for the calibrated noise: plain (numpy) and secure (OS randomness, snapped grid).

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078).

* lattice mixtures (multi, optimised): Z = h L + sigma N, L a discrete Laplace on [-K, K] with
  P(L = k) ~ e^{-decay h |k|};  quasi-Gaussian: :func:`mlx26.core.dp_mix.quasi.sample_quasi`;
  Gaussian: sigma N; Laplace, truncated Laplace (inverse CDF) and the staircase (Geng &
  Viswanath's sign / geometric / Bernoulli / uniform construction).
* ``secure`` (our construction in the spirit of Mironov, "On significance of the least
  significant bits for differential privacy", CCS 2012): floating-point samplers leak through
  the pattern of representable outputs, so the release is snapped to a grid of
  Lambda = 2^k (about 1/64 of the noise scale): the query is rounded to the grid, and an
  integer index j is drawn *exactly* from the grid distribution of round_Lambda(Z), quantised
  to integers summing to 2^126, with 126-bit integers from ``os.urandom`` (inverse CDF by integer
  search; no floating point on the random path).  Rounding the query moves neighbours apart by
  at most D + Lambda, so the continuous mechanism is calibrated for sensitivity D + Lambda; the
  quantised table itself is then checked (its hockey-stick divergence at every grid shift
  up to D + Lambda, tails and quantisation included) before any draw.  Release =
  Lambda (round(x / Lambda) + j): a sum of multiples of a power of two, exact in binary64.
"""

from __future__ import annotations

import bisect
import itertools
import math
import numbers
import os
import secrets
from dataclasses import dataclass

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure

from .calibration import Mechanism
from .mixture import Mixture, gaussian_mixture, multi_log_weights, quasi_mixture
from .quasi import sample_quasi

#: grid points per unit of the noise's l1 scale in the secure sampler
SNAP_POINTS_PER_SCALE = 64
#: share of delta the secure table may lose to its truncated tails
SNAP_TAIL = 1e-7
#: table masses are integers summing to 2^126: e^eps * 2^-126 stays far below delta up to eps ~ 60
#: (with 2^62, e^32 * 2^-62 = 2e-5 alone exceeded delta = 1e-6: the table check failed at eps = 32)
BITS = 126
ONE = 1 << BITS
#: the table check costs (shifts x cells) numpy operations; beyond this it is refused at once
MAX_CHECK_WORK = 400_000_000


def secure_rng() -> np.random.Generator:
    """A numpy Generator seeded with 128 bits of OS entropy (``secrets.randbits``)."""
    return np.random.Generator(np.random.PCG64(secrets.randbits(128)))


def _check_n(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 0:
        raise InputError(f"n must be a non-negative integer, got {n!r}.")
    return int(n)


def sample_multi(sigma: float, eps: float, K: int, sensitivity: float, n: int, rng: np.random.Generator) -> np.ndarray:
    k, lw = multi_log_weights(eps, K)
    p = np.exp(lw)
    p /= p.sum()
    idx = rng.choice(k.size, size=n, p=p)
    return k[idx] * sensitivity + sigma * rng.standard_normal(n)


def _lattice_weights(mech: Mechanism) -> tuple[np.ndarray, np.ndarray]:
    assert mech.K is not None and mech.spacing is not None and mech.decay is not None
    k = np.arange(-mech.K, mech.K + 1, dtype=float)
    lw = -mech.decay * mech.spacing * np.abs(k)
    p = np.exp(lw - np.logaddexp.reduce(lw))
    return k * mech.spacing, p / p.sum()


def mechanism_mixture(mech: Mechanism) -> Mixture:
    """The noise density of a mixture mechanism, at its own scale."""
    if mech.name == "gaussian":
        return gaussian_mixture(mech.sigma)
    if mech.name == "quasi":
        return quasi_mixture(mech.sigma, mech.eps, mech.sensitivity)
    if mech.name in ("multi", "optimised"):
        if mech.K is None:
            raise InputError(f"a {mech.name} mechanism needs K.")
        if mech.spacing is None:  # a Mechanism built before spacing/decay existed
            mech = Mechanism(**{**mech.__dict__, "spacing": mech.sensitivity, "decay": mech.eps / mech.sensitivity})
        mu, p = _lattice_weights(mech)
        inf = np.full(mu.shape, np.inf)
        return Mixture(float(mech.sigma), np.log(p), mu, -inf, inf, float(mech.spacing),
                       float(mech.decay * mech.spacing))
    raise InputError(f"{mech.name} is not a Gaussian mixture.")


def _staircase_survival(x: np.ndarray, eps: float, gamma: float, D: float) -> np.ndarray:
    """P(Z > x) for x >= 0 of the staircase density (piecewise constant on [k, k+gamma), [k+gamma, k+1))."""
    b = math.exp(-eps)
    a = (1.0 - b) / (2.0 * (gamma + (1.0 - gamma) * b))
    u = np.asarray(x, float) / D
    n = np.floor(u)
    r = u - n
    full = a * (gamma + (1.0 - gamma) * b) * (1.0 - b**n) / (1.0 - b)
    part = a * b**n * (np.minimum(r, gamma) + b * np.maximum(r - gamma, 0.0))
    return 0.5 - full - part


def survival(mech: Mechanism, x: np.ndarray) -> np.ndarray:
    """P(Z > x) for x >= 0 (every mechanism here is symmetric)."""
    x = np.asarray(x, float)
    if mech.name == "laplace":
        return 0.5 * np.exp(-x / mech.sigma)
    if mech.name == "truncated-laplace":
        lam, A = mech.sensitivity / mech.eps, mech.sigma
        B = 1.0 / (2.0 * lam * -math.expm1(-A / lam))
        return np.where(x < A, B * lam * (np.exp(-np.minimum(x, A) / lam) - math.exp(-A / lam)), 0.0)
    if mech.name == "staircase":
        return _staircase_survival(x, mech.eps, mech.sigma, mech.sensitivity)
    mix = mechanism_mixture(mech)
    return np.exp(mix.log_mass(x, np.full(x.shape, np.inf)))


def sample(mech: Mechanism, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. noise draws of the calibrated mechanism ``mech`` using ``rng``.

    Use :func:`secure_rng` for real releases; a seeded generator is for tests only.  For
    floating-point-safe releases use :func:`snapped_sampler`.
    """
    n = _check_n(n)
    if not isinstance(rng, np.random.Generator):
        raise InputError("rng must be a numpy.random.Generator (see secure_rng()).")
    if mech.name == "gaussian":
        return mech.sigma * rng.standard_normal(n)
    if mech.name in ("multi", "optimised"):
        if mech.K is None:
            raise InputError(f"a {mech.name} mechanism needs K.")
        if mech.name == "multi" and mech.spacing is None:
            return sample_multi(mech.sigma, mech.eps, mech.K, mech.sensitivity, n, rng)
        mu, p = _lattice_weights(mech)
        return mu[rng.choice(mu.size, size=n, p=p)] + mech.sigma * rng.standard_normal(n)
    if mech.name == "quasi":
        return sample_quasi(mech.sigma, mech.eps, mech.sensitivity, n, rng)
    if mech.name == "laplace":
        return rng.laplace(0.0, mech.sigma, n)
    if mech.name == "truncated-laplace":
        lam, A = mech.sensitivity / mech.eps, mech.sigma
        u = rng.random(n)
        mag = -lam * np.log1p(u * math.expm1(-A / lam))  # inverse CDF of |Z| on [0, A]
        return np.where(rng.random(n) < 0.5, -mag, mag)
    if mech.name == "staircase":
        b, g, D = math.exp(-mech.eps), mech.sigma, mech.sensitivity
        G = rng.geometric(1.0 - b, n) - 1.0  # P(G = i) = (1 - b) b^i
        outer = rng.random(n) >= g / (g + (1.0 - g) * b)
        U = rng.random(n)
        mag = np.where(outer, G + g + (1.0 - g) * U, G + g * U) * D
        return np.where(rng.random(n) < 0.5, -mag, mag)
    raise InputError(f"cannot sample mechanism {mech.name!r}.")


# ----- secure, snapped sampling ---------------------------------------------------------------------
@dataclass(frozen=True)
class SnappedTable:
    """round_Lambda(Z) as an exact integer distribution: P(j) = weights[j + J] / 2^126."""

    grid: float
    J: int
    weights: tuple[int, ...]
    eps: float
    delta_table: float  # max over grid shifts <= D + grid of the table's hockey-stick divergence
    l1: float  # E|Lambda j| + Lambda/2: l1 bound of the release error (query rounding included)

    def pmf(self) -> np.ndarray:
        return np.ldexp(np.array([float(v) for v in self.weights]), -BITS)

    def draw(self, n: int) -> np.ndarray:
        return draw_snapped(self, n)

    def cdf_at(self, values: np.ndarray) -> np.ndarray:
        """P(Lambda j <= v) (the exact table CDF)."""
        c = np.ldexp(np.array([float(v) for v in itertools.accumulate(self.weights)]), -BITS)
        idx = np.floor(np.asarray(values, float) / self.grid + 1e-9).astype(np.int64) + self.J
        return np.where(idx < 0, 0.0, c[np.clip(idx, 0, len(self.weights) - 1)])


def snapped_table(mech: Mechanism, grid: float, delta_target: float) -> SnappedTable:
    """Quantised grid distribution of ``mech`` (calibrated for sensitivity D + grid), checked.

    Raises :class:`InputError` at once (before any work) when the table or its check would be too
    large to build in seconds.
    """
    # the query is rounded: neighbours at distance <= D land at most D + grid apart; the mechanism
    # was calibrated for D + 2 grid (secure.secure_mechanism), so check every shift up to D + grid
    t_max = int(math.ceil((mech.sensitivity - grid) / grid))
    # tail cut: P(|Z| > (J_cut + 1/2) grid) <= SNAP_TAIL delta; the support then reaches t_max cells
    # further, so that a neighbour's release (shifted by up to t_max) stays inside it up to that tail
    scale = max(mech.l1, grid)
    J = int(math.ceil(scale / grid))
    while survival(mech, np.array([(J + 0.5) * grid]))[0] > SNAP_TAIL * delta_target / 2 and J < 10_000_000:
        J *= 2
    J += t_max
    if J > 2_000_000 or t_max * (2 * J + 1) > MAX_CHECK_WORK:
        raise InputError(f"--secure: the snapped table of {mech.name} at eps = {mech.eps:g} would need "
                         f"{2 * J + 1} grid cells checked at {t_max} shifts; too large to build.",
                         "use -m laplace or -m staircase (exact integer samplers, any eps), or drop --secure")
    j = np.arange(0, J + 1, dtype=float)
    S = survival(mech, (j + 0.5) * grid)
    p = np.empty(J + 1)
    p[0] = 1.0 - 2.0 * S[0]
    p[1:] = np.maximum(S[:-1] - S[1:], 0.0)
    side = [int(v) for v in np.rint(np.ldexp(p[1:], BITS))]  # exact float -> int
    while side and side[-1] == 0:
        side.pop()
    J = len(side)
    centre = ONE - 2 * sum(side)
    if centre < 0:
        raise RunFailure("secure table quantisation failed (negative centre mass).")
    weights = side[::-1] + [centre] + side
    w = np.ldexp(np.array([float(v) for v in weights]), -BITS)
    e = math.exp(mech.eps)
    H = 0.0
    for t in range(1, t_max + 1):
        shifted = np.concatenate([w[t:], np.zeros(t)])  # P(j + t) (a mass leaving the table counts as 0)
        # plus the mass that the shifted table has where ours has none (its lowest t cells)
        H = max(H, float(np.sum(np.maximum(shifted - e * w, 0.0)) + np.sum(w[:t])))
    js = np.arange(-J, J + 1)
    l1 = float(np.sum(w * np.abs(js)) * grid + 0.5 * grid)
    return SnappedTable(grid, J, tuple(weights), mech.eps, H, l1)


def snap_grid(scale: float) -> float:
    """Lambda = the power of two at or below scale / SNAP_POINTS_PER_SCALE."""
    return 2.0 ** math.floor(math.log2(scale / SNAP_POINTS_PER_SCALE))


def draw_snapped(table, n: int) -> np.ndarray:
    """n exact draws of Lambda j from 126-bit integers of os.urandom (no floats on the random path).

    ``table`` is a :class:`SnappedTable` or an :class:`~.exact.ExactSampler` (which draws itself).
    """
    n = _check_n(n)
    if not isinstance(table, SnappedTable):
        return table.draw(n)
    cum = list(itertools.accumulate(table.weights))
    raw = os.urandom(16 * n)
    idx = [bisect.bisect_right(cum, int.from_bytes(raw[16 * i:16 * i + 16], "little") >> (128 - BITS))
           for i in range(n)]
    return (np.array(idx, dtype=np.int64) - table.J) * table.grid


def snap_query(values: np.ndarray, grid: float) -> np.ndarray:
    return np.rint(np.asarray(values, float) / grid) * grid
