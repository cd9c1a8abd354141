"""Reach-avoid wrappers (RAPC reconstruction, Pan et al., ICML 2026).

* :class:`ReachAvoidInfo` adds ``info["reached"]``, ``info["unsafe"]`` and ``info["cost"]`` to
  any gymnasium env from three user functions of the next observation (and the action for the
  cost), ends the episode on reaching G or touching F, and refuses a start inside G or F
  (after ``redraws`` fresh resets, for envs whose random starts may land there) and a state in
  G ∩ F (the problem is ill-posed there).
* :class:`WeightedReachAvoidReward` turns those keys into the weighted-sum reward
  −cost + w_goal·reached − w_unsafe·unsafe (the PPO baseline ``--reward weighted``).
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium
import numpy as np
from mlx26.core.common.errors import InputError

REQUIRED_KEYS = ("reached", "unsafe", "cost")


class ReachAvoidInfo(gymnasium.Wrapper):
    def __init__(self, env, goal: Callable, unsafe: Callable, cost: Callable | None = None, redraws: int = 0,
                 admissible: Callable | None = None):
        super().__init__(env)
        self._goal, self._unsafe = goal, unsafe
        self._cost = cost or (lambda obs, action: 1.0)
        self.redraws = int(redraws)
        self._admissible = admissible or (lambda obs: True)  # extra start condition, e.g. goal away from F

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        for _ in range(self.redraws):  # continue the env's own RNG stream: still deterministic under the seed
            if not (self._unsafe(obs) or self._goal(obs)) and self._admissible(obs):
                break
            obs, info = self.env.reset(options=kwargs.get("options"))
        if self._unsafe(obs) or self._goal(obs):
            raise InputError("the reset state lies in the goal set G or the unsafe set F",
                             "reach-avoid episodes must start outside G ∪ F")
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        reached, unsafe = bool(self._goal(obs)), bool(self._unsafe(obs))
        if reached and unsafe:
            raise InputError(f"state {np.asarray(obs).tolist()} is in both G and F: G ∩ F must be empty")
        info = {**info, "reached": reached, "unsafe": unsafe, "cost": float(self._cost(obs, action)),
                "success": float(reached)}
        return obs, reward, terminated or reached or unsafe, truncated, info


class WeightedReachAvoidReward(gymnasium.Wrapper):
    def __init__(self, env, w_goal: float, w_unsafe: float):
        super().__init__(env)
        self.w_goal, self.w_unsafe = float(w_goal), float(w_unsafe)

    def step(self, action):
        obs, _, terminated, truncated, info = self.env.step(action)
        reward = -float(info["cost"]) + self.w_goal * float(info["reached"]) - self.w_unsafe * float(info["unsafe"])
        return obs, reward, terminated, truncated, info
