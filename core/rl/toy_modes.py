"""``mlx26/toy-modes``: a 2-D continuous bandit with four behaviour modes, one of highest value.

Built for fast tests of offline flow-policy methods (our own design, not from a paper).
One-step episodes: the observation is a constant 2-vector, the action a ∈ [−1, 1]²; the
behaviour policy picks one of four modes (the corners (±0.5, ±0.5)) with probability 0.9/4
each and adds N(0, 0.05²) noise, and with probability 0.1 acts uniformly on the square (a thin
background, symmetric across the modes' quadrants, so the critic sees the space between the
modes). The reward is smooth and peaks at the best mode c* = (0.5, 0.5):

    r(a) = 1 − ‖a − c*‖² / 4     (mode values 1.0, 0.75, 0.75, 0.5)

so a behaviour-cloning policy puts ≈ 25% of its samples in each mode, while a policy that
follows ∇ₐQ should move its mass into the best mode and stay on the data support.
"""

from __future__ import annotations

import numpy as np

CENTERS = np.array([[0.5, 0.5], [-0.5, 0.5], [0.5, -0.5], [-0.5, -0.5]], dtype=np.float64)
BEST = 0
MODE_STD = 0.05
BACKGROUND = 0.1
OBS = np.zeros(2, dtype=np.float32)


def reward(actions: np.ndarray) -> np.ndarray:
    a = np.asarray(actions, dtype=np.float64)
    return 1.0 - ((a - CENTERS[BEST]) ** 2).sum(-1) / 4.0


def mode_values() -> np.ndarray:
    return reward(CENTERS)


def behaviour_actions(n: int, rng: np.random.Generator, std: float = MODE_STD,
                      background: float = BACKGROUND) -> tuple[np.ndarray, np.ndarray]:
    """``(actions [n, 2] clipped to [−1, 1], nearest-mode index [n])`` from the behaviour policy."""
    modes = rng.integers(0, len(CENTERS), size=n)
    actions = CENTERS[modes] + rng.normal(0.0, std, size=(n, 2))
    uniform = rng.random(n) < background
    actions[uniform] = rng.uniform(-1.0, 1.0, size=(int(uniform.sum()), 2))
    actions = np.clip(actions, -1.0, 1.0)
    return actions.astype(np.float32), assign_modes(actions)


def assign_modes(actions: np.ndarray) -> np.ndarray:
    """Index of the nearest mode centre for each action."""
    a = np.asarray(actions, dtype=np.float64)
    return np.argmin(((a[:, None, :] - CENTERS[None]) ** 2).sum(-1), axis=1)


def mode_shares(actions: np.ndarray) -> list[float]:
    counts = np.bincount(assign_modes(actions), minlength=len(CENTERS))
    return (counts / max(1, len(actions))).tolist()


def _env_base():
    import gymnasium

    return gymnasium.Env


class ToyModesEnv(_env_base()):  # type: ignore[misc]
    """The gymnasium face of the bandit: ``reset`` → constant obs; one ``step`` ends the episode."""

    metadata: dict = {"render_modes": []}

    def __init__(self) -> None:
        from gymnasium import spaces

        self.observation_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        return OBS.copy(), {}

    def step(self, action):
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(2), -1.0, 1.0)
        mode = int(assign_modes(a[None])[0])
        r = float(reward(a[None])[0])
        return OBS.copy(), r, True, False, {"mode": mode, "success": float(mode == BEST)}

    def behaviour(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Actions of the data-collecting (behaviour) policy, used by ``rl data make --policy oracle``."""
        return behaviour_actions(n, rng)[0]
