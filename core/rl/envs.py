"""Environments for ``mlx26 train rl``: gymnasium ids, OGBench (``ogbench:<id>``) and our own.

* any gymnasium id (MuJoCo ones need ``gymnasium[mujoco]``; absence → exit 3 with a hint);
* retired toy-text ids are mapped to their current versions with a notice
  (``Taxi-v3`` → ``Taxi-v4``, ``CliffWalking-v0`` → ``CliffWalking-v1``);
* ``ogbench:<id>`` makes an OGBench environment through the ``ogbench`` package (environments
  only: its dataset download is never called; see :mod:`mlx26.core.rl.datasets`);
* ``mlx26/<name>`` (alias: the bare name) for envs shipped here, registered in ``OWN_ENVS``
  (``toy-modes`` now; later issues add theirs with :func:`register_env`).

Unknown ids fail with "Did you mean …?" (a ValueError → exit 2).
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError, unknown_name

# Retired toy-text ids → the version gymnasium ships now.
TOY_TEXT_RENAMES: dict[str, str] = {
    "Taxi-v3": "Taxi-v4",
    "CliffWalking-v0": "CliffWalking-v1",
}

# Own envs: name (used as mlx26/<name>) → "module:Class" (kwargs go to the constructor).
OWN_ENVS: dict[str, str] = {
    "toy-modes": "mlx26.core.rl.toy_modes:ToyModesEnv",
    "ra-grid": "mlx26.core.rl.reach_avoid.grid:RAGridEnv",
    "ra-point": "mlx26.core.rl.reach_avoid.point:RAPointEnv",
    "ra-reacher": "mlx26.core.rl.reach_avoid.mujoco:make_ra_reacher",
    "ra-hopper": "mlx26.core.rl.reach_avoid.mujoco:make_ra_hopper",
}

OGBENCH_PREFIX = "ogbench:"
_DATASET_WORDS = ("play", "noisy", "stitch", "navigate", "explore")


def register_env(name: str, target: str) -> None:
    """Register an own env as ``mlx26/<name>`` (``target`` = ``"module:Class"``)."""
    OWN_ENVS[name.removeprefix("mlx26/")] = target


def _gym():
    try:
        import gymnasium
    except ImportError as exc:
        raise ModuleNotFoundError("gymnasium is needed for RL environments", name="gymnasium") from exc
    return gymnasium


def resolve_env_id(env_id: str) -> tuple[str, str | None]:
    """``(canonical id, notice or None)``; raises ValueError for unknown ids."""
    if not env_id or not env_id.strip():
        raise InputError("--env must name an environment", "e.g. --env CartPole-v1 or --env mlx26/toy-modes")
    own = env_id.removeprefix("mlx26/")
    if own in OWN_ENVS:
        return f"mlx26/{own}", None
    if env_id.startswith("mlx26/"):
        raise _unknown(env_id, [f"mlx26/{n}" for n in OWN_ENVS])
    if env_id.startswith(OGBENCH_PREFIX):
        return OGBENCH_PREFIX + _resolve_ogbench(env_id[len(OGBENCH_PREFIX):]), None
    gym = _gym()
    if env_id in TOY_TEXT_RENAMES and env_id not in gym.registry:
        new = TOY_TEXT_RENAMES[env_id]
        return new, f"Notice: '{env_id}' is retired in gymnasium {gym.__version__}; using '{new}'."
    if env_id in gym.registry:
        return env_id, None
    choices = list(gym.registry) + [f"mlx26/{n}" for n in OWN_ENVS] + list(TOY_TEXT_RENAMES)
    raise _unknown(env_id, choices, hint_ogbench=True)


def _resolve_ogbench(name: str) -> str:
    _require_ogbench()
    gym = _gym()
    if name in gym.registry:
        return name
    parts = name.split("-")
    stripped = "-".join(p for p in parts if p not in _DATASET_WORDS)
    if stripped in gym.registry:  # a dataset name (cube-single-play-singletask-…) → its env
        return stripped
    ogb = [k for k in gym.registry if _is_ogbench_id(k)]
    raise _unknown(OGBENCH_PREFIX + name, [OGBENCH_PREFIX + k for k in ogb])


def _is_ogbench_id(key: str) -> bool:
    spec = _gym().registry[key]
    return "ogbench" in str(spec.entry_point)


def _require_ogbench():
    try:
        import ogbench  # noqa: F401  (registers the OGBench envs with gymnasium)
    except ImportError as exc:
        raise ModuleNotFoundError("ogbench is needed for ogbench: environments", name="ogbench") from exc


def _unknown(env_id: str, choices: list[str], hint_ogbench: bool = False) -> InputError:
    hint = "any gymnasium id, mlx26/" + "|".join(OWN_ENVS)
    if hint_ogbench:
        hint += ", or ogbench:<id> (e.g. ogbench:cube-single-singletask-task2-v0)"
    return unknown_name("env", env_id, choices, hint)


def make_env(env_id: str, **kwargs: Any):
    """A gymnasium env for an id (Discrete observations one-hot). Missing MuJoCo/OGBench → exit 3."""
    env_id, _ = resolve_env_id(env_id)
    if env_id.startswith("mlx26/"):
        import importlib

        module, _, cls = OWN_ENVS[env_id.removeprefix("mlx26/")].partition(":")
        return getattr(importlib.import_module(module), cls)(**kwargs)
    gym = _gym()
    name = env_id.removeprefix(OGBENCH_PREFIX)
    if env_id.startswith(OGBENCH_PREFIX):
        _require_ogbench()
    try:
        env = gym.make(name, **kwargs)
    except gym.error.DependencyNotInstalled as exc:
        missing = "mujoco" if "mujoco" in str(exc).lower() else "gymnasium"
        raise ModuleNotFoundError(f"{name} needs an optional dependency: {exc}", name=missing) from exc
    if isinstance(env.observation_space, gym.spaces.Discrete):  # toy-text states → one-hot vectors
        env = gym.wrappers.FlattenObservation(env)
    return env


def space_info(env) -> dict[str, Any]:
    """Observation/action shapes and bounds in plain Python (for checks and checkpoints)."""
    obs, act = env.observation_space, env.action_space
    info: dict[str, Any] = {"obs_shape": list(getattr(obs, "shape", ()) or ())}
    if hasattr(act, "n"):
        info.update(discrete=True, n_actions=int(act.n))
    else:
        info.update(discrete=False, action_dim=int(act.shape[0]), action_low=act.low.tolist(),
                    action_high=act.high.tolist())
    return info
