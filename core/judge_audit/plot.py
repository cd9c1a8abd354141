"""PNG figures of ``mlx26 judge-audit`` (ROC per slice, the ReliableBench curve); matplotlib loads here only.

Part of the reconstruction of Schwinn et al. (arXiv 2603.06594), whose ROC and ReliableBench figures
these mirror; a figure from SIMULATED data says so in its title.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mlx26.core.judge_audit.metrics import roc_curve
from mlx26.core.judge_audit.table import AuditTable, cell_keys


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def roc(table: AuditTable, group: Sequence[str], path: str) -> None:
    """One panel per judge, one ROC curve per value of the crossed ``group`` columns."""
    plt = _plt()
    names = list(table.judges)
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 4), squeeze=False)
    keys = cell_keys(table, list(group))
    for ax, judge in zip(axes[0], names, strict=True):
        valid = table.valid(judge)
        for key in sorted(set(keys[valid])):
            m = valid & (keys == key)
            y = table.human[m]
            if y.all() or not y.any():
                continue
            fpr, tpr = roc_curve(y, table.judges[judge][m])
            ax.plot(fpr, tpr, label=str(key))
        ax.plot([0, 1], [0, 1], "k:", lw=0.8)
        ax.set(title=judge, xlabel="FPR", ylabel="TPR")
        ax.legend(fontsize=7)
    fig.suptitle(("SIMULATED data — " if table.simulated else "") + "ROC per " + (" × ".join(group) or "table"))
    fig.tight_layout()
    fig.savefig(path, dpi=100, format="png")
    plt.close(fig)


def reliable(curve: list[dict[str, Any]], path: str, simulated: bool) -> None:
    plt = _plt()
    k = np.array([r["k"] for r in curve])
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(k, [r["mean_accuracy"] for r in curve], label="mean over behaviours")
    ax.plot(k, [np.nan if r["item_accuracy"] is None else r["item_accuracy"] for r in curve], label="over items")
    ax.invert_xaxis()
    ax.set(xlabel="behaviours kept (k)", ylabel="mean judge accuracy",
           title=("SIMULATED data — " if simulated else "") + "ReliableBench")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100, format="png")
    plt.close(fig)
