"""Reach-avoid problems on a user's gymnasium env (``train rl --goal/--unsafe/--cost``; RAPC reconstruction).

Each of G (``--goal``) and F (``--unsafe``) is given as

* a Python entry point ``module:function`` — ``function(obs) -> bool`` (the module must be importable,
  e.g. on ``PYTHONPATH``; it is the user's own code and runs as such), or
* boxes on the observation: ``box:I=LO..HI[,I=LO..HI…]`` is {obs : LO ≤ obs[I] ≤ HI for each listed I}
  (``inf``/``-inf`` allowed); several boxes joined by ``;`` are their union, e.g. CartPole's unsafe
  set ``box:2=0.15..inf;box:2=-inf..-0.15`` (pole angle beyond ±0.15 rad).

The step cost (``--cost``) is a number (a constant per step; default 1) or ``module:function`` —
``function(obs, action) -> float`` ≥ 0. The spec is stored in the run's config, so ``rl eval`` and
resumed runs rebuild the same problem (:func:`wrap`).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError

KEYS = ("goal", "unsafe", "cost")


def _entry_point(text: str, what: str) -> Callable:
    module, _, name = text.partition(":")
    try:
        fn = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise InputError(f"--{what} {text}: cannot import module '{module}' ({exc})",
                         "the module must be importable (e.g. on PYTHONPATH)") from None
    except AttributeError:
        raise InputError(f"--{what} {text}: module '{module}' has no '{name}'") from None
    if not callable(fn):
        raise InputError(f"--{what} {text} is not a function")
    return fn


def _float(text: str, spec: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"--{what} {spec}: '{text}' is not a number") from None
    if math.isnan(value):
        raise InputError(f"--{what} {spec}: NaN bound")
    return value


def parse_boxes(spec: str, what: str) -> list[list[tuple[int, float, float]]]:
    boxes = []
    for part in spec.split(";"):
        part = part.strip()
        if not part.startswith("box:"):
            raise InputError(f"--{what} {spec}: each part must start with 'box:'",
                             "e.g. --goal 'box:0=0.45..inf' or --unsafe 'box:2=0.15..inf;box:2=-inf..-0.15'")
        terms = []
        for term in part[4:].split(","):
            idx, eq, rng = term.partition("=")
            lo, dots, hi = rng.partition("..")
            if not eq or not dots or not idx.strip().isdigit():
                raise InputError(f"--{what} {spec}: '{term}' must look like I=LO..HI (I an observation index)")
            a, b = _float(lo, spec, what), _float(hi, spec, what)
            if a > b:
                raise InputError(f"--{what} {spec}: empty interval {a}..{b}")
            terms.append((int(idx), a, b))
        boxes.append(terms)
    return boxes


def _set_fn(spec: str, what: str, obs_dim: int) -> Callable:
    if spec.startswith("box:"):
        boxes = parse_boxes(spec, what)
        too_big = [i for box in boxes for i, _, _ in box if i >= obs_dim]
        if too_big:
            raise InputError(f"--{what} {spec}: observation index {too_big[0]} ≥ the env's dimension {obs_dim}")

        def inside(obs) -> bool:
            x = np.asarray(obs, dtype=np.float64).reshape(-1)
            return any(all(lo <= x[i] <= hi for i, lo, hi in box) for box in boxes)

        return inside
    if ":" not in spec:
        raise InputError(f"--{what} '{spec}' is neither module:function nor box:I=LO..HI")
    return _entry_point(spec, what)


def _cost_fn(spec: str | float | None) -> Callable:
    if spec is None:
        return lambda obs, action: 1.0
    text = str(spec)
    try:
        value = float(text)
    except ValueError:
        if ":" not in text:
            raise InputError(f"--cost '{text}' is neither a number nor module:function") from None
        fn = _entry_point(text, "cost")
        return lambda obs, action: float(fn(obs, action))
    if not (value >= 0 and math.isfinite(value)):
        raise InputError(f"--cost must be a finite number ≥ 0, got {text}")
    return lambda obs, action: value


def normalize(spec: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The stored form ({goal, unsafe, cost}) or None; goal and unsafe come together."""
    if not spec or not any(spec.get(k) is not None for k in KEYS):
        return None
    if spec.get("goal") is None or spec.get("unsafe") is None:
        raise InputError("--goal and --unsafe define the reach-avoid problem together: give both",
                         "--cost is optional (default: 1 per step)")
    return {k: spec.get(k) for k in KEYS}


def wrap(env, spec: Mapping[str, Any] | None):
    """``env`` with ``info["reached"/"unsafe"/"cost"]`` from ``spec`` (unchanged when spec is None)."""
    if not spec:
        return env
    from mlx26.core.rl.reach_avoid.wrappers import ReachAvoidInfo

    obs_dim = int(np.prod(env.observation_space.shape))
    return ReachAvoidInfo(env, _set_fn(str(spec["goal"]), "goal", obs_dim),
                          _set_fn(str(spec["unsafe"]), "unsafe", obs_dim), _cost_fn(spec.get("cost")))
