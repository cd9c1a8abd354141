"""Hyperparameters as dataclasses; ``--set key=value`` / config-file overrides with type checks.

Each algorithm's ``Hyperparams`` dataclass documents its fields (the cleanrl habit: a
dataclass of hyperparameters with comments). :func:`apply_overrides` converts strings to the
field's type (bool, int, float, str, tuple of ints) and refuses unknown keys with a
did-you-mean, so a typo fails before any training starts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mlx26.core.common.errors import InputError, unknown_name

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass
class TrainConfig:
    """What every ``train(cfg)`` receives: the run's common options plus the algorithm's ``hp``."""

    algo: str
    env: str
    hp: Any
    steps: int = 10_000
    seed: int = 0
    eval_every: int = 0  # 0 = only at the end
    eval_episodes: int = 50  # the FQL reference's default
    device: str = "cpu"
    dataset: str | None = None
    rescale: bool = False  # rescale dataset actions into [-1, 1] instead of refusing them
    out: str | None = None  # run folder (checkpoints); None = no files
    resume_state: dict | None = None  # a loaded checkpoint to continue from
    warnings: list = field(default_factory=list)  # found while checking the config (e.g. no reward signal)
    env_defaults: dict = field(default_factory=dict)  # per-env reference values applied (e.g. FQL's α table)
    reach_avoid: dict | None = None  # --goal/--unsafe/--cost on a user env (see reach_avoid.user_sets)
    stop: Any = None  # a no-argument callable polled between steps (SIGINT/SIGTERM): save a checkpoint and stop
    progress: Any = None  # a callable (step, total, status) told "at env/gradient step N" (a display; not stored)

    def to_dict(self) -> dict[str, Any]:
        return {"algo": self.algo, "env": self.env, "dataset": self.dataset, "steps": self.steps,
                "seed": self.seed, "eval_every": self.eval_every, "eval_episodes": self.eval_episodes,
                "device": self.device, "rescale": self.rescale, "hp": dataclasses.asdict(self.hp),
                "env_defaults": dict(self.env_defaults), "reach_avoid": self.reach_avoid}


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """``["lr=3e-4", "hidden=256,256"]`` → ``{"lr": "3e-4", "hidden": "256,256"}``."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise InputError(f"--set expects key=value, got '{item}'", "e.g. --set lr=1e-3")
        out[key] = value.strip()
    return out


def _convert(name: str, value: Any, default: Any) -> Any:
    if not isinstance(value, str):
        if isinstance(default, tuple) and isinstance(value, (list, tuple)):
            return tuple(int(v) for v in value)
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if default is not None and not isinstance(value, type(default)):
            raise InputError(f"hyperparameter '{name}' must be {type(default).__name__}, got {value!r}")
        return value
    text = value.strip()
    try:
        if isinstance(default, bool):
            if text.lower() in _TRUE:
                return True
            if text.lower() in _FALSE:
                return False
            raise ValueError
        if isinstance(default, int):
            number = float(text)
            if not number.is_integer():
                raise ValueError
            return int(number)
        if isinstance(default, float):
            number = float(text)
            if math.isnan(number):
                raise ValueError
            return number
        if isinstance(default, tuple):
            return tuple(int(v) for v in text.replace("x", ",").split(",") if v.strip())
    except ValueError:
        kind = "true/false" if isinstance(default, bool) else type(default).__name__
        if isinstance(default, tuple):
            kind = "comma-separated integers"
        raise InputError(f"hyperparameter '{name}' must be {kind}, got '{value}'") from None
    return text


def apply_overrides(hp: Any, overrides: Mapping[str, Any]) -> Any:
    """A copy of dataclass ``hp`` with ``overrides`` applied (unknown keys are errors)."""
    fields = {f.name: f for f in dataclasses.fields(hp)}
    changes: dict[str, Any] = {}
    for raw_key, value in overrides.items():
        key = str(raw_key).replace("-", "_")
        if key not in fields:
            err = unknown_name("hyperparameter", key, fields, "valid keys: " + ", ".join(sorted(fields)))
            raise InputError(err.message.replace(f"'{key}'.", f"'{raw_key}' for "
                                                 f"{type(hp).__module__.rsplit('.', 1)[-1]}.", 1), err.hint)
        changes[key] = _convert(key, value, getattr(hp, key))
    new = dataclasses.replace(hp, **changes)
    if hasattr(new, "resolve"):
        new = new.resolve()
    if hasattr(new, "validate"):
        new.validate()
    return new


def hp_help(hp_cls: type) -> list[dict[str, Any]]:
    """Rows (name, default, doc) describing a Hyperparams dataclass."""
    rows = []
    for f in dataclasses.fields(hp_cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc,operator]
        rows.append({"name": f.name, "default": default, "doc": f.metadata.get("doc", "")})
    return rows


def doc(default: Any, text: str) -> Any:
    """A dataclass field with a default and a one-line description."""
    if isinstance(default, (list, dict, set)):
        return field(default_factory=lambda: default, metadata={"doc": text})
    return field(default=default, metadata={"doc": text})


def set_threads() -> int:
    """Training loops use one torch thread unless ``MLX26_THREADS`` says otherwise (shared CPUs)."""
    import torch
    from mlx26.core.common.threads import apply_torch_threads

    return apply_torch_threads(torch)
