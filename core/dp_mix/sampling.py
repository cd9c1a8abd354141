"""Exact samplers for the calibrated noise, and an OS-entropy random generator.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078).

* multi-Gaussian: Z = D L + sigma N, L a discrete Laplace truncated to [-K, K]
  (P(L = k) ~ e^{-eps |k|}), N ~ N(0, 1);
* quasi-Gaussian: see :func:`mlx26.core.dp_mix.quasi.sample_quasi`;
* Gaussian: sigma N.
"""

from __future__ import annotations

import numbers
import secrets

import numpy as np
from mlx26.core.common.errors import InputError

from .calibration import Mechanism
from .mixture import multi_log_weights
from .quasi import sample_quasi


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


def sample(mech: Mechanism, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. noise draws of the calibrated mechanism ``mech`` using ``rng``.

    Use :func:`secure_rng` for real releases; a seeded generator is for tests only.
    """
    n = _check_n(n)
    if not isinstance(rng, np.random.Generator):
        raise InputError("rng must be a numpy.random.Generator (see secure_rng()).")
    if mech.name == "gaussian":
        return mech.sigma * rng.standard_normal(n)
    if mech.name == "multi":
        if mech.K is None:
            raise InputError("a multi-Gaussian mechanism needs K.")
        return sample_multi(mech.sigma, mech.eps, mech.K, mech.sensitivity, n, rng)
    if mech.name == "quasi":
        return sample_quasi(mech.sigma, mech.eps, mech.sensitivity, n, rng)
    raise InputError(f"cannot sample mechanism {mech.name!r}; expected multi, quasi or gaussian.")
