"""Helpers every algorithm file uses: device, seeding, RNG state for resume, eval + checkpoint cadence,
stopping on a signal (:func:`stop_now`, :func:`interrupt`) and rebuilding an env mid-episode
(:class:`EpisodeLog`), so that a resumed run continues exactly where the checkpoint was taken."""

from __future__ import annotations

import copy
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
    report(cfg, step, None, f"evaluating ({cfg.eval_episodes} episodes)")
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


def report(cfg: TrainConfig, step: int, total: int | None, status: str | None = None) -> None:
    """Tell ``cfg.progress`` (the CLI's progress bar; None: nobody) that the run is at ``step`` of ``total``
    (None: unchanged), optionally with what it is doing.

    Cheap enough to call every step: the callback throttles its own drawing."""
    if cfg.progress is not None:
        cfg.progress(step, total, status)


def stop_now(cfg: TrainConfig) -> bool:
    """Whether a stop was requested (SIGINT/SIGTERM through ``cfg.stop``)."""
    return cfg.stop is not None and bool(cfg.stop())


def interrupt(cfg: TrainConfig, step: int, total: int, state: dict[str, Any] | None) -> None:
    """Save ``state`` (None: the checkpoint of this step is already written) and raise ``Interrupted`` (exit 130)."""
    if cfg.out and state is not None:
        checkpoint.save(cfg.out, state)
    raise checkpoint.interrupted(cfg, step, total)


class EpisodeLog:
    """Wraps ``env.reset``/``env.step`` and remembers how the current episode began — the reset seed, or
    the env's RNG state just before an unseeded reset — and the actions taken since. :meth:`restore`
    replays them on a fresh env, which puts a gymnasium env (its dynamics depend only on its
    ``np_random`` and the actions) back in the state it had at the checkpoint: the resumed run then
    sees the same transitions as an uninterrupted one. The replayed observation is checked against the
    stored one; a mismatch (an env with hidden randomness) returns None and the caller starts afresh."""

    def __init__(self, env):
        self.env = env
        self.seed: int | None = None
        self.rng: dict | None = None
        self.actions: list[np.ndarray] = []

    def reset(self, seed: int | None = None):
        self.seed, self.actions = seed, []
        self.rng = None if seed is not None else copy.deepcopy(self.env.unwrapped.np_random.bit_generator.state)
        return self.env.reset(seed=seed)

    def step(self, action):
        self.actions.append(np.array(action, copy=True))
        return self.env.step(action)

    def state(self, obs) -> dict[str, Any]:
        actions = np.stack(self.actions) if self.actions else np.zeros(0)
        return {"seed": self.seed, "rng": self.rng, "actions": actions, "obs": np.array(obs, copy=True)}

    def restore(self, s: dict[str, Any]):
        """Replay the stored episode; the observation it ends on, or None when it does not match."""
        if s.get("seed") is None:
            self.env.reset(seed=0)  # creates the env's np_random, then put back the stored state
            self.env.unwrapped.np_random.bit_generator.state = s["rng"]
            obs, _ = self.env.reset()
        else:
            obs, _ = self.env.reset(seed=int(s["seed"]))
        for a in s["actions"]:
            obs, *_ = self.env.step(a.item() if np.ndim(a) == 0 else a)
        self.seed, self.rng, self.actions = s.get("seed"), s.get("rng"), [np.asarray(a) for a in s["actions"]]
        if np.array_equal(np.asarray(obs), np.asarray(s["obs"])):
            return obs
        import warnings

        warnings.warn("the env did not replay to the checkpoint's observation (randomness outside its np_random?); "
                      "resuming from a fresh episode, so the run will differ from an uninterrupted one", stacklevel=2)
        return None
