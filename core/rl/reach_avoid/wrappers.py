"""``ReachAvoidInfo``: adds ``info["reached"]``, ``info["unsafe"]`` and ``info["cost"]`` to any
gymnasium env from three user functions of the next observation (and the action for the cost),
and ends the episode on reaching G or touching F (RAPC reconstruction, Pan et al., ICML 2026)."""

from __future__ import annotations

from collections.abc import Callable

import gymnasium

REQUIRED_KEYS = ("reached", "unsafe", "cost")


class ReachAvoidInfo(gymnasium.Wrapper):
    def __init__(self, env, goal: Callable, unsafe: Callable, cost: Callable | None = None):
        super().__init__(env)
        self._goal, self._unsafe = goal, unsafe
        self._cost = cost or (lambda obs, action: 1.0)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        reached, unsafe = bool(self._goal(obs)), bool(self._unsafe(obs))
        info = {**info, "reached": reached, "unsafe": unsafe, "cost": float(self._cost(obs, action)),
                "success": float(reached)}
        return obs, reward, terminated or reached or unsafe, truncated, info
