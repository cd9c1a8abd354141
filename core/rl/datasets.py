"""Offline datasets in the OGBench ``.npz`` schema: files, loading and validation.

The file layout is OGBench's own (``data_gen_scripts/generate_manipspace.py`` in
seohongpark/ogbench): one row per environment step, ``observations[t]`` and ``actions[t]``,
``terminals[t] = 1`` on the last row of each episode, and for manipulation envs ``qpos/qvel``
of the state *before* the step (OGBench's single-task relabelling reads them). Beside the
train file ``D.npz`` a ``D-val.npz`` holds one tenth as many extra steps, as OGBench does, so
``ogbench.make_env_and_datasets(name, dataset_path="D.npz")`` loads both.

We also store the processed keys ``next_observations`` (the true next observation, also for the
last row), ``rewards`` and ``masks`` (0 after a true termination), so our loader can use every
row; OGBench's loader ignores them and drops each episode's last row instead. ``meta`` (a JSON
string) labels the data ``local-oracle-v0`` and records env, policy, noise and seed.
Generation lives in :mod:`mlx26.core.rl.datagen`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.common.files import atomic_path

LABEL = "local-oracle-v0"
REQUIRED_KEYS = ("observations", "actions", "terminals", "next_observations", "rewards", "masks")


# --------------------------------------------------------------------------- files

def val_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p.with_name(p.name[: -len(".npz")] + "-val.npz") if p.name.endswith(".npz") else p.with_name(p.name + "-val")


def save(path: str | os.PathLike, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write ``arrays`` + ``meta`` (JSON string, no pickle) atomically."""
    with atomic_path(path, suffix=".tmp.npz") as tmp:  # .npz: numpy.savez appends it otherwise
        np.savez(tmp, **{**arrays, "meta": np.array(json.dumps(meta))})  # type: ignore[arg-type]


def read_meta(file) -> dict[str, Any]:
    if "meta" not in file.files:
        return {}
    try:
        return json.loads(str(file["meta"]))
    except (ValueError, TypeError):
        return {}


@dataclass
class Transitions:
    """Flat transitions ready for training (actions in [−1, 1] after optional rescaling)."""

    observations: np.ndarray
    actions: np.ndarray
    next_observations: np.ndarray
    rewards: np.ndarray
    masks: np.ndarray
    terminals: np.ndarray
    action_scale: np.ndarray
    action_offset: np.ndarray
    meta: dict[str, Any]

    def __len__(self) -> int:
        return len(self.actions)


def load(path: str | os.PathLike, *, obs_dim: int | None = None, rescale: bool = False,
         action_low: Any = None, action_high: Any = None) -> Transitions:
    """Load and validate a dataset; every problem is a ValueError naming what to fix."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"dataset not found: {path}", "make one with `mlx26 rl data make … --out D.npz`")
    file = _open_npz(p, path)
    with file:
        missing = [k for k in REQUIRED_KEYS if k not in file.files]
        if missing:
            raise InputError(f"{path} is missing required key(s): {', '.join(missing)}",
                             f"an mlx26 RL dataset needs {', '.join(REQUIRED_KEYS)}; "
                             "generate one with `mlx26 rl data make`")
        data = {k: np.asarray(file[k]) for k in REQUIRED_KEYS}
        meta = read_meta(file)
    n = len(data["actions"])
    if n == 0:
        raise InputError(f"{path} holds no transitions")
    for k, v in data.items():
        if len(v) != n:
            raise InputError(f"{path}: '{k}' has {len(v)} rows but 'actions' has {n}")
    obs = data["observations"].reshape(n, -1).astype(np.float32)
    nxt = data["next_observations"].reshape(n, -1).astype(np.float32)
    act = data["actions"].reshape(n, -1).astype(np.float32)
    if obs_dim is not None and obs.shape[1] != obs_dim:
        raise InputError(f"{path}: observations have dimension {obs.shape[1]} but the env's is {obs_dim}",
                         "was the dataset made for another --env?")
    bad = np.zeros(n, dtype=bool)
    for k in REQUIRED_KEYS:
        v = data[k].reshape(n, -1).astype(np.float64)
        bad |= ~np.isfinite(v).all(axis=1)
    if bad.any():
        idx = np.flatnonzero(bad)
        shown = ", ".join(map(str, idx[:10])) + (" …" if len(idx) > 10 else "")
        raise InputError(f"{path}: {len(idx)} row(s) contain NaN or inf: rows {shown}",
                         "drop or repair those rows before training")
    scale, offset = np.ones(act.shape[1], np.float32), np.zeros(act.shape[1], np.float32)
    outside = np.abs(act) > 1.0 + 1e-6
    if outside.any():
        if not rescale:
            rows = np.flatnonzero(outside.any(axis=1))
            raise InputError(f"{path}: {len(rows)} action row(s) lie outside [-1, 1] "
                             f"(max |a| = {float(np.abs(act).max()):.4g}; first rows {', '.join(map(str, rows[:5]))})",
                             "pass --rescale to map the env's action bounds (or the data's range) onto [-1, 1]")
        lo = np.asarray(action_low, np.float64) if action_low is not None else None
        hi = np.asarray(action_high, np.float64) if action_high is not None else None
        if lo is not None and hi is not None and np.isfinite(lo).all() and np.isfinite(hi).all():
            scale, offset = ((hi - lo) / 2).astype(np.float32), ((hi + lo) / 2).astype(np.float32)
        else:
            scale = np.maximum(np.abs(act).max(axis=0), 1e-6).astype(np.float32)
        act = np.clip((act - offset) / scale, -1.0, 1.0)
    return Transitions(obs, act, nxt, data["rewards"].reshape(n).astype(np.float32),
                       data["masks"].reshape(n).astype(np.float32), data["terminals"].reshape(n).astype(np.float32),
                       scale, offset, meta)


def relabel_ogbench(path: str | os.PathLike, env, transitions: Transitions) -> Transitions:
    """Recompute rewards/masks for an OGBench single-task env from qpos, as OGBench's loader does."""
    from ogbench.relabel_utils import relabel_dataset

    with np.load(path, allow_pickle=False) as file:
        if "qpos" not in file.files or "qvel" not in file.files:
            # Without qpos the file's own rewards are the data-collection env's, not this task's:
            # training on them optimises the wrong objective without any visible sign.
            raise InputError(f"{path} has no qpos/qvel, which the single-task env {env.spec.id if env.spec else ''} "
                             "needs to relabel rewards and masks for its task (as OGBench's loader does)",
                             "regenerate it with `mlx26 rl data make --env ogbench:<…-singletask-…>`, which stores "
                             "qpos/qvel, or train on the goal-conditioned env id")
        data = {"qpos": np.asarray(file["qpos"]), "qvel": np.asarray(file["qvel"])}
        if "button_states" in file.files:
            data["button_states"] = np.asarray(file["button_states"])
    # OGBench's single-task envs reward the state *before* the action (success_timing="pre") and
    # its loader aligns qpos with observations: relabel row t from qpos[t], exactly as it does.
    nxt = dict(data)
    relabel_dataset(env.spec.id if env.spec else "", env, nxt)
    transitions.rewards = nxt["rewards"].astype(np.float32)
    transitions.masks = nxt["masks"].astype(np.float32)
    return transitions


def _open_npz(p: Path, path: str | os.PathLike) -> Any:
    try:
        file = np.load(p, allow_pickle=False)
    except Exception as exc:  # zipfile / format errors differ by numpy version
        if "pickled" in str(exc):  # numpy's text would suggest the unsafe allow_pickle=True
            raise InputError(f"{path} is not an .npz dataset (it holds pickled objects, which are never "
                             "loaded).") from None
        raise InputError(f"cannot read {path} as .npz: {' '.join(str(exc).split())}") from exc
    if not hasattr(file, "files"):  # a bare .npy array
        raise InputError(f"{path} is a single .npy array, not an .npz dataset.",
                         "make one with `mlx26 rl data make … --out D.npz`")
    return file


def info(path: str | os.PathLike) -> dict[str, Any]:
    """Summary of a dataset file (keys, shapes, episodes, reward/action ranges, metadata)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"dataset not found: {path}")
    with _open_npz(p, path) as file:
        keys = {k: list(file[k].shape) for k in file.files if k != "meta"}
        meta = read_meta(file)
        result: dict[str, Any] = {"path": str(p), "label": meta.get("label", "unlabelled"),
                                  "env": meta.get("env"), "policy": meta.get("policy"),
                                  "noise": meta.get("noise"), "seed": meta.get("seed")}
        n = len(file["actions"]) if "actions" in file.files else 0
        result["rows"] = n
        if "terminals" in file.files:
            result["episodes"] = int(np.asarray(file["terminals"]).sum())
        if "rewards" in file.files and n:
            r = np.asarray(file["rewards"], np.float64)
            result.update(reward_mean=float(r.mean()), reward_min=float(r.min()), reward_max=float(r.max()))
        if "actions" in file.files and n:
            a = np.asarray(file["actions"], np.float64)
            result.update(action_min=float(a.min()), action_max=float(a.max()))
        result["missing_keys"] = [k for k in REQUIRED_KEYS if k not in file.files]
        # training refuses these; say so here rather than print a row count that is not the whole story
        result["length_mismatch"] = [k for k in REQUIRED_KEYS if k in keys and keys[k][:1] != [n]]
        result["keys"] = keys
    vp = val_path(p)
    result["val_file"] = str(vp) if vp.is_file() else None
    return result
