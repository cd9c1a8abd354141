"""The discounted reach-avoid Bellman operator (Hsu et al. 2021, as used by RAPC, Pan et al.,
ICML 2026 — reconstruction; the paper's code is not public).

With r(x) = 1[x ∈ G] and s(x) = 1[x ∉ F]:

    (B_γ V)(x) = max(r(x), min(s(x), γ E[V(x')]))

B_γ is monotone and a γ-contraction in the sup norm; its fixed point is V_γ(x) = E[γ^τ 1_RA]
(τ the hitting time of G before F), so V_γ ≤ P(RA) and V_γ → P(RA) as γ → 1. Tabular forms
take ``P`` as a policy's transition matrix ``[n, n]`` or a model ``[n, A, n]`` (then the
inner expectation is maximised over actions: the optimal operator).
"""

from __future__ import annotations

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure


def _expect(P: np.ndarray, V: np.ndarray) -> np.ndarray:
    if P.ndim == 2:
        return P @ V
    return (P @ V).max(axis=1)  # [n, A, n] @ [n] → [n, A] → best action


def bellman(V: np.ndarray, P: np.ndarray, r: np.ndarray, s: np.ndarray, gamma: float) -> np.ndarray:
    """One application of B_γ (policy operator for ``P [n, n]``, optimal for ``P [n, A, n]``)."""
    if not 0 < gamma <= 1:
        raise InputError(f"gamma must be in (0, 1], got {gamma}")
    return np.maximum(r, np.minimum(s, gamma * _expect(P, np.asarray(V, dtype=np.float64))))


def fixed_point(P: np.ndarray, r: np.ndarray, s: np.ndarray, gamma: float, *, tol: float = 1e-12,
                max_iter: int = 1_000_000, V0: np.ndarray | None = None) -> np.ndarray:
    """Iterate B_γ from 0 (or ``V0``) to a sup-norm change below ``tol``.

    From 0 the iterates increase monotonically to the least fixed point; for γ = 1 this is the
    maximal (or the policy's) reach-avoid probability.
    """
    V = np.zeros(len(r)) if V0 is None else np.asarray(V0, dtype=np.float64).copy()
    for _ in range(max_iter):
        new = bellman(V, P, r, s, gamma)
        if np.max(np.abs(new - V)) < tol:
            return new
        V = new
    raise RunFailure(f"reach-avoid value iteration did not converge in {max_iter} iterations")


def greedy(P: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Deterministic policy ``[n]`` maximising E[V(x')] (ties → the lowest action index)."""
    return np.argmax(P @ V, axis=1)


def ra_gae(r: np.ndarray, s: np.ndarray, v_next: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
           terminal_value: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """Reach-avoid GAE targets over a rollout ``[T, E]`` (time first):

        y_t = max(r_t, min(s_t, γ[(1 − λ) V(x_{t+1}) + λ y_{t+1}]))

    ``r_t``/``s_t`` belong to x_t; ``v_next[t]`` = V(x_{t+1}). At a termination the
    continuation is the terminal state's exact value ``terminal_value[t]`` (1 in G, 0 in F); at
    a truncation it is V(final observation) (``v_next[t]``, no λ-mixing with the next episode);
    the rollout's last step bootstraps with y_T = V(x_T).
    """
    y = np.zeros(np.shape(v_next), dtype=np.float64)
    nxt = np.asarray(v_next[-1], dtype=np.float64)
    for t in reversed(range(len(r))):
        cont = (1 - lam) * v_next[t] + lam * nxt
        cont = np.where(truncated[t] > 0, v_next[t], cont)
        cont = np.where(terminated[t] > 0, terminal_value[t], cont)
        y[t] = np.maximum(r[t], np.minimum(s[t], gamma * cont))
        nxt = y[t]
    return y
