"""Algorithm registry: ``--algo NAME`` → a ``"module:function"`` string imported on first use.

Every registered module provides:

* ``Hyperparams`` — a dataclass of the algorithm's hyperparameters (defaults = the reference);
* ``train(cfg: TrainConfig) -> Iterator[dict]`` — runs and yields metric records;
* ``load_policy(checkpoint: dict, env) -> Policy`` — a deterministic-under-seed policy for
  evaluation (``mlx26 rl eval``).

Later issues register with :func:`register` (e.g. ``register("rapc", "mlx26.core.reach_avoid.rapc:train")``)
or by adding a line to ``ALGORITHMS`` in :mod:`.spec`. The lookup only imports the chosen module, so listing
names never imports torch.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from mlx26.core.common.errors import InputError, unknown_name
from mlx26.core.rl.spec import ALGORITHMS  # the built-in list, shared with the CLI's --help


def register(name: str, target: str) -> None:
    """Add an algorithm (``target`` = ``"package.module:train"``); re-registering replaces it."""
    if ":" not in target:
        raise InputError(f"registry target must look like 'module:function', got '{target}'")
    ALGORITHMS[name] = target


def names() -> list[str]:
    return sorted(ALGORITHMS)


def unknown(kind: str, name: str, choices: list[str]) -> InputError:
    """``ValueError(message, hint)`` with a did-you-mean suggestion (exit 2 through the CLI)."""
    return unknown_name(kind, name, choices, shown=12)


def module(name: str) -> ModuleType:
    """The module that implements ``name`` (imported now)."""
    if name not in ALGORITHMS:
        raise unknown("algorithm", name, names())
    return importlib.import_module(ALGORITHMS[name].partition(":")[0])


def train_fn(name: str):
    mod = module(name)
    return getattr(mod, ALGORITHMS[name].partition(":")[2])
