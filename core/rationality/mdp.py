"""Tabular MDPs from gymnasium toy-text tables, the slip shift, and finite-horizon optimal values.

Conventions (checked against the closed-form values in tests/rationality): ``P[s, a, s']`` sums the
probabilities of gymnasium's listed outcomes, ``R[s, a] = sum_s' P r(s, a, s')``, and the terminal
flag of entering ``s'`` from ``s`` is the max over actions of gymnasium's ``done`` flag (entering the
goal ends the episode whichever action slipped there). Values are undiscounted over horizon ``H``:
``V_H = 0``, ``Q_t = R + sum_s' P (1 - D) V_{t+1}``, ``V_t = max_a Q_t``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from mlx26.core.common.errors import InputError, unknown_name

TABLE_ERROR = "exact risk needs a discrete env with a transition table"


@dataclass
class TabularMDP:
    env_id: str
    P: np.ndarray  # (S, A, S) transition probabilities
    R: np.ndarray  # (S, A) expected reward
    D: np.ndarray  # (S, S) 1 where entering s' from s terminates
    mu0: np.ndarray  # (S,) initial-state distribution
    coords: np.ndarray | None = None  # (S, k) coordinates for the grid metric
    kwargs: dict = field(default_factory=dict)

    @property
    def n_states(self) -> int:
        return self.P.shape[0]

    @property
    def n_actions(self) -> int:
        return self.P.shape[1]


def check_eps(eps: float, name: str = "--eps") -> float:
    if not (isinstance(eps, (int, float)) and 0.0 <= float(eps) <= 1.0):
        raise InputError(f"{name} must be in [0, 1], got {eps}", "eps is the slip probability of the shift")
    return float(eps)


def check_horizon(horizon: int) -> int:
    if int(horizon) != horizon or horizon <= 0:
        raise InputError(f"--horizon must be a positive integer, got {horizon}")
    return int(horizon)


def _gym():
    try:
        import gymnasium
    except ImportError as exc:
        from mlx26.core.common.errors import BackendMissing

        raise BackendMissing("this command needs the optional package 'gymnasium', which is not installed.",
                             hint="pip install 'mlx26[rationality]'") from exc
    return gymnasium


def _coords(env_id: str, unwrapped, n_states: int) -> np.ndarray | None:
    if env_id.startswith("Taxi"):
        return np.array([list(unwrapped.decode(s)) for s in range(n_states)], float)  # row, col, pass, dest
    shape = getattr(unwrapped, "shape", None)
    desc = getattr(unwrapped, "desc", None)
    ncol = shape[1] if shape is not None else (desc.shape[1] if desc is not None else None)
    if ncol is None:
        return None
    s = np.arange(n_states)
    return np.stack([s // ncol, s % ncol], axis=1).astype(float)


def from_gym(env_id: str, **kwargs) -> TabularMDP:
    """Read ``env.unwrapped.P`` of a gymnasium toy-text env (any id with a transition table)."""
    gym = _gym()
    if env_id not in gym.registry:
        raise unknown_name("env", env_id, [k for k in gym.registry if "/" not in k],
                           "a gymnasium toy-text id, e.g. CliffWalking-v1, FrozenLake-v1, Taxi-v4")
    try:
        env = gym.make(env_id, **kwargs)
    except Exception as exc:  # a missing extra (box2d, mujoco) or bad kwargs: not tabular for us
        raise InputError(f"{TABLE_ERROR}; cannot make {env_id}: {' '.join(str(exc).split())[:160]}") from None
    u = env.unwrapped
    table = getattr(u, "P", None)
    if not isinstance(table, dict) or not hasattr(env.observation_space, "n") or not hasattr(env.action_space, "n"):
        from mlx26.core.rationality.spec import ENVS

        raise InputError(f"{TABLE_ERROR}; {env_id} has none", "use a toy-text env: " + ", ".join(ENVS))
    S, A = int(env.observation_space.n), int(env.action_space.n)
    P, Rsas, d = np.zeros((S, A, S)), np.zeros((S, A, S)), np.zeros((S, A, S))
    for s in range(S):
        for a in range(A):
            for prob, s2, r, done in table[s][a]:
                P[s, a, s2] += prob
                Rsas[s, a, s2] += prob * r
                d[s, a, s2] = max(d[s, a, s2], float(done))
    R = Rsas.sum(axis=2)
    mu0 = np.asarray(getattr(u, "initial_state_distrib", np.zeros(S)), float).ravel()
    if mu0.shape != (S,) or mu0.sum() <= 0:
        mu0 = np.zeros(S)
        mu0[int(env.reset(seed=0)[0])] = 1.0
    env.close()
    return TabularMDP(env_id, P, R, d.max(axis=1), mu0 / mu0.sum(), _coords(env_id, u, S), dict(kwargs))


def slip(mdp: TabularMDP, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """``(P_eps, R_eps)``: with probability eps the action is replaced by a uniformly random one."""
    eps = check_eps(eps)
    P = (1 - eps) * mdp.P + eps * mdp.P.mean(axis=1, keepdims=True)
    R = (1 - eps) * mdp.R + eps * mdp.R.mean(axis=1, keepdims=True)
    return P, R


def init_mixture(mdp: TabularMDP, mix: float) -> np.ndarray:
    """Deployment initial distribution ``(1-mix) mu0 + mix * uniform(non-terminal states)``."""
    mix = check_eps(mix, "--init-mix")
    live = 1.0 - mdp.D.max(axis=0)  # states no transition terminates in
    uniform = live / live.sum()
    return (1 - mix) * mdp.mu0 + mix * uniform


@dataclass
class OptimalValues:
    Q: np.ndarray  # (H, S, A)
    V: np.ndarray  # (H + 1, S)

    @property
    def horizon(self) -> int:
        return self.Q.shape[0]


def backward_induction(P: np.ndarray, R: np.ndarray, D: np.ndarray, horizon: int) -> OptimalValues:
    """Finite-horizon ``Q*_t`` / ``V*_t`` (vectorised over states and actions)."""
    H = check_horizon(horizon)
    S, A = R.shape
    M = P * (1.0 - D)[:, None, :]
    Q, V = np.zeros((H, S, A)), np.zeros((H + 1, S))
    for t in range(H - 1, -1, -1):
        Q[t] = R + M @ V[t + 1]
        V[t] = Q[t].max(axis=1)
    return OptimalValues(Q, V)


def rational_sets(values: OptimalValues, tol: float = 1e-9) -> np.ndarray:
    """Boolean ``(H, S, A)``: the actions whose Q*_t is within ``tol`` of the max (ties kept as sets)."""
    return values.Q >= values.V[:-1, :, None] - tol


def solve(mdp: TabularMDP, eps: float, horizon: int) -> OptimalValues:
    P, R = slip(mdp, eps)
    return backward_induction(P, R, mdp.D, horizon)


def summary(mdp: TabularMDP, values: OptimalValues, eps: float, states: bool = False) -> dict:
    V0 = values.V[0]
    sets = rational_sets(values)[0]
    out = {"env": mdp.env_id, "eps": eps, "horizon": values.horizon, "n_states": mdp.n_states,
           "n_actions": mdp.n_actions, "v_star_start": float(mdp.mu0 @ V0),
           "v_star_min": float(V0.min()), "v_star_max": float(V0.max()),
           "states_with_ties": int((sets.sum(axis=1) > 1).sum())}
    if states:
        out["states"] = [{"state": s, "v_star": float(V0[s]), "q_star": values.Q[0, s].tolist(),
                          "rational_actions": np.flatnonzero(sets[s]).tolist()} for s in range(mdp.n_states)]
    return out
