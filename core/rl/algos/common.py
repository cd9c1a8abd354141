"""Helpers every algorithm file uses: device, seeding, RNG state for resume, eval + checkpoint cadence."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from mlx26.core.rl import checkpoint
from mlx26.core.rl.envs import make_env, resolve_env_id, space_info
from mlx26.core.rl.evaluation import evaluate
from mlx26.core.rl.hparams import TrainConfig, set_threads


def setup(cfg: TrainConfig) -> torch.device:
    """Threads, seeds (random, numpy, torch) and the torch device."""
    set_threads()
    random.seed(cfg.seed)
    np.random.seed(cfg.seed % 2**32)
    torch.manual_seed(cfg.seed)
    if cfg.device == "cuda" and not torch.cuda.is_available():
        raise ModuleNotFoundError("CUDA is not available to torch", name="cuda")
    return torch.device(cfg.device)


def env_for(cfg: TrainConfig, **kwargs: Any):
    env_id, _ = resolve_env_id(cfg.env)
    env = make_env(env_id, **kwargs)
    if cfg.reach_avoid:
        from mlx26.core.rl.reach_avoid.user_sets import wrap

        env = wrap(env, cfg.reach_avoid)
    return env


def rng_state() -> dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def base_state(cfg: TrainConfig, step: int, env) -> dict[str, Any]:
    return {"algo": cfg.algo, "env": cfg.env, "step": step, "seed": cfg.seed, "config": cfg.to_dict(),
            "space": space_info(env), "eval_episodes": cfg.eval_episodes}


def eval_points(cfg: TrainConfig, total: int) -> Callable[[int], bool]:
    """Whether to evaluate + checkpoint after ``step`` (every ``eval_every`` and at the end)."""
    every = cfg.eval_every

    def due(step: int) -> bool:
        return step == total or (every > 0 and step % every == 0)

    return due


def evaluate_and_save(cfg: TrainConfig, step: int, policy, eval_env, state: dict[str, Any]) -> Iterator[dict]:
    """Evaluate (seed = the run's seed) and, with ``cfg.out``, write the checkpoint."""
    result = evaluate(eval_env, policy, cfg.eval_episodes, cfg.seed)
    state["last_eval"] = result
    if cfg.out:
        checkpoint.save(cfg.out, state)
    yield {"step": step, "phase": "eval", **result}


def check_finite(step: int, **losses: float) -> None:
    for name, value in losses.items():
        if not np.isfinite(value):
            raise checkpoint.Divergence(f"training diverged at step {step}: {name} = {value}"
                                        + "; the last good checkpoint (if any) is kept")
