"""Reference mechanisms for the "gap closed" comparison: Laplace, truncated Laplace, staircase.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078),
whose figures report how much of the gap between the analytic Gaussian and the (pure-DP
optimal) staircase mechanism a mixture closes: (AG - mech) / (AG - staircase).

* Laplace: b = D/eps, E|Z| = b, E Z^2 = 2 b^2 (pure eps-DP).
* Truncated Laplace (Geng, Ding, Guo & Kumar, AISTATS 2020), optimal-type for (eps, delta):
  density B e^{-|x|/lambda} on [-A, A], lambda = D/eps, A = lambda ln(1 + (e^eps - 1)/(2 delta)),
  B = 1/(2 lambda (1 - e^{-A/lambda})); its delta at shift D is exactly delta.
* Staircase (Geng & Viswanath, "The optimal noise-adding mechanism in differential privacy",
  IEEE Trans. IT 2016): with b = e^{-eps}, density a(gamma) b^k on [k, k + gamma) D and
  a(gamma) b^{k+1} on [k + gamma, k + 1) D (k >= 0, symmetric), a = (1 - b)/(2 D (gamma + (1 - gamma) b)).
  l1-optimal gamma = sqrt(b)/(1 + sqrt(b)) = 1/(1 + e^{eps/2});
  l2-optimal gamma = -b/(1 - b) + (b - 2b^2 + 2b^4 - b^5)^{1/3} / (2^{1/3} (1 - b)^2).
  Costs are the closed-form geometric sums below (checked against quadrature in the tests).
"""

from __future__ import annotations

import math


def laplace_costs(eps: float, sensitivity: float = 1.0) -> tuple[float, float]:
    b = sensitivity / eps
    return b, 2.0 * b * b


def truncated_laplace_params(eps: float, delta: float, sensitivity: float = 1.0) -> tuple[float, float]:
    """(lambda, A) of the truncated Laplace mechanism calibrated to (eps, delta)."""
    lam = sensitivity / eps
    log_em1 = eps + math.log1p(-math.exp(-eps))  # log(e^eps - 1)
    a = math.log1p(math.exp(log_em1 - math.log(2.0 * delta))) if log_em1 - math.log(2 * delta) < 700 else (
        log_em1 - math.log(2.0 * delta)
    )
    return lam, lam * a


def truncated_laplace_costs(eps: float, delta: float, sensitivity: float = 1.0) -> tuple[float, float]:
    lam, A = truncated_laplace_params(eps, delta, sensitivity)
    a = A / lam
    ea = math.exp(-a)
    norm = -math.expm1(-a)  # 1 - e^{-a}
    l1 = lam * (1.0 - ea * (1.0 + a)) / norm
    l2 = lam * lam * (2.0 - ea * (a * a + 2.0 * a + 2.0)) / norm
    return l1, l2


def staircase_gamma_l1(eps: float) -> float:
    return 1.0 / (1.0 + math.exp(0.5 * eps)) if eps < 1400 else 0.0


def staircase_gamma_l2(eps: float) -> float:
    b = math.exp(-eps)
    return -b / (1.0 - b) + (b - 2 * b**2 + 2 * b**4 - b**5) ** (1.0 / 3.0) / (2.0 ** (1.0 / 3.0) * (1.0 - b) ** 2)


def staircase_costs(eps: float, gamma: float, sensitivity: float = 1.0) -> tuple[float, float]:
    """(E|Z|, E Z^2) of the staircase density with parameter gamma (closed-form sums)."""
    b = math.exp(-eps)
    g = gamma
    s0 = 1.0 / (1.0 - b)
    s1 = b / (1.0 - b) ** 2
    s2 = b * (1.0 + b) / (1.0 - b) ** 3
    a2 = (1.0 - b) / (g + (1.0 - g) * b)  # = 2 a(gamma) for D = 1
    m1 = g * s1 + 0.5 * g * g * s0 + b * ((1.0 - g) * s1 + 0.5 * (1.0 - g * g) * s0)
    m2 = g * s2 + g * g * s1 + g**3 / 3.0 * s0 + b * ((1.0 - g) * s2 + (1.0 - g * g) * s1 + (1.0 - g**3) / 3.0 * s0)
    return a2 * m1 * sensitivity, a2 * m2 * sensitivity**2


def staircase_optimal_costs(eps: float, sensitivity: float = 1.0) -> tuple[float, float, float, float]:
    """(l1 at the l1-optimal gamma, l2 at the l2-optimal gamma, gamma_l1, gamma_l2)."""
    g1, g2 = staircase_gamma_l1(eps), staircase_gamma_l2(eps)
    return staircase_costs(eps, g1, sensitivity)[0], staircase_costs(eps, g2, sensitivity)[1], g1, g2
