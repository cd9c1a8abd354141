"""Analytic Gaussian mechanism (Balle & Wang, ICML 2018), the baseline of the paper.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078),
which compares its mixtures against this baseline.

For Z ~ N(0, sigma^2) and sensitivity D the exact privacy profile is
    delta(sigma) = Phi(D/(2 sigma) - eps sigma/D) - e^eps Phi(-D/(2 sigma) - eps sigma/D),
and the worst shift is always s = D (the profile is increasing in the shift).  We evaluate it
in the log domain (``scipy.special.log_ndtr``) so that e^eps * Phi(.) never overflows (tested
up to eps = 700), and calibrate sigma by a bracketed root search on log sigma.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def log_gaussian_delta(sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """log of the exact delta(eps) of the Gaussian mechanism N(0, sigma^2) at shift ``sensitivity``."""
    r = sensitivity / sigma
    a = 0.5 * r - eps / r
    b = -0.5 * r - eps / r
    la = float(log_ndtr(a))
    lb = eps + float(log_ndtr(b))
    d = lb - la
    if d >= 0.0:  # cannot happen in exact arithmetic; rounding at delta ~ 0
        return -math.inf
    return la + math.log(-math.expm1(d))


def gaussian_delta(sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """Exact delta(eps) of the Gaussian mechanism with standard deviation ``sigma``."""
    return math.exp(log_gaussian_delta(sigma, eps, sensitivity))


def calibrate_gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest sigma (to ~1e-13 relative) with delta(sigma) <= delta; returns the safe end."""
    target = math.log(delta)

    def f(u: float) -> float:
        val = log_gaussian_delta(math.exp(u), eps, 1.0)
        return max(val, -1e300) - target

    # classical bound sqrt(2 ln(1.25/delta))/eps is valid for eps<1; start there and bracket.
    u0 = math.log(math.sqrt(2.0 * math.log(1.25 / delta)) / eps)
    lo = hi = u0
    step = math.log(2.0)
    while f(hi) > 0:
        lo, hi = hi, hi + step
    if lo == hi:
        while f(lo) <= 0:
            hi, lo = lo, lo - step
    u = brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
    sigma = math.exp(u)
    # return the safe end: nudge up until the exact profile is within budget
    while log_gaussian_delta(sigma, eps, 1.0) > target:
        sigma *= 1.0 + 1e-14
    return sigma * sensitivity


def gaussian_costs(sigma: float) -> tuple[float, float]:
    """(E|Z|, E Z^2) for Z ~ N(0, sigma^2)."""
    return sigma * SQRT_2_OVER_PI, sigma * sigma
