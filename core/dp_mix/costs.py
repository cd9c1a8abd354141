"""Closed-form noise costs E|Z| (l1) and E Z^2 (l2) of the paper's mechanisms.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078).

* multi-Gaussian: a mixture of normals N(k D, sigma^2), so E|Z| is the weighted mean of folded
  normal means  sigma sqrt(2/pi) exp(-mu^2 / 2 sigma^2) + mu (1 - 2 Phi(-mu/sigma)), and
  E Z^2 = sigma^2 + sum_k w_k (k D)^2;
* quasi-Gaussian: see :func:`mlx26.core.dp_mix.quasi.quasi_costs`;
* Gaussian: sigma sqrt(2/pi), sigma^2.
"""

from __future__ import annotations

import math

import numpy as np
from mlx26.core.common.errors import InputError
from scipy.special import ndtr

from .gaussian import gaussian_costs
from .mixture import multi_log_weights
from .quasi import quasi_costs

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def multi_costs(sigma: float, eps: float, K: int, sensitivity: float = 1.0) -> tuple[float, float]:
    """(E|Z|, E Z^2) of sum_{|k|<=K} w_k N(k D, sigma^2), w_k ~ e^{-eps |k|}."""
    k, lw = multi_log_weights(eps, K)
    w = np.exp(lw)
    mu = np.abs(k) * sensitivity
    folded = sigma * SQRT_2_OVER_PI * np.exp(-0.5 * (mu / sigma) ** 2) + mu * (1.0 - 2.0 * ndtr(-mu / sigma))
    return float(np.sum(w * folded)), float(sigma**2 + np.sum(w * mu**2))


def mechanism_costs(name: str, sigma: float, eps: float, sensitivity: float = 1.0, K: int | None = None) -> tuple[float, float]:
    """(l1, l2) = (E|Z|, E Z^2) for ``name`` in {multi, quasi, gaussian}."""
    if name == "multi":
        if K is None:
            raise InputError("multi-Gaussian costs need K.")
        return multi_costs(sigma, eps, K, sensitivity)
    if name == "quasi":
        return quasi_costs(sigma, eps, sensitivity)
    if name == "gaussian":
        return gaussian_costs(sigma)
    raise InputError(f"unknown mechanism {name!r}; expected one of multi, quasi, gaussian.")
