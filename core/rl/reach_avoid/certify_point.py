"""Sampled certificate check for RAPC checkpoints on ``mlx26/ra-point`` (RAPC reconstruction,
Pan et al., ICML 2026; the sampling scheme is ours).

On a continuous state space B ≤ B_γ B cannot be checked everywhere, so this is a **statistical**
check: states x are drawn uniformly from the box outside G ∪ F; B(x) = the learned
reach-avoid critic; B_γ B at x is estimated from ``n_next`` sampled successors x' under the
deterministic policy (B(x') = 1 in G, 0 in F, the critic elsewhere) and its lower 95%
confidence bound is used. A state is certified when B(x) ≥ p and B(x) ≤ γ·LCB(E[B(x')]).
Certified states are then rolled out ``n_mc`` times (vectorised) and their Monte-Carlo P(RA)
is reported with Wilson intervals — the soundness figure.
"""

from __future__ import annotations

import numpy as np
from mlx26.core.rl.reach_avoid.certificates import wilson


def _batch_policy(agent, space):
    import torch

    def act(xy: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            mean = agent.actor(torch.as_tensor(xy, dtype=torch.float32)).numpy()
        return np.clip(mean, space["action_low"], space["action_high"])

    return act


def _batch_critic(critic):
    import torch

    def value(xy: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return torch.sigmoid(critic(torch.as_tensor(xy, dtype=torch.float32)).squeeze(-1)).numpy().astype(np.float64)

    return value


def sample_free_states(model, n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.empty((0, 2))
    while len(out) < n:
        xy = rng.uniform(-1, 1, size=(2 * n, 2))
        out = np.vstack([out, xy[~model.in_goal(xy) & ~model.in_hazard(xy)]])
    return out[:n]


def rollout_p_ra(model, act, starts: np.ndarray, n_mc: int, horizon: int, rng: np.random.Generator) -> np.ndarray:
    """Monte-Carlo successes ``[len(starts)]`` (reach G before F within ``horizon`` steps)."""
    xy = np.repeat(starts, n_mc, axis=0)
    hit, done = np.zeros(len(xy), dtype=bool), np.zeros(len(xy), dtype=bool)
    for _ in range(horizon):
        live = np.flatnonzero(~done)
        if not len(live):
            break
        xy[live] = model.step(xy[live], act(xy[live]), rng)
        g, f = model.in_goal(xy[live]), model.in_hazard(xy[live])
        hit[live[g]] = True
        done[live[g | f]] = True
    return hit.reshape(len(starts), n_mc).sum(axis=1)


def certify_point(agent, critic, space: dict, model, gamma: float, p: float, *, n_states: int = 300,
                  n_next: int = 64, n_mc: int = 200, horizon: int = 60, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    act, value = _batch_policy(agent, space), _batch_critic(critic)
    xs = sample_free_states(model, n_states, rng)
    B = value(xs)
    nxt = model.step(np.repeat(xs, n_next, axis=0), np.repeat(act(xs), n_next, axis=0), rng)
    b_next = np.where(model.in_goal(nxt), 1.0, np.where(model.in_hazard(nxt), 0.0, value(nxt))).reshape(n_states, n_next)
    lcb = b_next.mean(axis=1) - 1.96 * b_next.std(axis=1, ddof=1) / np.sqrt(n_next)
    condition = B <= gamma * lcb
    chosen = np.flatnonzero((B >= p) & condition)
    hits = rollout_p_ra(model, act, xs[chosen], n_mc, horizon, rng) if len(chosen) else np.zeros(0)
    lo, hi = wilson(hits, n_mc)

    def share(mask: np.ndarray) -> float | None:
        return float(mask.mean()) if len(chosen) else None

    return {"sampled_states": n_states, "condition_holds": int(condition.sum()), "certified": len(chosen),
            "certified_states": np.round(xs[chosen], 4).tolist(), "mc_n": n_mc, "mc_horizon": horizon,
            "mc_p_hat": (hits / n_mc).tolist(), "mc_wilson_low": lo.tolist(),
            "mc_sound_share_upper": share(hi >= p), "mc_sound_share_lower": share(lo >= p)}
