"""Bound terms, as our computable proxies of the paper's bounds.

* ``W1`` between training and deployment kernels per (s, a) under a ground metric on states:
  ``grid`` = Manhattan distance of the grid cells (Taxi: taxi cell + 1 per differing passenger /
  destination index), ``discrete`` = 1 for distinct states (W1 = total variation). For the slip
  family ``P_eps - P_eps' = (eps - eps') (mean_b P - P)``, so ``W1 = |eps - eps'| W1(P(s,a), mean_b P(s,b))``
  exactly; the base term is closed form when ``P(s, a)`` is a point mass or the metric is discrete,
  otherwise POT's ``ot.emd2`` computes it (optional extra ``rationality``).
* Extrinsic bound (proved by telescoping, see docs): ``|R_dep - R_train| <= L_0 W1(mu_train, mu_dep)
  + sum_t sum_s d^train_t(s) sum_a pi(a|s) L_{t+1} W1(P_train(s,a), P_dep(s,a))`` with ``L_t`` the
  Lipschitz constant (under the ground metric) of the deployment risk-to-go masked by termination.
* Intrinsic: ``|R_train - empirical| <= 2 Rad_n(F) + 3 B sqrt(log(2/delta) / 2n)`` w.p. 1 - delta, with
  a Monte-Carlo empirical Rademacher estimate over the policies' risk functions (one per
  checkpoint) and ``B`` their range; plus a norm-based (Golowich et al. style) proxy of the Q-class.
"""

from __future__ import annotations

import math

import numpy as np
from mlx26.core.common.errors import BackendMissing, InputError
from mlx26.core.rationality.mdp import OptimalValues, TabularMDP
from mlx26.core.rationality.risk import discrepancy, policy_matrix


def ground_metric(mdp: TabularMDP, metric: str = "grid") -> np.ndarray:
    S = mdp.n_states
    if metric == "discrete" or mdp.coords is None:
        return 1.0 - np.eye(S)
    if metric != "grid":
        from mlx26.core.common.errors import unknown_name
        from mlx26.core.rationality.spec import METRICS

        raise unknown_name("metric", metric, METRICS)
    c = mdp.coords
    if mdp.env_id.startswith("Taxi"):
        return (np.abs(c[:, None, :2] - c[None, :, :2]).sum(-1) + (c[:, None, 2:] != c[None, :, 2:]).sum(-1))
    return np.abs(c[:, None, :] - c[None, :, :]).sum(-1)


def _ot():
    try:
        import ot
    except ImportError as exc:
        raise BackendMissing("this W1 needs the optional package 'pot' (import ot), which is not installed.",
                             hint="pip install 'mlx26[rationality]'  (or --w1-method closed for the slip family)"
                             ) from exc
    return ot


def w1(p: np.ndarray, q: np.ndarray, C: np.ndarray, method: str = "auto") -> float:
    """W1 between two distributions on the states (closed form for a point mass or the discrete metric)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    discrete = bool(np.all(C[~np.eye(len(C), dtype=bool)] == 1.0))
    if method != "pot":
        if discrete:
            return 0.5 * float(np.abs(p - q).sum())
        for a, b in ((p, q), (q, p)):
            support = np.flatnonzero(a > 1e-15)
            if support.size == 1:
                return float(b @ C[support[0]])
        if method == "closed":
            raise InputError("no closed form for this W1 (neither side is a point mass and the metric is grid)",
                             "use --w1-method pot or --metric discrete")
    ot = _ot()
    sp, sq = np.flatnonzero(p > 1e-15), np.flatnonzero(q > 1e-15)
    a, b = p[sp] / p[sp].sum(), q[sq] / q[sq].sum()
    return float(ot.emd2(a, b, np.ascontiguousarray(C[np.ix_(sp, sq)])))


def w1_slip(mdp: TabularMDP, eps_a: float, eps_b: float, C: np.ndarray, method: str = "auto") -> np.ndarray:
    """``(S, A)`` W1 between ``P_eps_a(s, a)`` and ``P_eps_b(s, a)`` (exact linear form of the slip family)."""
    if eps_a == eps_b:
        return np.zeros(mdp.P.shape[:2])
    mean = mdp.P.mean(axis=1)
    base = np.array([[w1(mdp.P[s, a], mean[s], C, method) for a in range(mdp.n_actions)]
                     for s in range(mdp.n_states)])
    return abs(eps_a - eps_b) * base


def w1_kernels(P1: np.ndarray, P2: np.ndarray, C: np.ndarray, method: str = "pot") -> np.ndarray:
    """``(S, A)`` W1 between two arbitrary kernels (POT unless a closed form applies)."""
    return np.array([[w1(P1[s, a], P2[s, a], C, method) for a in range(P1.shape[1])] for s in range(P1.shape[0])])


def lipschitz(f: np.ndarray, C: np.ndarray) -> float:
    """``max_{x != y} |f(x) - f(y)| / C(x, y)`` on the finite metric space."""
    diff = np.abs(f[:, None] - f[None, :])
    off = C > 0
    return float((diff[off] / C[off]).max()) if off.any() else 0.0


def extrinsic_bound(values: OptimalValues, P_dep: np.ndarray, P_train: np.ndarray, D: np.ndarray,
                    mu_train: np.ndarray, mu_dep: np.ndarray, policy, w1_sa: np.ndarray, w1_mu: float,
                    C: np.ndarray, tol: float = 1e-9) -> dict:
    S, A = P_dep.shape[:2]
    pi = policy_matrix(policy, S, A)
    delta = (pi[None] * discrepancy(values, tol)).sum(axis=2)  # (H, S)
    H = values.horizon
    T_dep = np.einsum("sa,sat->st", pi, P_dep * (1.0 - D)[:, None, :])
    T_tr = np.einsum("sa,sat->st", pi, P_train * (1.0 - D)[:, None, :])
    masks = np.unique(D > 0, axis=0)
    W = np.zeros((H + 1, S))
    for t in range(H - 1, -1, -1):
        W[t] = delta[t] + T_dep @ W[t + 1]
    lip = np.array([max(lipschitz(np.where(m, 0.0, W[t]), C) for m in masks) for t in range(H + 1)])
    lip0 = lipschitz(W[0], C)
    per_state = (pi * w1_sa).sum(axis=1)  # (S,)
    d, kernel_term = np.asarray(mu_train, float), 0.0
    for t in range(H):
        kernel_term += lip[t + 1] * float(d @ per_state)
        d = d @ T_tr
    init_term = lip0 * w1_mu
    return {"bound": float(init_term + kernel_term), "initial_term": float(init_term), "kernel_term": float(kernel_term),
            "lipschitz_max": float(lip.max()), "w1_init": w1_mu, "w1_kernel_max": float(w1_sa.max()),
            "w1_kernel_mean": float(w1_sa.mean())}


def rademacher_mc(F: np.ndarray, draws: int = 1000, rng: np.random.Generator | None = None) -> float:
    """Monte-Carlo empirical Rademacher complexity of a finite class: ``F`` is (n_functions, n_samples)."""
    F = np.atleast_2d(np.asarray(F, float))
    rng = rng or np.random.default_rng(0)
    sigma = rng.choice([-1.0, 1.0], size=(draws, F.shape[1]))
    return float((sigma @ F.T / F.shape[1]).max(axis=1).mean())


def intrinsic_bound(F: np.ndarray, delta: float = 0.05, draws: int = 1000, rng=None) -> dict:
    F = np.atleast_2d(np.asarray(F, float))
    n = F.shape[1]
    B = float(F.max() - min(F.min(), 0.0)) or 0.0
    rad = rademacher_mc(F, draws, rng)
    conc = 3 * B * math.sqrt(math.log(2 / delta) / (2 * n))
    return {"bound": 2 * max(rad, 0.0) + conc, "rademacher_mc": rad, "concentration": conc, "range": B,
            "n_trajectories": n, "n_functions": F.shape[0], "delta": delta}


def norm_bound(weights: list[np.ndarray], n: int, input_norm: float = 1.0) -> float:
    """Golowich-style size proxy ``B_x (sqrt(2 L log 2) + 1) prod_l ||W_l||_F / sqrt(n)`` of the Q-net class."""
    prod = float(np.prod([np.linalg.norm(w) for w in weights])) if weights else 0.0
    L = len(weights)
    return input_norm * (math.sqrt(2 * L * math.log(2)) + 1) * prod / math.sqrt(max(n, 1))
