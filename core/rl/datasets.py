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
from dataclasses import dataclass, field
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
    info: dict[str, np.ndarray] = field(default_factory=dict)  # qpos/qvel/button_states, aligned with rows

    def __len__(self) -> int:
        return len(self.actions)


def load(path: str | os.PathLike, *, obs_dim: int | None = None, rescale: bool = False,
         action_low: Any = None, action_high: Any = None, env=None) -> Transitions:
    """Load and validate a dataset in any format of :mod:`.formats`; problems are InputErrors naming what to fix.

    ``env`` (an OGBench single-task env) relabels rewards and masks from ``qpos``, as OGBench's loader does."""
    from mlx26.core.rl import formats

    p = Path(path)
    data, meta, fmt = formats.read(p)
    if env is not None:
        data = relabel_ogbench(path, env, data)
    if fmt == "ogbench" and "rewards" not in data:
        raise InputError(f"{path} is an OGBench file without rewards (official OGBench files have none)",
                         "train on the single-task env id (e.g. --env ogbench:cube-single-singletask-task2-v0), "
                         "whose task relabels rewards from qpos, as OGBench's loader does")
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise InputError(f"{path} is missing required key(s): {', '.join(missing)}",
                         f"an mlx26 RL dataset needs {', '.join(REQUIRED_KEYS)}; "
                         "generate one with `mlx26 rl data make` or convert one with `mlx26 rl data convert`")
    n = len(data["actions"])
    if n == 0:
        raise InputError(f"{path} holds no transitions")
    for k in (*REQUIRED_KEYS, *[k for k in formats.INFO_KEYS if k in data]):
        if len(data[k]) != n:
            raise InputError(f"{path}: '{k}' has {len(data[k])} rows but 'actions' has {n}")
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
                       scale, offset, {**meta, "format": fmt},
                       {k: data[k] for k in formats.INFO_KEYS if k in data})


def successes(t: Transitions) -> int:
    """Rows whose transition ends the task (mask 0: OGBench single-task success, or a true termination)."""
    return int((t.masks == 0).sum())


def reward_warning(t: Transitions, path: str | os.PathLike, relabelled: bool) -> str | None:
    """A warning when relabelling (or the data) leaves no rewarded success: the critic has nothing to learn from."""
    r = t.rewards
    if relabelled and successes(t) == 0:
        return (f"{path}: relabelling for this task leaves 0 successes in {len(t)} rows (every reward "
                f"{float(r.max()):.3g} or less): the task's reward never fires in the data")
    if len(r) and float(r.min()) == float(r.max()):
        return f"{path}: all {len(r)} rewards equal {float(r[0]):.4g}: the data carries no reward signal"
    return None


def relabel_ogbench(path: str | os.PathLike, env, data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Recompute rewards/masks for an OGBench single-task env from qpos, as OGBench's loader does."""
    from ogbench.relabel_utils import relabel_dataset

    if "qpos" not in data or "qvel" not in data:
        # Without qpos the file's own rewards are the data-collection env's, not this task's:
        # training on them optimises the wrong objective without any visible sign.
        raise InputError(f"{path} has no qpos/qvel, which the single-task env {env.spec.id if env.spec else ''} "
                         "needs to relabel rewards and masks for its task (as OGBench's loader does)",
                         "regenerate it with `mlx26 rl data make --env ogbench:<…-singletask-…>`, which stores "
                         "qpos/qvel, or train on the goal-conditioned env id")
    info = {k: data[k] for k in ("qpos", "qvel", "button_states") if k in data}
    # OGBench's single-task envs reward the state *before* the action (success_timing="pre") and
    # its loader aligns qpos with observations: relabel row t from qpos[t], exactly as it does.
    relabel_dataset(env.spec.id if env.spec else "", env, info)
    return {**data, "rewards": info["rewards"].astype(np.float32), "masks": info["masks"].astype(np.float32)}


def info(path: str | os.PathLike, env=None) -> dict[str, Any]:
    """Summary of a dataset in any known format (keys, shapes, episodes, rewards, successes, metadata).

    With ``env`` (an OGBench single-task env) rewards are relabelled first, as training does."""
    from mlx26.core.rl import formats

    p = Path(path)
    data, meta, fmt = formats.read(p)
    if env is not None:
        data = relabel_ogbench(path, env, data)
    result: dict[str, Any] = {"path": str(p), "format": fmt, "label": meta.get("label", "unlabelled"),
                              "env": meta.get("env"), "policy": meta.get("policy"),
                              "noise": meta.get("noise"), "seed": meta.get("seed")}
    n = len(data["actions"]) if "actions" in data else 0
    result["rows"] = n
    if "terminals" in data:
        result["episodes"] = int(np.asarray(data["terminals"]).sum())
    if "rewards" in data and n:
        r = np.asarray(data["rewards"], np.float64)
        result.update(reward_mean=float(r.mean()), reward_min=float(r.min()), reward_max=float(r.max()))
    if "masks" in data and n:
        result["successes"] = int((np.asarray(data["masks"]) == 0).sum())
    if "actions" in data and n:
        a = np.asarray(data["actions"], np.float64)
        result.update(action_min=float(a.min()), action_max=float(a.max()))
    result["missing_keys"] = [k for k in REQUIRED_KEYS if k not in data]
    fatal = [k for k in result["missing_keys"] if not (fmt == "ogbench" and k in ("rewards", "masks"))]
    if fatal:
        raise InputError(f"{path} is missing required key(s): {', '.join(fatal)}",
                         f"an RL dataset needs {', '.join(REQUIRED_KEYS)} (or an OGBench/D4RL/Minari layout)")
    # training refuses these; say so here rather than print a row count that is not the whole story
    result["length_mismatch"] = [k for k in REQUIRED_KEYS if k in data and len(data[k]) != n]
    warning = None
    if not result["missing_keys"] and not result["length_mismatch"] and n:
        t = Transitions(*(np.asarray(data[k]) for k in ("observations", "actions", "next_observations",
                                                          "rewards", "masks", "terminals")),
                        np.ones(1), np.zeros(1), meta)
        warning = reward_warning(t, path, relabelled=env is not None)
    elif fmt == "ogbench" and "rewards" not in data:
        warning = "official OGBench files carry no rewards: give --env <…-singletask-…> to relabel them"
    result["warning"] = warning
    result["keys"] = {k: list(np.shape(v)) for k, v in data.items()}
    vp = formats.val_path(p)
    result["val_file"] = str(vp) if vp is not None else None
    if vp is not None:
        vdata = formats.read(vp)[0]
        for k in ("observations", "actions"):
            if k in data and k in vdata and np.shape(vdata[k])[1:] != np.shape(data[k])[1:]:
                raise InputError(f"{vp}: '{k}' rows have shape {list(np.shape(vdata[k])[1:])} but {p} has "
                                 f"{list(np.shape(data[k])[1:])}", "the -val file must come from the same env")
        result["val_rows"] = len(vdata["actions"]) if "actions" in vdata else 0
    return result


def convert(src: str | os.PathLike, out: str | os.PathLike, env=None) -> dict[str, Any]:
    """Write ``src`` (OGBench / D4RL / Minari / mlx26) as an mlx26 ``.npz`` (+ ``-val.npz`` when ``src`` has one).

    The rows are exactly those training reads from ``src``, so both train identically."""
    from mlx26.core.rl import formats

    written = []
    for source, target in [(src, out), (formats.val_path(src), val_path(out))]:
        if source is None:
            continue
        data, meta, fmt = formats.read(source)
        if env is not None:
            data = relabel_ogbench(source, env, data)
        if "rewards" not in data:
            raise InputError(f"{source} is an OGBench file without rewards (official OGBench files have none)",
                             "give --env ogbench:<…-singletask-taskN-…> to relabel them for that task")
        keep = (*REQUIRED_KEYS, *formats.INFO_KEYS)
        arrays = {k: np.asarray(data[k]) for k in keep if k in data}
        save(target, arrays, {**{k: v for k, v in meta.items() if k != "label"}, "label": f"converted-{fmt}",
                              "source": str(source), "source_format": fmt,
                              "relabelled_for": env.spec.id if env is not None and env.spec else None})
        written.append({"file": str(target), "rows": len(arrays["actions"]), "source_format": fmt})
    return {"written": written}
