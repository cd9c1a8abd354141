"""Reach-avoid probability certificates (RAPC, Pan et al., ICML 2026 — reconstruction).

Any B with B ≤ B_γ B (pointwise) is a certificate: by monotonicity B ≤ B_γ^n B → V_γ ≤ P(RA),
so every state with B(x) ≥ p satisfies the reach-avoid constraint. :func:`make_certificate`
turns any value estimate (e.g. a learned critic) into a certificate: it iterates
B ← min(B, B_γ B) (monotonically decreasing) and then subtracts δ = ε/(1 − γ), where ε is the
remaining violation, which makes the condition hold exactly (B_γ(B − δ) ≥ B_γ B − γδ).
:func:`monte_carlo_check` rolls the policy out from certified states and reports Wilson
intervals for P(RA).
"""

from __future__ import annotations

import math

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.rl.reach_avoid.operator import bellman


def violation(B: np.ndarray, P: np.ndarray, r: np.ndarray, s: np.ndarray, gamma: float) -> float:
    """max_x (B(x) − (B_γ B)(x)); ≤ 0 means B is a certificate."""
    return float(np.max(B - bellman(B, P, r, s, gamma)))


def make_certificate(V: np.ndarray, P: np.ndarray, r: np.ndarray, s: np.ndarray, gamma: float,
                     iters: int = 200) -> np.ndarray:
    """A certificate B ≤ V with B ≤ B_γ B (policy matrix ``P [n, n]``), values clipped to [0, 1]."""
    if not 0 < gamma < 1:
        raise InputError(f"certificates need gamma in (0, 1), got {gamma}")
    B = np.clip(np.asarray(V, dtype=np.float64), 0.0, 1.0)
    for _ in range(iters):
        B = np.minimum(B, bellman(B, P, r, s, gamma))
    eps = max(0.0, violation(B, P, r, s, gamma))
    if eps > 0:
        B = np.maximum(B - eps / (1 - gamma) * (1 + 1e-9), 0.0)
    if violation(B, P, r, s, gamma) > 1e-12:  # cannot happen (see the module docstring)
        raise RunFailure("certificate construction failed its own check")
    return B


def certified(B: np.ndarray, p: float) -> np.ndarray:
    """Indices of the states certified at level p."""
    if not 0 < p <= 1:
        raise InputError(f"p must be in (0, 1], got {p}")
    return np.flatnonzero(B >= p)


def wilson(successes: int | np.ndarray, n: int, z: float = 1.96) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (lower, upper) for a binomial proportion."""
    k = np.asarray(successes, dtype=np.float64)
    phat = k / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * np.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)  # rounding can leave [0, 1]


def monte_carlo_check(model, policy: np.ndarray, states: np.ndarray, p: float, n_mc: int = 200,
                      horizon: int = 2000, seed: int = 0) -> dict:
    """Roll ``policy`` (deterministic ``[n]``) out ``n_mc`` times from each state on a
    :class:`~mlx26.core.rl.reach_avoid.grid.GridModel`; Wilson 95% intervals of P(RA).

    ``sound_upper`` = share of states whose interval does not refute P(RA) ≥ p (upper ≥ p);
    ``sound_lower`` = share whose Wilson lower bound is ≥ p (the stricter reading).
    """
    rng = np.random.default_rng(seed)
    states = np.asarray(states, dtype=int)
    cells = np.repeat(states, n_mc)
    done = model.absorbing[cells].copy()
    for _ in range(horizon):
        live = np.flatnonzero(~done)
        if not len(live):
            break
        cells[live] = model.sample_next(cells[live], policy[cells[live]], rng)
        done[live] = model.absorbing[cells[live]]
    hits = model.goal[cells].reshape(len(states), n_mc).sum(axis=1)
    lo, hi = wilson(hits, n_mc)
    n = max(1, len(states))
    return {"states": states.tolist(), "p_hat": (hits / n_mc).tolist(), "wilson_low": lo.tolist(),
            "wilson_high": hi.tolist(), "sound_upper": float((hi >= p).sum() / n) if len(states) else math.nan,
            "sound_lower": float((lo >= p).sum() / n) if len(states) else math.nan, "n_mc": n_mc}
