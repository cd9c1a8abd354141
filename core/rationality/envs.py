"""A gymnasium env that samples the slip-shifted tabular MDP, for training agents on ``P_eps``.

``eps`` is drawn uniformly from ``[eps_low, eps_high]`` at every reset (domain randomisation when
the range is not a point). Episodes are truncated at ``horizon`` steps. :func:`register_slip_env`
registers it under a gymnasium id that names its base env and range, so ``mlx26 train rl`` (and any
gymnasium consumer) can make it by id.
"""

from __future__ import annotations

import numpy as np
from mlx26.core.rationality.mdp import check_eps, from_gym

PREFIX = "rationality/"


def slip_env_id(base: str, eps_low: float, eps_high: float, horizon: int) -> str:
    return f"{PREFIX}{base}-slip{eps_low:g}_{eps_high:g}-h{horizon}-v0"


def base_env(env_id: str) -> str:
    """The toy-text id a (possibly slip-registered) env id was built from."""
    return env_id[len(PREFIX):].split("-slip")[0] if env_id.startswith(PREFIX) else env_id


def make_slip_env(base: str, eps_low: float = 0.0, eps_high: float = 0.0, horizon: int = 100):
    import gymnasium as gym

    class SlipEnv(gym.Env):
        metadata: dict = {"render_modes": []}

        def __init__(self):
            self.mdp = from_gym(base)
            self.observation_space = gym.spaces.Discrete(self.mdp.n_states)
            self.action_space = gym.spaces.Discrete(self.mdp.n_actions)
            self.lo, self.hi = check_eps(eps_low, "eps_low"), check_eps(eps_high, "eps_high")
            self.table = gym.make(base).unwrapped.P  # gymnasium's (prob, s', r, done) outcome lists
            self.eps, self.s, self.t = self.lo, 0, 0

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.eps = float(self.np_random.uniform(self.lo, self.hi)) if self.hi > self.lo else self.lo
            cum = np.cumsum(self.mdp.mu0)
            self.s = int(min(np.searchsorted(cum, self.np_random.random() * cum[-1], side="right"),
                             self.mdp.n_states - 1))
            self.t = 0
            return self.s, {"eps": self.eps}

        def step(self, action):
            a = int(action)
            if self.np_random.random() < self.eps:  # the slip: a uniformly random action instead
                a = int(self.np_random.integers(self.mdp.n_actions))
            outcomes = self.table[self.s][a]
            probs = np.array([o[0] for o in outcomes], float)
            _, s2, reward, _ = outcomes[int(self.np_random.choice(len(outcomes), p=probs / probs.sum()))]
            done = bool(self.mdp.D[self.s, int(s2)] > 0)
            self.s, self.t = int(s2), self.t + 1
            return self.s, float(reward), done, self.t >= horizon and not done, {"eps": self.eps}

    return SlipEnv()


def register_slip_env(base: str, eps_low: float, eps_high: float, horizon: int) -> str:
    import gymnasium as gym

    env_id = slip_env_id(base, eps_low, eps_high, horizon)
    if env_id not in gym.registry:
        gym.register(id=env_id, entry_point=make_slip_env,
                     kwargs={"base": base, "eps_low": eps_low, "eps_high": eps_high, "horizon": horizon})
    return env_id
