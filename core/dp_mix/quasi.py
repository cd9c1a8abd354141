"""Quasi-Gaussian mechanism: density, closed-form moments, sampler and closed-form calibration.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078).

Noise density (D = sensitivity, phi_s = N(0, sigma^2) density, Z = e^eps + 2 Phi(D/sigma)):
    q(x) = [e^eps phi_s(x) + phi_s(|x| - D)] / Z.
phi_s(|x| - D) is N(D, sigma^2) restricted to [0, inf) plus its mirror image, total mass
2 Phi(D/sigma).

Calibration (our derivation, checked against the generic certified checker):

* Tail condition (shift s = D).  For x >= -D the integrand q(x + D) - e^eps q(x) is <= 0;
  for x < -D it equals [phi_s(x + 2D) - e^{2 eps} phi_s(x)] / Z, positive iff
  x < -D - eps sigma^2 / D.  Hence exactly
      H_D(sigma) = [Phi(D/sigma - eps sigma/D) - e^{2 eps} Phi(-D/sigma - eps sigma/D)] / Z,
  i.e. the analytic-Gaussian profile for shift 2D at privacy level 2 eps, divided by Z.
  sigma_tail solves H_D(sigma) = delta (no constraint if 1/(e^eps + 1) <= delta).
* Density-ratio condition.  Inside [0, D] the density must not vary by more than e^eps:
  max_{[0,D]} q / min_{[0,D]} q <= e^eps, otherwise some shift s <= D moves a peak of q onto
  a trough with likelihood ratio above e^eps.  sigma_ratio solves max/min = e^eps.
* sigma = max(sigma_tail, sigma_ratio).

All e^{eps}, e^{2 eps} factors are carried in the log domain (works up to eps ~ 700).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import log_ndtr, ndtr, ndtri

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _log_z(sigma: float, eps: float, sens: float) -> float:
    return float(np.logaddexp(eps, math.log(2.0) + float(log_ndtr(sens / sigma))))


def quasi_pdf(x: np.ndarray, sigma: float, eps: float, sensitivity: float = 1.0) -> np.ndarray:
    """q(x) evaluated without overflow."""
    x = np.asarray(x, float)
    lz = _log_z(sigma, eps, sensitivity)
    c = -math.log(sigma) - 0.5 * math.log(2.0 * math.pi) - lz
    a = eps - 0.5 * (x / sigma) ** 2
    b = -0.5 * ((np.abs(x) - sensitivity) / sigma) ** 2
    return np.exp(np.logaddexp(a, b) + c)


def log_quasi_tail_delta(sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """log H_D(sigma): exact hockey-stick divergence of the quasi-Gaussian at shift D."""
    r = sensitivity / sigma
    a = r - eps / r
    b = -r - eps / r
    la = float(log_ndtr(a))
    lb = 2.0 * eps + float(log_ndtr(b))
    d = lb - la
    if d >= 0.0:
        return -math.inf
    return la + math.log(-math.expm1(d)) - _log_z(sigma, eps, sensitivity)


def quasi_log_ratio(sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """log(max_{[0,D]} q / min_{[0,D]} q)."""
    D = sensitivity

    def lq(x: float) -> float:
        a = eps - 0.5 * (x / sigma) ** 2
        b = -0.5 * ((abs(x) - D) / sigma) ** 2
        return float(np.logaddexp(a, b))

    xs = np.linspace(0.0, D, 129)
    vals = np.logaddexp(eps - 0.5 * (xs / sigma) ** 2, -0.5 * ((xs - D) / sigma) ** 2)
    i_max, i_min = int(np.argmax(vals)), int(np.argmin(vals))
    h = xs[1] - xs[0]

    def polish(i: int, sign: float) -> float:
        lo, hi = max(0.0, xs[i] - h), min(D, xs[i] + h)
        res = minimize_scalar(lambda t: sign * lq(t), bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-12 * D})
        return min(sign * float(res.fun), sign * float(vals[i])) * sign

    vmax = max(polish(i_max, -1.0), float(vals[i_max]))
    vmin = min(polish(i_min, 1.0), float(vals[i_min]))
    return vmax - vmin


def _root_log_sigma(f, lo: float, hi: float) -> float:
    """Smallest sigma with f(sigma) <= 0 for f decreasing in sigma (bracket expansion + brentq)."""
    while f(hi) > 0:
        lo, hi = hi, hi * 2.0
    while f(lo) <= 0:
        hi, lo = lo, lo / 2.0
    u = brentq(lambda u: f(math.exp(u)), math.log(lo), math.log(hi), xtol=1e-14, rtol=1e-15)
    s = math.exp(u)
    while f(s) > 0:
        s *= 1.0 + 1e-13
    return s


def quasi_sigma_tail(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest sigma with H_D(sigma) <= delta (0 if the tail is never binding)."""
    if -math.log1p(math.exp(-eps)) - eps <= math.log(delta):  # 1/(e^eps + 1) <= delta
        return 0.0
    ld = math.log(delta)
    s0 = sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / eps
    return _root_log_sigma(lambda s: log_quasi_tail_delta(s, eps, sensitivity) - ld, 0.5 * s0, s0)


def quasi_sigma_ratio(eps: float, sensitivity: float = 1.0) -> float:
    """Smallest sigma with max/min of q on [0, D] <= e^eps."""
    s0 = sensitivity / math.sqrt(2.0 * eps)
    return _root_log_sigma(lambda s: quasi_log_ratio(s, eps, sensitivity) - eps, 0.5 * s0, s0)


def calibrate_quasi_closed_form(eps: float, delta: float, sensitivity: float = 1.0) -> tuple[float, float, float]:
    """(sigma, sigma_tail, sigma_ratio) with sigma = max(sigma_tail, sigma_ratio)."""
    st = quasi_sigma_tail(eps, delta, sensitivity)
    sr = quasi_sigma_ratio(eps, sensitivity)
    return max(st, sr), st, sr


def quasi_costs(sigma: float, eps: float, sensitivity: float = 1.0) -> tuple[float, float]:
    """Closed-form (E|Z|, E Z^2).

    E|Z| = [e^eps sigma sqrt(2/pi) + 2 D Phi(D/sigma) + 2 sigma phi(D/sigma)] / Z,
    E Z^2 = [e^eps sigma^2 + 2 (sigma^2 + D^2) Phi(D/sigma) + 2 sigma D phi(D/sigma)] / Z,
    evaluated as weights e^eps/Z and 1/Z in the log domain.
    """
    D = sensitivity
    lz = _log_z(sigma, eps, D)
    wc = math.exp(eps - lz)  # central weight
    wt = math.exp(-lz)  # coefficient of the shifted halves
    r = D / sigma
    Phi = float(ndtr(r))
    phi = math.exp(-0.5 * r * r) / math.sqrt(2.0 * math.pi)
    l1 = wc * sigma * SQRT_2_OVER_PI + wt * (2.0 * D * Phi + 2.0 * sigma * phi)
    l2 = wc * sigma**2 + wt * (2.0 * (sigma**2 + D**2) * Phi + 2.0 * sigma * D * phi)
    return l1, l2


def quasi_tail_probability(sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """Probability 2 Phi(D/sigma)/Z of the shifted (non-central) component."""
    return math.exp(math.log(2.0) + float(log_ndtr(sensitivity / sigma)) - _log_z(sigma, eps, sensitivity))


def sample_quasi(sigma: float, eps: float, sensitivity: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Exact sampler: N(0, sigma^2) w.p. e^eps/Z, else +-(D + sigma T) with T ~ N(0,1) | T >= -D/sigma.

    T = -Phi^{-1}(U Phi(D/sigma)) with U ~ U(0,1) (inverse CDF of the truncated normal).
    """
    p_tail = quasi_tail_probability(sigma, eps, sensitivity)
    tail = rng.random(n) < p_tail
    out = sigma * rng.standard_normal(n)
    m = int(np.count_nonzero(tail))
    if m:
        u = rng.random(m)
        # U in (0,1); 1 - U avoids ndtri(0) = -inf
        t = -ndtri((1.0 - u) * ndtr(sensitivity / sigma))
        sign = np.where(rng.random(m) < 0.5, -1.0, 1.0)
        out[tail] = sign * (sensitivity + sigma * t)
    return out
