"""Learning curves of training runs to PNG (``mlx26 rl plot``): mean ± confidence band over seeds per group.

matplotlib (Agg backend, no display). Envs shipped here (``mlx26/…``) are labelled *synthetic* in
the title, as every figure of synthetic data must be. No paper.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from mlx26.core.common.files import atomic_path


def draw(curves: Mapping[str, Mapping[str, list]], metric: str, out: str | os.PathLike, *, envs: Sequence[str],
         level: float = 0.95, title: str | None = None) -> dict[str, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for name, c in curves.items():
        line, = ax.plot(c["step"], c["mean"], marker="o" if len(c["step"]) < 12 else None, ms=3,
                        label=f"{name} (n = {c['n']} seeds)")
        lo = [m if v is None else v for v, m in zip(c["ci_low"], c["mean"], strict=True)]
        hi = [m if v is None else v for v, m in zip(c["ci_high"], c["mean"], strict=True)]
        ax.fill_between(c["step"], lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    env_text = ", ".join(sorted(set(envs)))
    synthetic = any(e.startswith("mlx26/") for e in envs)
    ax.set_title(title or f"{metric} on {env_text}{' (synthetic env)' if synthetic else ''}", fontsize=10)
    ax.set_xlabel("step")
    ax.set_ylabel(f"{metric} (mean ± {int(level * 100)}% t-CI over seeds)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(out, suffix=".tmp.png") as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
    return {"png": str(out), "metric": metric, "groups": {k: v["n"] for k, v in curves.items()},
            "synthetic": synthetic}
