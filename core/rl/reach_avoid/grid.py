"""``mlx26/ra-grid``: a slippery tabular reach-avoid grid with exact P(RA) (our design, built for
the RAPC reconstruction of Pan et al., ICML 2026; the paper's own environments are not public).

Cells: ``S`` start, ``G`` goal (set G), ``#`` hazard (failure set F), ``~`` mud (costs extra),
``.`` free. Actions 0..3 = up, right, down, left; with probability ``slip`` the agent moves in one
of the two perpendicular directions instead (half each); moves off the grid stay in place.
Entering G or F ends the episode (``info["reached"]`` / ``info["unsafe"]``); every step costs
1 (+ ``mud_cost`` when leaving a mud cell), reported as ``info["cost"]`` with reward = −cost.
Observations are one-hot cell vectors.

Exact quantities (:class:`GridModel`): the transition tensor ``P [n, A, n]`` with G ∪ F
absorbing, and P(RA) of a policy by one linear solve on the states that can reach G while
avoiding F (the others have P(RA) = 0 — this picks the least solution).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlx26.core.common.errors import InputError

DEFAULT_LAYOUT = (
    "S..~..",
    ".#.~#.",
    ".#....",
    "...#~.",
    "~#....",
    "...#.G",
)
MOVES = np.array([[-1, 0], [0, 1], [1, 0], [0, -1]])


@dataclass
class GridModel:
    layout: tuple[str, ...]
    slip: float = 0.2
    mud_cost: float = 2.0

    def __post_init__(self) -> None:
        rows = [str(r) for r in self.layout]
        if not rows or len({len(r) for r in rows}) != 1:
            raise InputError("ra-grid layout must be a non-empty list of equal-length rows")
        bad = sorted({c for r in rows for c in r} - set("SG#~."))
        if bad:
            raise InputError(f"ra-grid layout has unknown cell(s) {bad}", "use S G # ~ .")
        if not 0 <= self.slip < 1:
            raise InputError(f"ra-grid slip must be in [0, 1), got {self.slip}")
        if not 0 <= self.mud_cost < float("inf"):  # also refuses NaN
            raise InputError(f"ra-grid mud_cost must be finite and ≥ 0, got {self.mud_cost}")
        self.layout = tuple(rows)
        self.h, self.w = len(rows), len(rows[0])
        cells = np.array([list(r) for r in rows]).reshape(-1)
        self.goal = cells == "G"
        self.unsafe = cells == "#"
        self.mud = cells == "~"
        starts = np.flatnonzero(cells == "S")
        if not self.goal.any():
            raise InputError("ra-grid layout needs at least one goal cell 'G'")
        if len(starts) != 1:
            raise InputError("ra-grid layout needs exactly one start cell 'S'")
        self.start = int(starts[0])
        self.n, self.n_actions = self.h * self.w, 4
        self.P = self._transitions()

    @property
    def r(self) -> np.ndarray:
        return self.goal.astype(np.float64)

    @property
    def s(self) -> np.ndarray:
        return (~self.unsafe).astype(np.float64)

    @property
    def absorbing(self) -> np.ndarray:
        return self.goal | self.unsafe

    def cost(self) -> np.ndarray:
        """Cost of leaving each cell (1 per step, + mud_cost on mud) ``[n]``."""
        return 1.0 + self.mud_cost * self.mud

    def _move(self, cell: int, direction: int) -> int:
        row, col = divmod(cell, self.w)
        nr, nc = row + MOVES[direction][0], col + MOVES[direction][1]
        if 0 <= nr < self.h and 0 <= nc < self.w:
            return int(nr * self.w + nc)
        return cell

    def _transitions(self) -> np.ndarray:
        P = np.zeros((self.n, self.n_actions, self.n))
        for x in range(self.n):
            for a in range(self.n_actions):
                if self.absorbing[x]:
                    P[x, a, x] = 1.0
                    continue
                P[x, a, self._move(x, a)] += 1 - self.slip
                for side in ((a + 1) % 4, (a + 3) % 4):
                    P[x, a, self._move(x, side)] += self.slip / 2
        return P

    def policy_matrix(self, policy: np.ndarray) -> np.ndarray:
        """``[n, n]`` transitions of a deterministic ``[n]`` or stochastic ``[n, A]`` policy."""
        pi = np.asarray(policy)
        if pi.ndim == 1:
            pi = np.eye(self.n_actions)[pi.astype(int)]
        return np.einsum("xa,xay->xy", pi, self.P)

    def p_ra(self, policy: np.ndarray) -> np.ndarray:
        """Exact P(reach G before F) from every cell under ``policy`` (linear solve)."""
        Pp = self.policy_matrix(policy)
        # states that can reach G without touching F (graph search backwards from G)
        can = self.goal.copy()
        while True:
            new = can | ((~self.unsafe) & ((Pp[:, can] > 0).any(axis=1)))
            if (new == can).all():
                break
            can = new
        v = np.zeros(self.n)
        v[self.goal] = 1.0
        inner = np.flatnonzero(can & ~self.goal)
        if len(inner):
            A = np.eye(len(inner)) - Pp[np.ix_(inner, inner)]
            b = Pp[np.ix_(inner, np.flatnonzero(self.goal))].sum(axis=1)
            v[inner] = np.linalg.solve(A, b)
        return v

    def max_p_ra(self, tol: float = 1e-13) -> np.ndarray:
        """The best achievable P(RA) per cell (value iteration of B_1 from 0: the least fixed point)."""
        from mlx26.core.rl.reach_avoid.operator import fixed_point

        return fixed_point(self.P, self.r, self.s, 1.0, tol=tol)

    def sample_next(self, cells: np.ndarray, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Vectorised next cells for arrays of cells and actions."""
        probs = self.P[cells, actions]  # [m, n]
        u = rng.random(len(cells))[:, None]
        return np.minimum((probs.cumsum(axis=1) < u).sum(axis=1), self.n - 1)


def _env_base():
    import gymnasium

    return gymnasium.Env


class RAGridEnv(_env_base()):  # type: ignore[misc]
    """The gymnasium face of :class:`GridModel` (one-hot observations, 4 discrete actions)."""

    metadata: dict = {"render_modes": []}

    def __init__(self, layout=DEFAULT_LAYOUT, slip: float = 0.2, mud_cost: float = 2.0, max_steps: int = 100) -> None:
        from gymnasium import spaces

        if isinstance(layout, str):
            layout = tuple(r for r in layout.replace("/", "\n").splitlines() if r.strip())
        self.model = GridModel(tuple(layout), slip, mud_cost)
        if max_steps < 1:
            raise InputError(f"ra-grid max_steps must be ≥ 1, got {max_steps}")
        self.max_steps = int(max_steps)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self.model.n,), dtype=np.float32)
        self.action_space = spaces.Discrete(4)
        self._cell, self._t = self.model.start, 0

    def _obs(self) -> np.ndarray:
        o = np.zeros(self.model.n, dtype=np.float32)
        o[self._cell] = 1.0
        return o

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        self._cell = int((options or {}).get("cell", self.model.start))
        if self.model.absorbing[self._cell]:
            raise InputError(f"ra-grid start cell {self._cell} lies in G or F")
        self._t = 0
        return self._obs(), {"cell": self._cell}

    def step(self, action):
        m = self.model
        cost = float(m.cost()[self._cell])
        self._cell = int(m.sample_next(np.array([self._cell]), np.array([int(action)]), self.np_random)[0])
        self._t += 1
        reached, unsafe = bool(m.goal[self._cell]), bool(m.unsafe[self._cell])
        info = {"reached": reached, "unsafe": unsafe, "cost": cost, "success": float(reached), "cell": self._cell}
        return self._obs(), -cost, reached or unsafe, self._t >= self.max_steps, info
