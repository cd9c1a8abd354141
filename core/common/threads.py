"""How many CPU threads torch may use: ``MLX26_THREADS``, else 1 on machines with ≤ 2 cores.

On the project's 2-core machines, shared with other jobs, letting torch use both cores
made small-model training about 5× slower than one thread (contention between intra-op
threads and everything else running). So the default there is one thread; larger machines
keep torch's own default. ``MLX26_THREADS=N`` overrides both. torch is never imported here:
``apply_torch_threads`` takes the module.
"""

from __future__ import annotations

import os

from mlx26.core.common.errors import InputError

ENV_VAR = "MLX26_THREADS"


def torch_threads() -> int | None:
    """The thread count to use, or None to keep torch's default (more than 2 cores, no override)."""
    raw = os.environ.get(ENV_VAR, "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise InputError(f"{ENV_VAR} must be a positive integer, not '{raw}'.") from None
        if value < 1:
            raise InputError(f"{ENV_VAR} must be a positive integer, not '{raw}'.")
        return value
    return 1 if (os.cpu_count() or 1) <= 2 else None


def apply_torch_threads(torch) -> int:
    """Set ``torch.set_num_threads`` from :func:`torch_threads`; return the count now in force."""
    n = torch_threads()
    if n is not None and torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return int(torch.get_num_threads())
