"""Exact integer samplers for the pure-DP mechanisms: discrete Laplace and discrete staircase.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078); the
paper has no secure sampler.  The Bernoulli(exp(-gamma)) and discrete-Laplace algorithms are
those of Canonne, Kamath & Steinke ("The discrete Gaussian for differential privacy", NeurIPS
2020, Algorithms 1 and 2), in exact rational arithmetic; the discrete staircase and the rational
step below are ours.

Why: the secure release rounds the query to a grid Lambda = 2^k, so neighbouring inputs differ
by at most S = floor(D / Lambda) + 1 grid units, and an integer noise Y that is eps-DP for integer
shifts |t| <= S makes Lambda (round(x / Lambda) + Y) eps-DP (delta = 0) with no table and no
check.  Every random decision is an integer from ``secrets`` (os.urandom); eps is the exact
rational value of its binary64.  The expected number of loop iterations per draw is bounded
uniformly in eps (tested up to eps = 32 by counting): the old table sampler needed about
(D / Lambda) x (table size) work, i.e. 10^11 operations for the staircase at eps = 16.

* discrete Laplace: P(Y = y) ~ exp(-eps |y| / S).
* discrete staircase: for m = kS + u >= 0 (0 <= u < S), g(m) = b^k (1 if u < r else beta), with
  b = e^{-eps}, P(Y = y) ~ g(|y|).  With beta = b this is Geng & Viswanath's staircase on the
  integers; we take beta = a rational upper bound of e^{-eps} (1 / a Taylor lower bound of
  e^eps; relative excess < 1e-15), which keeps eps-DP (g(m + t) >= g(m + S) = b g(m) for
  0 < t <= S, and every value on (-S, S) lies in [beta, 1]) and makes the inner/outer choice an
  exact rational Bernoulli: no rejection whose acceptance would collapse like r / S ~ e^{-eps/2}.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from mlx26.core.common.errors import InputError


class Counter:
    """Counts loop iterations (uniform integer draws) of the samplers: a bound, not a timeout."""

    def __init__(self) -> None:
        self.draws = 0

    def below(self, n: int) -> int:
        self.draws += 1
        return secrets.randbelow(n)


def bernoulli(num: int, den: int, c: Counter) -> bool:
    """Exact Bernoulli(num / den)."""
    return c.below(den) < num


def bernoulli_exp(gamma: Fraction, c: Counter) -> bool:
    """Exact Bernoulli(exp(-gamma)) for rational gamma >= 0 (Canonne, Kamath & Steinke, Alg. 1)."""
    while gamma > 1:
        if not bernoulli_exp(Fraction(1), c):
            return False
        gamma -= 1
    k = 1
    while bernoulli(gamma.numerator, gamma.denominator * k, c):
        k += 1
    return k % 2 == 1


def geometric_exp(rate: Fraction, c: Counter) -> int:
    """Exact K >= 0 with P(K = k) = (1 - e^{-rate}) e^{-rate k} (CKS Alg. 2 without the sign)."""
    s, t = rate.numerator, rate.denominator
    while True:
        u = c.below(t)
        if not bernoulli_exp(Fraction(u, t), c):
            continue
        v = 0
        while bernoulli_exp(Fraction(1), c):
            v += 1
        return (u + t * v) // s


def discrete_laplace(rate: Fraction, c: Counter) -> int:
    """Exact Y with P(Y = y) ~ exp(-rate |y|) on the integers."""
    while True:
        y = geometric_exp(rate, c)
        negative = c.below(2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def exp_lower(x: Fraction) -> Fraction:
    """A rational lower bound of e^x (x >= 0): a Taylor sum (all terms positive), rel. error < 1e-16."""
    if x < 0:
        raise InputError("exp_lower needs x >= 0.")
    total, term, n = Fraction(1), Fraction(1), 0
    while True:
        n += 1
        term = term * x / n
        total += term
        # remainder after term n is < term * x / (n + 1 - x) once n + 1 > 2x
        if n + 1 > 2 * x and term * x / (n + 1 - x) < total * Fraction(1, 10**17):
            return total


def _round_up(q: Fraction, bits: int = 80) -> Fraction:
    """A rational >= q with a denominator 2^k: keeps the integers of the Bernoulli draws small."""
    if q <= 0:
        return q
    k = bits - math.floor(math.log2(q))
    return Fraction(math.ceil(q * 2**k), 2**k)


@dataclass
class ExactSampler:
    """Integer noise Y, eps-DP for integer shifts |t| <= S; release = grid (round(x / grid) + Y)."""

    kind: str  # "discrete-laplace" | "discrete-staircase"
    grid: float
    S: int
    eps: float
    r: int = 0  # staircase: length of the inner step (1 <= r <= S)
    beta: Fraction = field(default_factory=lambda: Fraction(0))  # staircase: rational step >= e^{-eps}
    iterations: int = 0  # uniform integer draws used so far (see Counter)
    delta_table: float = 0.0  # pure eps-DP: no delta is spent anywhere

    def __post_init__(self) -> None:
        if self.kind not in ("discrete-laplace", "discrete-staircase"):
            raise InputError(f"unknown exact sampler {self.kind!r}.")
        self._rate = Fraction(self.eps)  # the exact rational value of the float
        if self.kind == "discrete-staircase" and self.beta == 0:
            self.beta = _round_up(1 / exp_lower(self._rate))

    # --- sampling -------------------------------------------------------------------------------
    def draw_int(self, n: int) -> list[int]:
        c = Counter()
        out = [self._one(c) for _ in range(int(n))]
        self.iterations += c.draws
        return out

    def draw(self, n: int) -> np.ndarray:
        """n draws of grid * Y (floats, exact multiples of the grid)."""
        return np.array([float(y) for y in self.draw_int(n)]) * self.grid

    def _one(self, c: Counter) -> int:
        if self.kind == "discrete-laplace":
            return discrete_laplace(self._rate / self.S, c)
        num, den = self.beta.numerator, self.beta.denominator
        inner_w, outer_w = self.r * den, (self.S - self.r) * num  # inner : outer mass of one period
        while True:
            k = geometric_exp(self._rate, c)
            if bernoulli(inner_w, inner_w + outer_w, c):
                m = k * self.S + c.below(self.r)
            else:
                m = k * self.S + self.r + c.below(self.S - self.r)
            negative = c.below(2) == 1
            if negative and m == 0:
                continue
            return -m if negative else m

    # --- the law (floats; for costs and tests) --------------------------------------------------
    def pmf_abs(self, m: np.ndarray) -> np.ndarray:
        """P(|Y| = m) for integers m >= 0."""
        m = np.asarray(m, dtype=np.int64)
        b = math.exp(-self.eps)
        if self.kind == "discrete-laplace":
            q = math.exp(-self.eps / self.S)
            p0 = (1 - q) / (1 + q)
            return np.where(m == 0, p0, 2 * p0 * q ** m.astype(float))
        beta = float(self.beta)
        W = self.r + (self.S - self.r) * beta
        Z = 2 * W / (1 - b) - 1.0
        k, u = m // self.S, m % self.S
        g = b ** k.astype(float) * np.where(u < self.r, 1.0, beta)
        return np.where(m == 0, 1.0, 2.0) * g / Z

    def cdf_at(self, values: np.ndarray) -> np.ndarray:
        """P(grid Y <= v) for values on (or off) the grid, by summing the PMF (moderate S only)."""
        y = np.floor(np.asarray(values, float) / self.grid + 1e-9).astype(np.int64)
        top = int(np.max(np.abs(y))) + 1
        if top > 50_000_000:
            raise InputError(f"cdf_at sums the PMF up to |y| = {top}; too far (at most 5e7 grid points).")
        pa = self.pmf_abs(np.arange(0, top + 1))
        # P(Y > m) for m >= 0 (P(Y = m) = P(Y = -m) = pa[m] / 2 for m > 0)
        ptail = (1.0 - pa[0]) / 2 - np.cumsum(np.concatenate([[0.0], pa[1:] / 2]))
        return np.where(y >= 0, 1.0 - ptail[np.clip(y, 0, top)], ptail[np.clip(-y - 1, 0, top)])

    @property
    def l1(self) -> float:
        """E|grid Y| + grid / 2: l1 bound of the release error (query rounding included)."""
        b = math.exp(-self.eps)
        if self.kind == "discrete-laplace":
            q = math.exp(-self.eps / self.S)
            mean_abs = 2 * q / ((1 - q) * (1 + q))
        else:
            beta, S, r = float(self.beta), self.S, self.r
            W = r + (S - r) * beta
            M0 = r * (r - 1) / 2 + beta * (S * (S - 1) / 2 - r * (r - 1) / 2)
            Z = 2 * W / (1 - b) - 1.0
            mean_abs = 2 * (S * W * b / (1 - b) ** 2 + M0 / (1 - b)) / Z
        return float(mean_abs * self.grid + 0.5 * self.grid)

    @property
    def J(self) -> int:  # for the shape of SnappedTable's interface (the support is unbounded)
        return -1


def integer_sensitivity(sensitivity: float, grid: float) -> int:
    """Largest |round(a / grid) - round(b / grid)| for |a - b| <= sensitivity."""
    return int(math.floor(sensitivity / grid)) + 1


def exact_sampler(name: str, eps: float, sensitivity: float, grid: float) -> ExactSampler:
    """The exact integer sampler for a pure-DP mechanism (laplace or staircase) on ``grid``."""
    S = integer_sensitivity(sensitivity, grid)
    if name == "laplace":
        return ExactSampler("discrete-laplace", grid, S, float(eps))
    if name == "staircase":
        gamma = 1.0 / (1.0 + math.exp(min(eps / 2.0, 700.0)))  # Geng & Viswanath's l1-optimal step
        r = min(S, max(1, round(gamma * S)))
        return ExactSampler("discrete-staircase", grid, S, float(eps), r=r)
    raise InputError(f"no exact integer sampler for {name!r} (laplace and staircase have one).")
