"""Certify a RAPC (or PPO-Lagrangian) checkpoint on ``mlx26/ra-grid`` or ``mlx26/ra-point``
(``mlx26 rl reach-avoid certify``; RAPC reconstruction of Pan et al., ICML 2026).

The learned reach-avoid critic, read at every cell, is turned into a sound certificate
(:func:`~.certificates.make_certificate`) for the checkpoint's deterministic policy; cells with
B(x) ≥ p are certified. Reported alongside: the exact P(RA) of that policy (linear solve), the
DP fixed point V_γ and the critic's distance to it, and Monte-Carlo P(RA) with Wilson intervals
for the certified cells. ``mlx26/ra-point`` checkpoints get the statistical certificate of
:mod:`.certify_point` (Monte-Carlo + Clopper–Pearson at a stated confidence, for listed states).
"""

from __future__ import annotations

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.rl.reach_avoid import certificates as cert
from mlx26.core.rl.reach_avoid.operator import fixed_point


def certify_checkpoint(path: str, n_mc: int = 200, p: float | None = None, seed: int = 0, *,
                       confidence: float = 0.95, n_states: int = 300, candidates: str = "critic") -> dict:
    import torch
    from mlx26.core.rl import checkpoint
    from mlx26.core.rl.envs import make_env
    from mlx26.core.rl.nets import tanh_mlp
    from mlx26.core.rl.reach_avoid.rapc import load_policy

    if n_mc < 1:
        raise InputError(f"--n-mc must be ≥ 1, got {n_mc}")
    state = checkpoint.load(path)
    if state["algo"] not in ("rapc", "ppo-lag") or state["env"] not in ("mlx26/ra-grid", "mlx26/ra-point"):
        raise InputError(f"certify needs a rapc or ppo-lag checkpoint on mlx26/ra-grid or mlx26/ra-point, "
                         f"got {state['algo']} on {state['env']}", "train one with: mlx26 train rl --algo rapc --env mlx26/ra-grid --out DIR")
    hp = state["config"]["hp"]
    p = float(hp["p"] if p is None else p)
    if not 0 < p <= 1:
        raise InputError(f"--p must be in (0, 1], got {p}")
    gamma = float(hp["gamma_ra"])
    env = make_env(state["env"])
    head = {"checkpoint": str(path), "algo": state["algo"], "env": state["env"], "step": state["step"], "p": p,
            "gamma_ra": gamma}
    if state["env"] == "mlx26/ra-point":
        return {**head, **_certify_point(state, env, gamma, p, n_mc, seed, confidence=confidence,
                                         n_states=n_states, candidates=candidates)}
    model = env.unwrapped.model
    eye = torch.eye(model.n)
    critic = tanh_mlp(model.n, tuple(hp["hidden"]), 1, 1.0)
    critic.load_state_dict(state["models"]["ra_critic"])
    policy_fn = load_policy(state, env)
    with torch.no_grad():
        v_hat = torch.sigmoid(critic(eye).squeeze(-1)).numpy().astype(np.float64)
    policy = np.array([policy_fn(eye[i].numpy()) for i in range(model.n)], dtype=int)
    v_hat[model.goal], v_hat[model.unsafe] = 1.0, 0.0  # the critic is never trained on G ∪ F
    Pp = model.policy_matrix(policy)
    B = cert.make_certificate(v_hat, Pp, model.r, model.s, gamma)
    v_gamma = fixed_point(Pp, model.r, model.s, gamma)
    exact = model.p_ra(policy)
    inner = ~model.absorbing
    states = cert.certified(B, p)
    states = states[inner[states]]
    mc = cert.monte_carlo_check(model, policy, states, p, n_mc=n_mc, seed=seed)
    return {**head, "cells": int(inner.sum()), "certified": len(states), "certified_cells": states.tolist(),
            "start_certified": bool(model.start in set(states.tolist())),
            "start_p_ra_exact": float(exact[model.start]), "start_certificate": float(B[model.start]),
            "critic_vs_dp_max_abs": float(np.abs(v_hat - v_gamma)[inner].max()),
            **_critic_vs_training_policy(state, model, v_hat, gamma),
            "certified_exact_p_ra_min": float(exact[states].min()) if len(states) else None,
            "mc_n": n_mc, "mc_sound_share_upper": mc["sound_upper"], "mc_sound_share_lower": mc["sound_lower"],
            "mc_p_hat": mc["p_hat"], "mc_wilson_low": mc["wilson_low"]}


def _certify_point(state: dict, env, gamma: float, p: float, n_mc: int, seed: int, **options) -> dict:
    from mlx26.core.rl.nets import ActorCritic, tanh_mlp
    from mlx26.core.rl.reach_avoid.certify_point import certify_point

    hidden = tuple(state["config"]["hp"]["hidden"])
    agent = ActorCritic(2, state["space"], hidden)
    agent.load_state_dict(state["models"]["agent"])
    critic = tanh_mlp(2, hidden, 1, 1.0)
    critic.load_state_dict(state["models"]["ra_critic"])
    return certify_point(agent, critic, state["space"], env.unwrapped.model, gamma, p, n_mc=n_mc,
                         horizon=env.unwrapped.max_steps, seed=seed, **options)


def _critic_vs_training_policy(state: dict, model, v_hat: np.ndarray, gamma: float) -> dict:
    """The critic estimates V_γ of the *stochastic* policy that collected its data, not of the greedy
    policy evaluated above: compare it with that policy's DP fixed point, over every cell and over
    the cells that policy visits from the start (expected visits ≥ 0.01 per episode), where it has data."""
    import torch
    from mlx26.core.rl.nets import ActorCritic

    agent = ActorCritic(model.n, state["space"], tuple(state["config"]["hp"]["hidden"]))
    agent.load_state_dict(state["models"]["agent"])
    with torch.no_grad():
        probs = agent.dist(torch.eye(model.n)).probs.numpy().astype(np.float64)
    Pp = model.policy_matrix(probs)
    v_pi = fixed_point(Pp, model.r, model.s, gamma)
    inner = ~model.absorbing
    Q = Pp[np.ix_(inner, inner)]  # transitions among non-absorbing cells
    start = int(inner[:model.start].sum())  # the start's index among the non-absorbing cells
    e = np.zeros(int(inner.sum()))
    e[start] = 1.0
    visits = np.linalg.solve(np.eye(len(e)) - Q.T, e)  # expected visits per episode (no step limit)
    gap = np.abs(v_hat - v_pi)[inner]
    seen = visits >= 0.01
    return {"critic_vs_dp_training_policy_max_abs": float(gap.max()),
            "critic_vs_dp_training_policy_visited_max_abs": float(gap[seen].max()),
            "critic_vs_dp_training_policy_visit_weighted_mean_abs": float((gap * visits).sum() / visits.sum()),
            "visited_cells": int(seen.sum())}
