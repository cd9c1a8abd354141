"""Rational risk: exact expected risk by distribution propagation, empirical risk on trajectories, the gap.

Definitions (reconstructed from the paper's text; docs/rationality.md states them in full). With
``Q*_t`` the optimal values of the *deployment* kernel and ``Delta_t(s, a) = V*_t(s) - Q*_t(s, a)``
(0 when ``a`` is in the rational set, i.e. within ``tol`` of the max):

* expected rational risk ``R(pi; P, mu) = sum_t E_{s ~ d_t} sum_a pi(a|s) Delta_t(s, a)``, where
  ``d_0 = mu`` and ``d_{t+1}(s') = sum_s d_t(s) sum_a pi(a|s) P(s, a, s') (1 - D(s, s'))`` is
  propagated exactly (no sampling); on the deployment kernel it equals ``V*_0(mu) - V^pi_0(mu)``;
* empirical rational risk: the mean over recorded training trajectories of ``sum_t Delta_t``;
* gap = expected (deployment) - empirical (training) = extrinsic ``R(pi; P_dep, mu_dep) -
  R(pi; P_train, mu_train)`` + intrinsic ``R(pi; P_train, mu_train) - empirical``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.rationality.mdp import OptimalValues


def policy_matrix(policy, n_states: int, n_actions: int) -> np.ndarray:
    """``(S, A)`` action probabilities from a table of actions ``(S,)`` or probabilities ``(S, A)``."""
    pi = np.asarray(policy)
    if pi.ndim == 1:
        if pi.shape != (n_states,):
            raise InputError(f"policy has {pi.shape[0]} states, the env has {n_states}")
        if not np.issubdtype(pi.dtype, np.integer) or pi.min() < 0 or pi.max() >= n_actions:
            raise InputError(f"policy actions must be integers in [0, {n_actions - 1}]")
        out = np.zeros((n_states, n_actions))
        out[np.arange(n_states), pi] = 1.0
        return out
    if pi.shape != (n_states, n_actions) or (pi < 0).any() or not np.allclose(pi.sum(axis=1), 1.0):
        raise InputError(f"a stochastic policy must be ({n_states}, {n_actions}) rows of probabilities")
    return pi.astype(float)


def discrepancy(values: OptimalValues, tol: float = 1e-9) -> np.ndarray:
    """``(H, S, A)`` value discrepancy to the rational set's value (0 inside the set)."""
    delta = values.V[:-1, :, None] - values.Q
    return np.where(delta <= tol, 0.0, delta)


def greedy(values: OptimalValues, t: int = 0) -> np.ndarray:
    """A rational (greedy at step t) stationary policy, lowest action index among ties."""
    return values.Q[t].argmax(axis=1)


@dataclass
class RiskResult:
    risk: float
    per_step: np.ndarray  # (H,) expected discrepancy at each step
    value: float  # V^pi_0(mu) on the kernel used (undiscounted return over H)
    alive: float  # mass not yet terminated at H


def expected_risk(values: OptimalValues, P: np.ndarray, D: np.ndarray, mu: np.ndarray, policy,
                  R: np.ndarray | None = None, tol: float = 1e-9) -> RiskResult:
    """Exact expected rational risk of ``policy`` with states propagated on ``P`` from ``mu``."""
    S, A = P.shape[0], P.shape[1]
    pi = policy_matrix(policy, S, A)
    delta = discrepancy(values, tol)
    M = P * (1.0 - D)[:, None, :]
    T = np.einsum("sa,sat->st", pi, M)  # (S, S) sub-stochastic: mass leaves on termination
    r_pi = (pi * R).sum(axis=1) if R is not None else None
    d, per_step, value = np.asarray(mu, float), np.zeros(values.horizon), 0.0
    for t in range(values.horizon):
        per_step[t] = d @ (pi * delta[t]).sum(axis=1)
        if r_pi is not None:
            value += float(d @ r_pi)
        d = d @ T
    return RiskResult(float(per_step.sum()), per_step, value if R is not None else float("nan"), float(d.sum()))


def sample_trajectories(P: np.ndarray, D: np.ndarray, mu: np.ndarray, policy, n: int, horizon: int,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` episodes in parallel: states and actions ``(n, H)``, -1 after termination."""
    S, A = P.shape[0], P.shape[1]
    pi = policy_matrix(policy, S, A)
    cum_p, cum_pi, cum_mu = np.cumsum(P, axis=2), np.cumsum(pi, axis=1), np.cumsum(mu)
    states, actions = -np.ones((n, horizon), np.int64), -np.ones((n, horizon), np.int64)
    s = np.minimum(np.searchsorted(cum_mu, rng.random(n) * cum_mu[-1], side="right"), S - 1)
    alive = np.ones(n, bool)
    for t in range(horizon):
        idx = np.flatnonzero(alive)
        if idx.size == 0:
            break
        st = s[idx]
        u = rng.random(idx.size)[:, None]
        a = np.minimum((cum_pi[st] * 1.0 < u * cum_pi[st, -1:]).sum(axis=1), A - 1)
        states[idx, t], actions[idx, t] = st, a
        c = cum_p[st, a]
        s2 = np.minimum((c < rng.random(idx.size)[:, None] * c[:, -1:]).sum(axis=1), S - 1)
        ended = D[st, s2] > 0
        s[idx] = s2
        alive[idx[ended]] = False
    return states, actions


def trajectory_risks(values: OptimalValues, states: np.ndarray, actions: np.ndarray | None = None,
                     policy=None, tol: float = 1e-9) -> np.ndarray:
    """Per-trajectory ``sum_t Delta_t``: of the recorded actions, or averaged over ``policy``'s."""
    delta = discrepancy(values, tol)
    H = min(states.shape[1], values.horizon)
    out = np.zeros(states.shape[0])
    pi = policy_matrix(policy, delta.shape[1], delta.shape[2]) if policy is not None else None
    for t in range(H):
        live = states[:, t] >= 0
        st = states[live, t]
        if pi is not None:
            out[live] += (pi[st] * delta[t, st]).sum(axis=1)
        else:
            out[live] += delta[t, st, actions[live, t]]
    return out


def gap(expected_deploy: float, expected_train: float, empirical: float) -> dict:
    d, t, e = float(expected_deploy), float(expected_train), float(empirical)
    return {"gap": d - e, "extrinsic": d - t, "intrinsic": t - e}
