"""Reach-avoid evaluation (RAPC reconstruction, Pan et al., ICML 2026): success (reach G before
F), unsafe and timeout shares and the mean episode cost from ``info["cost"]`` — independent of
the reward the agent was trained on, so RAPC, PPO-Lagrangian and weighted-sum PPO are scored
alike. Episode i starts from ``env.reset(seed=seed + i)``.
"""

from __future__ import annotations

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.rl.reach_avoid.certificates import wilson


def evaluate_reach_avoid(env, policy, episodes: int, seed: int) -> dict:
    if episodes < 1:
        raise InputError(f"episodes must be ≥ 1, got {episodes}")
    policy.reset(seed)
    reached, unsafe, costs, lengths = [], [], [], []
    for i in range(episodes):
        obs, _ = env.reset(seed=seed + i)
        cost, steps, done, info = 0.0, 0, False, {}
        while not done:
            obs, _, terminated, truncated, info = env.step(policy(np.asarray(obs)))
            cost += float(info["cost"])
            steps += 1
            done = terminated or truncated
        reached.append(bool(info["reached"]))
        unsafe.append(bool(info["unsafe"]))
        costs.append(cost)
        lengths.append(steps)
    k = int(np.sum(reached))
    lo, hi = wilson(k, episodes)
    c = np.asarray(costs)
    return {"episodes": episodes, "success": k / episodes, "success_wilson_low": float(lo), "success_wilson_high": float(hi),
            "unsafe": float(np.mean(unsafe)), "timeout": float(np.mean(~np.asarray(reached) & ~np.asarray(unsafe))),
            "cost": float(c.mean()), "cost_std": float(c.std()), "length": float(np.mean(lengths))}
