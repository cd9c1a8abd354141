"""One place that seeds every random number generator a command uses (CONTRIBUTING.md, Seeds)."""

from __future__ import annotations

import random
import sys


def seed_everything(seed: int) -> None:
    """Seed ``random``, numpy and torch (torch only if already imported; never imports it)."""
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed % 2**32)
    except ImportError:
        pass
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


def numpy_rng(seed: int):
    """A fresh ``numpy.random.Generator`` for ``seed``: prefer passing this over global state."""
    import numpy as np

    return np.random.default_rng(seed)
