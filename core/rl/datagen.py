"""Generate offline datasets locally (``mlx26 rl data make``), in the schema of :mod:`.datasets`.

OGBench and D4RL download their datasets at run time, which cannot work here. Policies:
``oracle`` — OGBench's scripted plan oracles for manipulation envs (``cube``, ``scene``,
``puzzle``; its "play" data), the behaviour mixture for ``mlx26/toy-modes``; ``noisy`` —
OGBench's Markov oracles with Gaussian action noise ξ·(1, 1, 1, 3, 10), ξ ~ U(0, σ) per episode
(its "noisy" data), elsewhere a correlated random walk; ``random`` — uniform actions. The
OGBench collection loop follows ``data_gen_scripts/generate_manipspace.py`` (seohongpark/ogbench).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.rl.datasets import LABEL
from mlx26.core.rl.spec import DATA_POLICIES as POLICIES

_MANIP = ("cube", "scene", "puzzle")


def _ogbench_base(name: str) -> str:
    """``cube-single-singletask-task2-v0`` → ``cube-single-v0`` (the data-collection env)."""
    parts = name.split("-")
    if "singletask" in parts:
        pos = parts.index("singletask")
        parts = parts[:pos] + parts[-1:]
    return "-".join(parts)


def _is_manip(name: str) -> bool:
    return any(name.startswith(p) or f"-{p}" in name for p in _MANIP) and "visual" not in name


def generate(env_id: str, policy: str = "oracle", noise: float = 0.1, steps: int = 100_000, seed: int = 0,
             episode_length: int | None = None, val_fraction: float = 0.1,
             progress=None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, Any]]:
    """``(train, val, meta)`` arrays in the OGBench schema; ``steps`` train rows (+ ``val_fraction``)."""
    from mlx26.core.rl.envs import OGBENCH_PREFIX, resolve_env_id

    if policy not in POLICIES:
        from mlx26.core.rl.registry import unknown

        raise unknown("policy", policy, list(POLICIES))
    if steps < 1:
        raise InputError(f"--steps must be ≥ 1, got {steps}")
    if not (noise >= 0 and np.isfinite(noise)):
        raise InputError(f"--noise must be a finite number ≥ 0, got {noise}")
    env_id, _ = resolve_env_id(env_id)
    n_val = int(round(steps * val_fraction))
    rng = np.random.default_rng(seed)
    meta = {"label": LABEL, "env": env_id, "policy": policy, "noise": noise, "seed": seed,
            "train_steps": steps, "val_steps": n_val, "schema": "ogbench", "generator": "mlx26 rl data make"}
    if env_id.startswith(OGBENCH_PREFIX) and _is_manip(env_id[len(OGBENCH_PREFIX):]):
        rows, extra = _collect_ogbench(env_id[len(OGBENCH_PREFIX):], policy, noise, steps + n_val, rng,
                                       episode_length, progress)
        meta.update(extra)
    else:
        if policy == "oracle" and env_id != "mlx26/toy-modes":
            raise InputError(f"no scripted oracle for '{env_id}'",
                             "use --policy random or --policy noisy (oracles: OGBench manipulation, toy-modes)")
        rows = _collect_generic(env_id, policy, noise, steps + n_val, rng, episode_length, progress)
    meta["episode_length"] = episode_length
    train, val = _split(rows, steps)
    return train, val, meta


def _split(rows: dict[str, np.ndarray], n_train: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """First ``n_train`` rows train, the rest validation; both end on an episode boundary."""
    train = {k: v[:n_train] for k, v in rows.items()}
    val = {k: v[n_train:] for k, v in rows.items()}
    for part in (train, val):
        if len(part["terminals"]):
            part["terminals"][-1] = 1.0
    return train, val


def _new_rows() -> dict[str, list]:
    return {k: [] for k in ("observations", "actions", "terminals", "next_observations", "rewards", "masks")}


def _finish(rows: dict[str, list]) -> dict[str, np.ndarray]:
    out = {}
    for k, v in rows.items():
        out[k] = np.asarray(v, dtype=np.float32)
    return out


def _collect_generic(env_id, policy, noise, n, rng, episode_length, progress) -> dict[str, np.ndarray]:
    from mlx26.core.rl.envs import make_env

    env = make_env(env_id)
    space = env.action_space
    discrete = hasattr(space, "n")
    space.seed(int(rng.integers(2**31)))
    rows = _new_rows()
    toy = env_id == "mlx26/toy-modes"
    episode = 0
    while len(rows["actions"]) < n:
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        prev = None
        t = 0
        while True:
            if toy and policy in ("oracle", "noisy"):
                action = env.behaviour(1, rng)[0]
                if policy == "noisy":
                    action = np.clip(action + rng.normal(0, noise, action.shape), -1, 1).astype(np.float32)
            elif policy == "random" or prev is None:
                action = rng.integers(space.n) if discrete else rng.uniform(space.low, space.high).astype(np.float32)
            elif discrete:
                action = prev if rng.random() > noise else rng.integers(space.n)
            else:
                span = (space.high - space.low) / 2
                action = np.clip(prev + rng.normal(0, noise, prev.shape) * span, space.low, space.high)
            prev = action
            next_obs, reward, terminated, truncated, _ = env.step(action)
            t += 1
            end = terminated or truncated or (episode_length is not None and t >= episode_length)
            end = end or len(rows["actions"]) + 1 >= n
            rows["observations"].append(np.asarray(obs, dtype=np.float32).reshape(-1))
            rows["actions"].append(np.atleast_1d(np.asarray(action, dtype=np.float32)))
            rows["next_observations"].append(np.asarray(next_obs, dtype=np.float32).reshape(-1))
            rows["rewards"].append(float(reward))
            rows["masks"].append(0.0 if terminated else 1.0)
            rows["terminals"].append(1.0 if end else 0.0)
            if progress is not None:
                progress(1)
            obs = next_obs
            if end:
                break
        episode += 1
    return _finish(rows)


def _collect_ogbench(name, policy, noise, n, rng, episode_length, progress):
    """Run OGBench's scripted oracles as its own generator does (seeded through numpy's global RNG)."""
    import gymnasium
    import ogbench.manipspace  # noqa: F401
    from ogbench.manipspace.oracles.markov.button_markov import ButtonMarkovOracle
    from ogbench.manipspace.oracles.markov.cube_markov import CubeMarkovOracle
    from ogbench.manipspace.oracles.markov.drawer_markov import DrawerMarkovOracle
    from ogbench.manipspace.oracles.markov.window_markov import WindowMarkovOracle
    from ogbench.manipspace.oracles.plan.button_plan import ButtonPlanOracle
    from ogbench.manipspace.oracles.plan.cube_plan import CubePlanOracle
    from ogbench.manipspace.oracles.plan.drawer_plan import DrawerPlanOracle
    from ogbench.manipspace.oracles.plan.window_plan import WindowPlanOracle

    base = _ogbench_base(name)
    length = episode_length or 1001
    env = gymnasium.make(base, terminate_at_goal=False, mode="data_collection", max_episode_steps=length)
    np.random.seed(int(rng.integers(2**31)))  # the oracles draw from numpy's global RNG
    if policy == "noisy":
        mk = {"cube": lambda: CubeMarkovOracle(env=env, min_norm=0.4, **({"max_step": 100} if "scene" in base else {})),
              "button": lambda: ButtonMarkovOracle(env=env, min_norm=0.4, **({"gripper_always_closed": True}
                                                                              if "puzzle" in base else {})),
              "drawer": lambda: DrawerMarkovOracle(env=env, min_norm=0.4),
              "window": lambda: WindowMarkovOracle(env=env, min_norm=0.4)}
    else:
        kw = {"noise": noise, "noise_smoothing": 0.5}
        mk = {"cube": lambda: CubePlanOracle(env=env, **kw),
              "button": lambda: ButtonPlanOracle(env=env, **kw, **({"gripper_always_closed": True}
                                                                    if "puzzle" in base else {})),
              "drawer": lambda: DrawerPlanOracle(env=env, **kw),
              "window": lambda: WindowPlanOracle(env=env, **kw)}
    kinds = {"cube": ("cube",), "scene": ("cube", "button", "drawer", "window"), "puzzle": ("button",)}
    kind = next(k for k in kinds if k in base)
    agents = {k: mk[k]() for k in kinds[kind]}
    rows = _new_rows()
    rows["qpos"], rows["qvel"] = [], []
    has_buttons = hasattr(env.unwrapped, "_cur_button_states")
    if has_buttons:
        rows["button_states"] = []
    p_stack = {"single": 0.0, "double": 0.125, "triple": 0.2, "quadruple": 0.3}
    stack = next((v for k, v in p_stack.items() if k in base), 0.5)
    while len(rows["actions"]) < n:
        ob, info = env.reset(seed=int(rng.integers(2**31)))
        xi = rng.uniform(0, noise) if policy == "noisy" else 0.0
        agent = agents[info["privileged/target_task"]]
        agent.reset(ob, info)
        done = False
        while not done:
            if policy == "random":
                action = rng.uniform(-1, 1, env.action_space.shape)
            else:
                action = np.asarray(agent.select_action(ob, info), dtype=np.float64)
                if policy == "noisy":
                    action = action + rng.normal(0, [xi, xi, xi, xi * 3, xi * 10], action.shape)
            action = np.clip(action, -1, 1)
            next_ob, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated or len(rows["actions"]) + 1 >= n
            if policy != "random" and agent.done:
                agent_ob, agent_info = env.unwrapped.set_new_target(p_stack=stack)
                agent = agents[agent_info["privileged/target_task"]]
                agent.reset(agent_ob, agent_info)
            rows["observations"].append(np.asarray(ob, dtype=np.float32))
            rows["actions"].append(action.astype(np.float32))
            rows["next_observations"].append(np.asarray(next_ob, dtype=np.float32))
            rows["rewards"].append(float(reward))
            rows["masks"].append(0.0 if terminated else 1.0)
            rows["terminals"].append(1.0 if done else 0.0)
            rows["qpos"].append(np.asarray(info["prev_qpos"], dtype=np.float32))
            rows["qvel"].append(np.asarray(info["prev_qvel"], dtype=np.float32))
            if has_buttons:
                rows["button_states"].append(info["prev_button_states"])
            if progress is not None:
                progress(1)
            ob = next_ob
    out = _finish({k: v for k, v in rows.items() if k != "button_states"})
    if has_buttons:
        out["button_states"] = np.asarray(rows["button_states"], dtype=np.int64)
    return out, {"data_env": base, "oracle": "plan" if policy == "oracle" else "markov"}


