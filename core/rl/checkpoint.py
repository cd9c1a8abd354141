"""Checkpoints: ``<out>/checkpoint.pt`` (torch.save of a plain dict), written atomically and only
when every tensor in it is finite, so a diverging run keeps its last good checkpoint."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.common.files import atomic_path
from mlx26.core.common.interrupts import Interrupted
from mlx26.core.common.interrupts import interrupted as _interrupted

NAME = "checkpoint.pt"


class Divergence(RunFailure):
    """Training produced non-finite values (exit 1); the last good checkpoint is kept."""


def _tensors(obj: Any):
    import torch

    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors(v)


def all_finite(state: dict[str, Any]) -> bool:
    import torch

    return all(bool(torch.isfinite(t).all()) for t in _tensors(state) if t.is_floating_point())


def save(out: str | os.PathLike, state: dict[str, Any]) -> Path:
    import torch

    if not all_finite(state.get("models", {})):
        raise Divergence(f"non-finite network weights at step {state.get('step')}; checkpoint not written")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / NAME
    with atomic_path(target) as tmp:
        torch.save(state, tmp)
    return target


def safe_torch_load(path: str | os.PathLike) -> Any:
    """``torch.load`` that never runs code from the file: tensors, plain containers and numpy arrays only."""
    import numpy as np
    import numpy.dtypes as np_dtypes
    import torch

    allowed = [bytes, np._core.multiarray._reconstruct, np._core.multiarray.scalar, np.ndarray, np.dtype,
               *(getattr(np_dtypes, name) for name in dir(np_dtypes) if name.endswith("DType"))]
    with torch.serialization.safe_globals(allowed):
        return torch.load(path, map_location="cpu", weights_only=True)


def load(path: str | os.PathLike) -> dict[str, Any]:
    p = Path(path)
    if p.is_dir():
        p = p / NAME
    if not p.is_file():
        raise InputError(f"no checkpoint at {path}", "give the `mlx26 train rl --out` folder of a run")
    try:
        state = safe_torch_load(p)
    except Exception as exc:  # torch raises several types for a bad file
        if "Weights only load failed" in str(exc):  # torch's text would suggest the unsafe way round it
            raise InputError(f"{p} is not an mlx26 RL checkpoint: it holds Python objects, which are never "
                             "loaded (they could run code).") from None
        raise InputError(f"cannot read checkpoint {p}: {' '.join(str(exc).split())[:200]}") from exc
    if not isinstance(state, dict) or "algo" not in state or "models" not in state:
        raise InputError(f"{p} is not an mlx26 RL checkpoint")
    return state


def saved_step(out: str | os.PathLike | None) -> int | None:
    """The step of the checkpoint in run folder ``out`` (None when there is none)."""
    if not out or not (Path(out) / NAME).is_file():
        return None
    return safe_torch_load(Path(out) / NAME).get("step")


def interrupted(cfg: Any, step: int, total: int) -> Interrupted:
    """The exit-130 error for a run stopped at ``step``: where its checkpoint is and how to continue."""
    out = cfg.out or "."
    return _interrupted(step, total, saved_step(cfg.out), out, f"mlx26 train rl --out {out} --resume")
