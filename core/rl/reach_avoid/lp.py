"""The exact constrained optimum on ``mlx26/ra-grid`` by linear programming over occupancy
measures (our reference for the RAPC reconstruction of Pan et al., ICML 2026).

Variables d(x, a) ≥ 0 = expected number of visits to transient state x taking action a
(transient = not in G ∪ F, which are absorbing). With start distribution μ₀:

    min  Σ c(x) d(x, a)
    s.t. Σ_a d(x, a) − Σ_{x', a'} P(x | x', a') d(x', a') = μ₀(x)   for every transient x
         Σ_{x', a'} P(G | x', a') d(x', a') ≥ p                      (P(reach G before F) ≥ p)

solved with SciPy's HiGHS. The optimal policy π(a | x) ∝ d(x, a) may be stochastic (constrained
MDPs need randomisation). The LP is the undiscounted, untruncated problem: the env's step limit
is ignored (a policy that needs more steps than the limit would be truncated in the env).
"""

from __future__ import annotations

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure


def constrained_optimum(model, p: float) -> dict:
    """``{"cost", "p_ra", "policy" [n, A]}`` of the cheapest policy with P(RA) ≥ p from the start."""
    from scipy.optimize import linprog

    if not 0 < p <= 1:
        raise InputError(f"p must be in (0, 1], got {p}")
    trans = np.flatnonzero(~model.absorbing)
    n_t, A = len(trans), model.n_actions
    P = model.P[trans]  # [n_t, A, n]
    into_trans = P[:, :, trans].reshape(n_t * A, n_t)  # row (x', a') → column x
    A_eq = np.kron(np.eye(n_t), np.ones((1, A))) - into_trans.T
    mu0 = (trans == model.start).astype(np.float64)
    reach = P[:, :, model.goal].sum(axis=2).reshape(-1)
    cost = np.repeat(model.cost()[trans], A)
    res = linprog(cost, A_ub=-reach[None, :], b_ub=[-p], A_eq=A_eq, b_eq=mu0, bounds=(0, None), method="highs")
    if res.status == 2:
        best = float(model.max_p_ra()[model.start])
        raise InputError(f"no policy reaches P(RA) ≥ {p} from the start (the best is {best:.4f})")
    if res.status != 0:
        raise RunFailure(f"the reach-avoid LP failed: {res.message}")
    d = res.x.reshape(n_t, A)
    policy = np.full((model.n, A), 1.0 / A)
    visits = d.sum(axis=1)
    seen = visits > 1e-12
    policy[trans[seen]] = d[seen] / visits[seen, None]
    randomised = int(((d[seen] > 1e-9 * visits[seen, None]).sum(axis=1) > 1).sum())
    return {"cost": float(res.fun), "p_ra": float(reach @ res.x), "policy": policy, "occupancy": d,
            "randomised_states": randomised}


def expected_cost(model, policy: np.ndarray) -> float:
    """Exact expected total cost from the start under ``policy`` (``[n]`` or ``[n, A]``) until
    G ∪ F; ∞ when the policy can loop forever among transient states."""
    Pp = model.policy_matrix(policy)
    reach = np.zeros(model.n, dtype=bool)
    reach[model.start] = True
    while True:  # transient states reachable from the start
        new = reach | ((Pp[reach & ~model.absorbing] > 0).any(axis=0))
        if (new == reach).all():
            break
        reach = new
    idx = np.flatnonzero(reach & ~model.absorbing)
    M = np.eye(len(idx)) - Pp[np.ix_(idx, idx)]
    if np.linalg.matrix_rank(M) < len(idx):
        return float("inf")
    c = np.linalg.solve(M, model.cost()[idx])
    return float(c[list(idx).index(model.start)])
