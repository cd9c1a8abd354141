"""Policy evaluation shared by training and ``mlx26 rl eval``: episode i starts from
``env.reset(seed=seed + i)`` and the policy's own noise is reseeded with ``seed``, so the same
checkpoint and seed give the same returns."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from mlx26.core.common.errors import InputError


class Policy(Protocol):
    def reset(self, seed: int) -> None: ...

    def __call__(self, obs: np.ndarray) -> np.ndarray | int: ...


def evaluate(env, policy: Policy, episodes: int, seed: int, max_steps: int | None = None) -> dict[str, Any]:
    if episodes < 1:
        raise InputError(f"--eval-episodes must be ≥ 1, got {episodes}")
    if max_steps is None:
        max_steps = default_step_cap(env)
    policy.reset(seed)
    returns, lengths, successes, capped = [], [], [], 0
    for i in range(episodes):
        obs, _ = env.reset(seed=seed + i)
        total, steps, success, done = 0.0, 0, 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(policy(np.asarray(obs)))
            total += float(reward)
            steps += 1
            success = max(success, float(info.get("success", 0.0)))
            done = terminated or truncated or (max_steps is not None and steps >= max_steps)
        capped += int(not (terminated or truncated))
        returns.append(total)
        lengths.append(steps)
        successes.append(success)
    r = np.asarray(returns)
    return {"eval_return": float(r.mean()), "eval_return_std": float(r.std()), "eval_success": float(np.mean(successes)),
            "eval_length": float(np.mean(lengths)), "eval_episodes": episodes, "eval_seed": seed,
            "eval_returns": [round(x, 6) for x in returns], "eval_capped": capped}


# An env registered without a time limit (CliffWalking, Taxi, FrozenLake made with max_episode_steps=None,
# or a user env) never ends under a greedy policy that loops; evaluation then stops at this many steps
# and says so in ``eval_capped`` instead of hanging.
UNLIMITED_EPISODE_CAP = 10_000


def default_step_cap(env) -> int | None:
    """None when the env truncates episodes itself, else ``UNLIMITED_EPISODE_CAP``."""
    spec = getattr(env, "spec", None)
    limit = getattr(spec, "max_episode_steps", None) if spec is not None else None
    return None if limit else UNLIMITED_EPISODE_CAP
