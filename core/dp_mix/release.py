"""``dp-mix noise`` as a batch function over (index, value) records (issue 41: ``--engine local|ray``).

Noise is drawn per block of :data:`BLOCK` consecutive released values: block ``b`` (values
``b·BLOCK … b·BLOCK+BLOCK-1``) draws its noise in one vectorised call from the generator
``record_rng(root, b)`` (``mlx26.core.common.engine``). A value's noise therefore depends only on
the root seed, its index and the number of values, never on the batch it runs in or the engine,
so ``--engine local`` and ``--engine ray`` release the same numbers for a fixed ``--seed``, and
the draws stay vectorised (one generator per record would cost ~30 µs a value). Without
``--seed`` the root is 128 bits of OS entropy (``secrets.randbits``), as ``secure_rng`` was.
"""

from __future__ import annotations

import functools
import secrets
from typing import Any

BLOCK = 1024


def root_seed(seed: int | None) -> int:
    """``seed`` (tests only: seeded noise is not private), else 128 fresh bits of OS entropy."""
    return secrets.randbits(128) if seed is None else int(seed)


def noisy_values(batch: list[tuple[int, float]], *, mech: Any, root: int, n: int) -> list[float]:
    """``value + noise`` for each ``(index, value)`` of the batch (``n``: how many values the release has)."""
    from mlx26.core.common.engine import record_rng
    from mlx26.core.dp_mix.sampling import sample

    draws: dict[int, Any] = {}
    out = []
    for index, value in batch:
        block = index // BLOCK
        if block not in draws:
            draws[block] = sample(mech, min(BLOCK, n - block * BLOCK), record_rng(root, block))
        out.append(float(value + draws[block][index % BLOCK]))
    return out


def secure_values(batch: list[tuple[int, float]], *, mechanism: str, eps: float, delta: float, sensitivity: float,
                  objective: str) -> list[float]:
    """``--secure``: each value snapped to the grid plus exact grid noise from os.urandom (never reproducible)."""
    import numpy as np
    from mlx26.core.dp_mix.sampling import draw_snapped, snap_query

    table = _secure_table(mechanism, float(eps), float(delta), float(sensitivity), objective)
    values = np.asarray([v for _, v in batch], float)
    return [float(x) for x in snap_query(values, table.grid) + draw_snapped(table, values.size)]


@functools.lru_cache(maxsize=8)
def _secure_table(mechanism: str, eps: float, delta: float, sensitivity: float, objective: str) -> Any:
    """The checked grid table (or exact sampler) of one release: built once per process, not per batch
    (about 1 s each for multi at small δ). It holds no randomness: every draw reads os.urandom."""
    from mlx26.core.dp_mix.secure import secure_mechanism

    return secure_mechanism(mechanism, eps, delta, sensitivity, objective)[1]
