"""The environment interface and the registry of environments (``synthetic/*``, ``miniwob/*``).

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The paper runs
its agents on MiniWoB++-style web tasks; the small protocol below (``reset`` → observation,
``step`` → observation, reward, done) is our own, shared by the in-process simulator and the
Selenium driver, so recording, distillation and verification never know which one they drive.

An observation is ``{"task", "instruction", "fields", "elements"}`` (see :mod:`.dom`); reward
is +1 for a solved episode, -1 (MiniWoB: ≤ 0) for a failed one, 0 while it runs.
"""

from __future__ import annotations

from typing import Any, Protocol

from mlx26.core.common.errors import RunFailure, unknown_name


class InvalidAction(RunFailure):
    """An action that names an element missing from the current observation."""


class Env(Protocol):
    name: str

    def reset(self, seed: int, params: dict[str, Any] | None = None) -> dict[str, Any]: ...

    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool]: ...

    def observe(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


def env_names() -> list[str]:
    from mlx26.core.rpa_distill import miniwob_env, synthetic

    shipped = [t for t in miniwob_env.all_tasks() if t not in miniwob_env.TASKS]
    return ([f"synthetic/{n}" for n in synthetic.FAMILIES] + [f"miniwob/{n}" for n in miniwob_env.TASKS]
            + [f"miniwob/{n}" for n in shipped])


def family(name: str) -> str:
    """``synthetic/login-user`` → ``login-user`` (the oracle policies are keyed by family)."""
    return name.split("/", 1)[1] if "/" in name else name


def make_env(name: str, *, step_timeout: float = 10.0) -> Env:
    """The environment for ``name``; ValueError for unknown names (with a suggestion)."""
    kind, _, task = name.partition("/")
    if kind == "synthetic":
        from mlx26.core.rpa_distill import synthetic

        if task in synthetic.FAMILIES:
            return synthetic.SyntheticEnv(task)
    elif kind == "miniwob":
        from mlx26.core.rpa_distill import miniwob_env

        if task in miniwob_env.TASKS or task in miniwob_env.all_tasks():
            return miniwob_env.MiniWobEnv(task, step_timeout=step_timeout)
    raise unknown_name("env", name, env_names())
