"""MuJoCo reach-avoid variants ``mlx26/ra-reacher`` and ``mlx26/ra-hopper`` (our designs for the
RAPC reconstruction of Pan et al., ICML 2026; the paper's own environments are not public).

Both wrap gymnasium's MuJoCo envs (``gymnasium[mujoco]``), add Gaussian action noise (the
stochasticity the method is about) and report ``info["reached"]``, ``info["unsafe"]`` and
``info["cost"]`` through :class:`~.wrappers.ReachAvoidInfo`:

* ``ra-reacher`` (Reacher-v5, 50 steps): G = fingertip within ``goal_radius`` of the target
  (observation entries 8:10 are fingertip − target, 4:6 the target); F = fingertip inside a
  fixed hazard disc (``hazard`` = centre x, y, radius); targets that would make G and F overlap,
  or starts inside either, are redrawn; cost = dt·(1 + ‖a‖²).
* ``ra-hopper`` (Hopper-v5, ``max_steps``): G = torso x ≥ ``goal_x``; F = the env's own
  "unhealthy" termination (fallen or tilted); cost = dt·(1 + 0.1‖a‖²).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.rl.reach_avoid.wrappers import ReachAvoidInfo


class ActionNoise(gymnasium.ActionWrapper):
    def __init__(self, env, sigma: float):
        super().__init__(env)
        if sigma < 0:
            raise InputError(f"action noise must be ≥ 0, got {sigma}")
        self.sigma = float(sigma)

    def action(self, action):
        a = np.asarray(action, dtype=np.float64)
        noisy = a + self.sigma * self.env.np_random.standard_normal(a.shape)
        return np.clip(noisy, self.action_space.low, self.action_space.high)


def _make(name: str, **kwargs):
    try:
        return gymnasium.make(name, **kwargs)
    except gymnasium.error.DependencyNotInstalled as exc:
        raise ModuleNotFoundError(f"{name} needs MuJoCo: {exc}", name="mujoco") from exc


def make_ra_reacher(goal_radius: float = 0.03, hazard: tuple[float, float, float] = (0.0, -0.12, 0.05),
                    noise: float = 0.1):
    env = ActionNoise(_make("Reacher-v5"), noise)
    dt = float(env.unwrapped.dt)  # type: ignore[attr-defined]
    hx, hy, hr = (float(v) for v in hazard)

    def goal(obs):
        return float(np.hypot(obs[8], obs[9])) <= goal_radius

    def unsafe(obs):
        return float(np.hypot(obs[4] + obs[8] - hx, obs[5] + obs[9] - hy)) <= hr

    def disjoint(obs):  # the goal disc around the random target must not touch the hazard disc
        return float(np.hypot(obs[4] - hx, obs[5] - hy)) > hr + goal_radius

    return ReachAvoidInfo(env, goal, unsafe, lambda obs, a: dt * (1.0 + float(np.sum(np.square(a)))),
                          redraws=100, admissible=disjoint)


class _HopperReachAvoid(gymnasium.Wrapper):
    """Hopper's x position is not in its observation: read it from the simulator."""

    def __init__(self, env, goal_x: float):
        super().__init__(env)
        self.goal_x = float(goal_x)
        self.dt = float(env.unwrapped.dt)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        reached = float(self.env.unwrapped.data.qpos[0]) >= self.goal_x
        unsafe = bool(terminated) and not reached
        cost = self.dt * (1.0 + 0.1 * float(np.sum(np.square(action))))
        info = {**info, "reached": reached, "unsafe": unsafe, "cost": cost, "success": float(reached)}
        return obs, reward, terminated or reached, truncated, info


def make_ra_hopper(goal_x: float = 1.0, noise: float = 0.1, max_steps: int = 300):
    return _HopperReachAvoid(ActionNoise(_make("Hopper-v5", max_episode_steps=max_steps), noise), goal_x)
