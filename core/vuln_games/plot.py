"""ER / ITP curves of training records as a PNG (matplotlib, headless). Part of the vulnerability-games
reconstruction (arXiv 2602.12124); figures are labelled SYNTHETIC, as every game here is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def curves(records: Sequence[dict[str, Any]], path: str, title: str, key: str = "policy") -> None:
    from mlx26.core.common.errors import BackendMissing

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise BackendMissing(f"--plot needs matplotlib ({exc}).", hint="pip install 'mlx26[vuln-games]'") from exc
    series: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if "er" in r and "step" in r:
            series.setdefault(str(r.get(key) or r.get("variant") or "run"), []).append(r)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for name, rs in series.items():
        for ax, metric in zip(axes, ("er", "itp"), strict=True):
            ax.plot([r["step"] for r in rs], [r[metric] for r in rs], label=name)
    for ax, metric in zip(axes, ("ER (exploit rate)", "ITP (intended task)"), strict=True):
        ax.set_xlabel("step")
        ax.set_title(metric)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{title} — SYNTHETIC game", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
