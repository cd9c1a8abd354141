"""``mlx26/ra-point``: a noisy 2-D point mass with a goal disc and hazard discs (our design for the
RAPC reconstruction of Pan et al., ICML 2026; the paper's own environments are not public).

State = position in the box [-1, 1]²; action a ∈ [-1, 1]² is a velocity command:
x' = clip(x + dt·a + σ·ε, -1, 1), ε ~ N(0, I). Reaching the goal disc G ends the episode
(``info["reached"]``); entering a hazard disc (the failure set F) ends it too
(``info["unsafe"]``). Each step costs ``dt·(1 + effort·‖a‖²)`` (time plus control effort),
reported as ``info["cost"]`` with reward = −cost. The default layout puts one large hazard on
the straight line from the start box to the goal, so the cheapest path skirts it and the noise
makes a close pass risky: the minimum-cost policy that meets P(RA) ≥ p keeps a margin that
grows with p.

:class:`PointModel` steps whole batches of states at once (Monte-Carlo checks, certificates);
:class:`RAPointEnv` is its gymnasium face (one state).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from mlx26.core.common.errors import InputError


@dataclass
class PointModel:
    goal: tuple[float, float, float] = (0.6, 0.6, 0.2)  # centre x, centre y, radius
    hazards: tuple[tuple[float, float, float], ...] = field(default_factory=lambda: ((0.0, 0.0, 0.35),))
    start: tuple[float, float, float] = (-0.6, -0.6, 0.1)  # centre x, centre y, half-width of the start box
    dt: float = 0.1
    noise: float = 0.03
    effort: float = 0.5

    def __post_init__(self) -> None:
        self.goal = tuple(float(v) for v in self.goal)  # type: ignore[assignment]
        self.hazards = tuple(tuple(float(v) for v in h) for h in self.hazards)  # type: ignore[assignment,misc]
        if self.goal[2] <= 0 or any(h[2] <= 0 for h in self.hazards):
            raise InputError("ra-point goal and hazard radii must be > 0")
        for h in self.hazards:
            if np.hypot(self.goal[0] - h[0], self.goal[1] - h[1]) < self.goal[2] + h[2]:
                raise InputError(f"ra-point goal disc {self.goal} intersects hazard {h}: G ∩ F must be empty")
        if self.dt <= 0 or self.noise < 0 or self.effort < 0:
            raise InputError("ra-point needs dt > 0, noise ≥ 0 and effort ≥ 0")
        corners = np.array(self.start[:2]) + self.start[2] * np.array([[-1, -1], [-1, 1], [1, -1], [1, 1], [0, 0]])
        if self.in_goal(corners).any() or self.in_hazard(corners).any():
            raise InputError("ra-point start box touches G or F", "move 'start' away from the goal and hazards")

    def in_goal(self, xy: np.ndarray) -> np.ndarray:
        xy = np.atleast_2d(xy)
        return np.hypot(xy[:, 0] - self.goal[0], xy[:, 1] - self.goal[1]) <= self.goal[2]

    def in_hazard(self, xy: np.ndarray) -> np.ndarray:
        xy = np.atleast_2d(xy)
        out = np.zeros(len(xy), dtype=bool)
        for cx, cy, rad in self.hazards:
            out |= np.hypot(xy[:, 0] - cx, xy[:, 1] - cy) <= rad
        return out

    def sample_start(self, rng: np.random.Generator, m: int | None = None) -> np.ndarray:
        shape = (2,) if m is None else (m, 2)
        return np.asarray(self.start[:2]) + rng.uniform(-self.start[2], self.start[2], size=shape)

    def cost(self, actions: np.ndarray) -> np.ndarray:
        a = np.clip(np.atleast_2d(actions), -1.0, 1.0)
        return self.dt * (1.0 + self.effort * (a ** 2).sum(axis=1))

    def step(self, xy: np.ndarray, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Next positions for a batch ``[m, 2]`` of positions and actions."""
        a = np.clip(np.atleast_2d(actions), -1.0, 1.0)
        nxt = np.atleast_2d(xy) + self.dt * a + self.noise * rng.standard_normal(a.shape)
        return np.clip(nxt, -1.0, 1.0)


def _env_base():
    import gymnasium

    return gymnasium.Env


class RAPointEnv(_env_base()):  # type: ignore[misc]
    """Gymnasium env over :class:`PointModel`: observation = position (2,), action = velocity (2,)."""

    metadata: dict = {"render_modes": []}

    def __init__(self, max_steps: int = 60, **model_kwargs) -> None:
        from gymnasium import spaces

        self.model = PointModel(**model_kwargs)
        if max_steps < 1:
            raise InputError(f"ra-point max_steps must be ≥ 1, got {max_steps}")
        self.max_steps = int(max_steps)
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self._xy, self._t = np.zeros(2), 0

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        given = (options or {}).get("xy")
        self._xy = self.model.sample_start(self.np_random) if given is None else np.asarray(given, dtype=np.float64)
        if self.model.in_goal(self._xy)[0] or self.model.in_hazard(self._xy)[0]:
            raise InputError(f"ra-point start {self._xy.tolist()} lies in G or F")
        self._t = 0
        return self._xy.astype(np.float32), {}

    def step(self, action):
        a = np.asarray(action, dtype=np.float64).reshape(1, 2)
        cost = float(self.model.cost(a)[0])
        self._xy = self.model.step(self._xy, a, self.np_random)[0]
        self._t += 1
        reached, unsafe = bool(self.model.in_goal(self._xy)[0]), bool(self.model.in_hazard(self._xy)[0])
        info = {"reached": reached, "unsafe": unsafe, "cost": cost, "success": float(reached)}
        return self._xy.astype(np.float32), -cost, reached or unsafe, self._t >= self.max_steps, info
